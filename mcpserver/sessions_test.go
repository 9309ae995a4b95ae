package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/mcpserver"
)

// TestSessionsReleaseMemory: after 50 HTTP sessions open, call and close,
// the server's heap and goroutines are back where they were (the RSS of a
// Go process stays higher: the runtime keeps freed pages for a while).
func TestSessionsReleaseMemory(t *testing.T) {
	s := newServer(t, "")
	h, _ := s.Handler(mcpserver.HTTPOptions{NoAuth: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	measure := func() (uint64, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, runtime.NumGoroutine()
	}
	round := func() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "b"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
				if err != nil {
					t.Error(err)
					return
				}
				for range 5 {
					cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true", "description": "d"}})
				}
				cs.Close()
			})
		}
		wg.Wait()
		http.DefaultClient.CloseIdleConnections()
		time.Sleep(500 * time.Millisecond)
	}
	round()
	h0, g0 := measure()
	round()
	// Goroutines of closed sessions may still be returning: look again
	// for a while before calling them left.
	h1, g1 := measure()
	for deadline := time.Now().Add(proctest.Scale(5 * time.Second)); (g1 > g0 || h1 > h0+2<<20) && time.Now().Before(deadline); h1, g1 = measure() {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("heap %d KiB → %d KiB; goroutines %d → %d", h0/1024, h1/1024, g0, g1)
	if g1 > g0 || h1 > h0+2<<20 {
		t.Fatalf("sessions left goroutines (%d → %d) or heap (%d → %d KiB)", g0, g1, h0/1024, h1/1024)
	}
}

// TestOnIdle: OnIdle runs when the last owner ended, not while one lives.
func TestOnIdle(t *testing.T) {
	idle := make(chan struct{}, 4)
	s := newServerWith(t, mcpserver.Options{OnIdle: func() { idle <- struct{}{} }})
	connect := func() *mcp.ClientSession {
		cs := dial(t, s, mcp.NewClient(&mcp.Implementation{Name: "test"}, nil), nil)
		call(t, cs, "bash", map[string]any{"command": "true", "description": "make the owner"})
		return cs
	}
	a, b := connect(), connect()
	_ = a.Close()
	select {
	case <-idle:
		t.Fatal("OnIdle ran while a session was live")
	case <-time.After(300 * time.Millisecond):
	}
	_ = b.Close()
	select {
	case <-idle:
	case <-time.After(proctest.Scale(10 * time.Second)):
		t.Fatal("OnIdle did not run after the last session ended")
	}
}

// TestFirstCallTimeout: an HTTP session that makes no tool call within
// FirstCallTimeout of its initialize ends (a request in it then fails); one
// whose call came first goes on, past the same time.
func TestFirstCallTimeout(t *testing.T) {
	s := newServer(t, t.TempDir())
	h, err := s.Handler(mcpserver.HTTPOptions{NoAuth: true, FirstCallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	caller := connect()
	call(t, caller, "bash", map[string]any{"command": "true", "description": "d"})
	idle := connect()
	proctest.Eventually(t, proctest.Wait, func() error {
		if err := idle.Ping(t.Context(), nil); err == nil {
			return errors.New("the session that never called still answers")
		}
		return nil
	})
	if got := texts(call(t, caller, "bash", map[string]any{"command": "echo on", "description": "d"})); got[0] != "on\n" {
		t.Errorf("the session that called reads %q", got)
	}
}
