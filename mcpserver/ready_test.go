package mcpserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/internal/stacktest"
	"github.com/dsh-go/dsh/mcpserver"
	"github.com/dsh-go/dsh/tool"
)

// TestCallAfterAbortCallsIsCut: once AbortCalls has cut the calls (a
// drain's timeout, a stop), the sessions are about to end: a call that
// arrives in between is cut too, and returns `Error: command aborted`
// rather than run a command nobody will get the result of.
func TestCallAfterAbortCallsIsCut(t *testing.T) {
	dir := t.TempDir()
	s := newServer(t, dir)
	cs := connect(t, s)
	if got := texts(call(t, cs, "bash", map[string]any{"command": "echo before", "description": "d"})); got[0] != "before\n" {
		t.Fatalf("before AbortCalls: %q", got)
	}
	s.AbortCalls()
	res := call(t, cs, "bash", map[string]any{"command": "touch ran; echo ran", "description": "d"})
	if got := texts(res); !res.IsError || got[0] != "Error: command aborted" {
		t.Errorf("a call after AbortCalls: %q, want Error: command aborted", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the command of a call after AbortCalls ran: %v", err)
	}
}

// TestUnknownToolIsObserved: a call of a tool the server does not list
// gets the SDK's error, and the registry's observers (the audit log, the
// metrics) see it as an invalid call: every call writes a line.
func TestUnknownToolIsObserved(t *testing.T) {
	st := stacktest.Must(t, config.Local{Grace: 300 * time.Millisecond})
	var mu sync.Mutex
	var seen []tool.Result
	st.Tools.Observe(func(_ context.Context, call tool.Call, res tool.Result) {
		if call.Name == "nosuch" {
			mu.Lock()
			seen = append(seen, res)
			mu.Unlock()
		}
	})
	s := mcpserver.New(mcpserver.Options{Tools: st.Tools, Prompt: st.Prompt, Version: "test", Workdir: t.TempDir()})
	t.Cleanup(s.Close)
	cs := connect(t, s)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nosuch", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), `unknown tool "nosuch"`) {
		t.Errorf("an unknown tool: %v, want the SDK's error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0].Ruling.Outcome != tool.OutcomeInvalid || seen[0].Executed {
		t.Errorf("observed %+v, want one invalid call", seen)
	}
}

// TestHealthServerClosesUnauthenticated: on the health listener a
// keep-alive GET /healthz is answered with Connection: close and its
// connection ends; a GET /metrics with the token keeps its connection for
// the next scrape; a connection that sends nothing is closed once more
// than maxPending wait.
func TestHealthServerClosesUnauthenticated(t *testing.T) {
	const token = "0123456789abcdef-token"
	s := newServer(t, t.TempDir())
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("m 1\n")) })
	hs := s.HealthServer(metrics, token, false, 2)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	addr := ln.Addr().String()

	c := dialTCP(t, addr)
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := readAll(t, c); !strings.HasPrefix(got, "HTTP/1.1 200") || !strings.Contains(got, "\r\nConnection: close\r\n") {
		t.Errorf("GET /healthz read %q; want 200, Connection: close, then the end", got)
	}

	c = dialTCP(t, addr)
	r := bufio.NewReader(c)
	for i := range 2 {
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("scrape %d on one connection: %v", i+1, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Errorf("scrape %d: %d, close %v; want 200 on a connection kept alive", i+1, resp.StatusCode, resp.Close)
		}
	}

	silent := dialTCP(t, addr)
	dialTCP(t, addr)
	dialTCP(t, addr)
	if got := readAll(t, silent); got != "" {
		t.Errorf("the oldest silent connection read %q, want its end", got)
	}
}

// dialTCP connects to addr; the test's end closes the connection.
func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readAll reads c to its end, which must come within proctest.Wait.
func readAll(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(proctest.Wait))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Errorf("reading to the connection's end: %v (read %q)", err, got)
	}
	return string(got)
}
