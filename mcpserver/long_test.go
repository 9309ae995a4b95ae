package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/mcpserver"
)

// serveFile serves the whole stack of cfg (the test's spill directory and
// leak mark added) in workdir over an in-memory transport, to a client
// with copts.
func serveFile(t *testing.T, cfg config.File, workdir string, copts *mcp.ClientOptions, hopts ...host.Option) *mcp.ClientSession {
	t.Helper()
	cfg.Local.Env.Set, cfg.Local.SpillDir, cfg.Local.Grace = proctest.Set(), t.TempDir(), 200*time.Millisecond
	st, err := host.Standard(cfg, hopts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := mcpserver.New(mcpserver.Options{Tools: st.Tools, Prompt: st.Prompt, Workdir: workdir, Version: "test"})
	t.Cleanup(s.Close)
	cs := dial(t, s, mcp.NewClient(&mcp.Implementation{Name: "test"}, copts), nil)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// longServer is serveFile with a client that records the progress
// notifications it gets.
func longServer(t *testing.T, cfg config.File) (*mcp.ClientSession, func() []*mcp.ProgressNotificationParams) {
	t.Helper()
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs := serveFile(t, cfg, t.TempDir(), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	})
	return cs, func() []*mcp.ProgressNotificationParams {
		mu.Lock()
		defer mu.Unlock()
		return append([]*mcp.ProgressNotificationParams(nil), got...)
	}
}

// TestHeartbeatsWhileHooksRunAndTheCommandIsQuiet: a call with a
// progress token hears from dsh at least every second from its arrival,
// through a slow PreToolUse hook and a command that prints nothing, with
// strictly increasing progress (docs/spec.md §6.4, §12).
func TestHeartbeatsWhileHooksRunAndTheCommandIsQuiet(t *testing.T) {
	t.Parallel()
	hook := filepath.Join(t.TempDir(), "slow.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/bash\nsleep 1.3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cs, notes := longServer(t, config.File{Hooks: config.Hooks{PreToolUse: []config.HookGroup{{Matcher: "Bash", Hooks: []config.Hook{{Type: "command", Command: hook}}}}}})
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 1.5; echo done", "description": "wait quietly"}}
	params.SetProgressToken("tok")
	start := time.Now()
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError || texts(res)[0] != "done\n" {
		t.Fatal(err, res)
	}
	took := time.Since(start)
	want := int(took/time.Second) - 1 // at least one a second, the last second aside
	proctest.Within(proctest.Scale(5*time.Second), func() bool { return len(notes()) >= want })
	got := notes()
	if len(got) < 2 || len(got) < want {
		t.Fatalf("%d notifications in %v", len(got), took)
	}
	last := -1.0
	for i, p := range got {
		if p.ProgressToken != "tok" || p.Progress <= last {
			t.Fatalf("notification %d %+v after progress %v", i, p, last)
		}
		last = p.Progress
	}
	if got[0].Message != "running for 1s" || got[1].Message != "running for 2s" {
		t.Fatalf("messages %q, %q", got[0].Message, got[1].Message)
	}
}

// TestYieldOverMCP: a foreground call past bash.yieldAfterMs returns
// the output so far and the exact line of docs/spec.md §12, with taskId and
// yielded in structuredContent; the task ends with the command's output
// and exit code.
func TestYieldOverMCP(t *testing.T) {
	t.Parallel()
	// A loaded machine needs longer to print "first", and the command
	// must still run when the call yields: both scale.
	after := proctest.Scale(400 * time.Millisecond).Round(time.Millisecond)
	cs, _ := longServer(t, config.File{Bash: config.Bash{YieldAfter: &after}})
	command := fmt.Sprintf("echo first; sleep %.3f; echo second; exit 4", (after * 5 / 2).Seconds())
	res := call(t, cs, "bash", map[string]any{"command": command, "description": "work a while"})
	want := fmt.Sprintf("first\n[still running after %dms; continues as background task bash-1: read it with task_output, stop it with task_kill]", after.Milliseconds())
	if got := texts(res); res.IsError || len(got) != 1 || got[0] != want {
		t.Fatalf("yield: %q", got)
	}
	st, _ := res.StructuredContent.(map[string]any)
	if st["taskId"] != "bash-1" || st["yielded"] != true || st["exitCode"] != nil {
		t.Fatalf("structuredContent %v", res.StructuredContent)
	}
	out := call(t, cs, "task_output", map[string]any{"task_id": "bash-1", "wait": true, "timeout_ms": 10000})
	if got := texts(out); len(got) != 1 || got[0] != "second\n[status: completed, exit code: 4]" {
		t.Fatalf("task_output: %q", got)
	}
}

// TestNoResponseAfterCancelOnStdio: a call the client cancelled gets no
// response and no more progress notifications (MCP: the receiver should
// not respond); a call of the same session after it gets its response, and
// a cancel of a call already answered changes nothing (docs/spec.md §6.4).
func TestNoResponseAfterCancelOnStdio(t *testing.T) {
	t.Parallel()
	s := newServer(t, "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.RunLines(context.Background(), inR, outW); outW.Close() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(line string) { _, _ = io.WriteString(inW, line+"\n") }
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(proctest.Scale(10 * time.Second)):
			t.Fatal("no answer")
			return ""
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := next(); !strings.Contains(got, `"id":1`) {
		t.Fatalf("initialize: %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo started; sleep 5","description":"wait"},"_meta":{"progressToken":"p2"}}}`)
	if got := next(); !strings.Contains(got, `"progressToken":"p2"`) || !strings.Contains(got, "started") {
		t.Fatalf("progress before the cancel: %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timed out"}}`)
	time.Sleep(1500 * time.Millisecond) // a heartbeat's time, for a stray one to come
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo next","description":"go on"}}}`)
	for got := next(); !strings.Contains(got, `"id":3`); got = next() {
		if strings.Contains(got, `"id":2`) || strings.Contains(got, `"p2"`) {
			t.Fatalf("sent after the cancel: %s", got)
		}
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo four","description":"go on"}}}`)
	if got := next(); !strings.Contains(got, `"id":4`) || !strings.Contains(got, `four`) {
		t.Fatalf("after a late cancel: %s", got)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("RunLines: %v", err)
	}
	for range lines {
	}
}

// TestNoResponseAfterCancelOverHTTP: the same over streamable HTTP, where
// the cancel comes in a POST of its own and the call's POST stream ends
// without its response.
func TestNoResponseAfterCancelOverHTTP(t *testing.T) {
	s := newServer(t, "")
	h, err := s.Handler(mcpserver.HTTPOptions{NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := res.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	call := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo started; sleep 5","description":"wait"},"_meta":{"progressToken":"p2"}}}`)
	defer call.Body.Close()
	stream := bufio.NewReader(call.Body)
	for {
		line, err := stream.ReadString('\n')
		if err != nil {
			t.Fatalf("the call's stream ended before its first progress: %v", err)
		}
		if strings.Contains(line, `"progressToken":"p2"`) {
			break
		}
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`).Body.Close()
	rest, _ := io.ReadAll(stream) // the stream ends when the call does
	if strings.Contains(string(rest), "data:") {
		t.Fatalf("sent after the cancel: %q", rest)
	}
	next := post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo next","description":"go on"}}}`)
	body, _ := io.ReadAll(next.Body)
	next.Body.Close()
	if !strings.Contains(string(body), `"id":3`) || !strings.Contains(string(body), `next\n`) {
		t.Fatalf("the next call: %q", body)
	}
}
