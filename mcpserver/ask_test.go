package mcpserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/mcpserver"
)

// askingServer is a server whose policy asks about every command but
// `true`; its questions go to answer.
func askingServer(t *testing.T, dir string, answer func(*mcp.ElicitRequest) *mcp.ElicitResult) (*mcp.ClientSession, *atomic.Int32) {
	t.Helper()
	cfg := config.File{Permissions: &config.Permissions{Default: "ask", Allow: []string{"true"}, ClaudeSettings: new(false)}}
	var asked atomic.Int32
	cs := serveFile(t, cfg, dir, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return answer(req), nil
		},
	}, host.WithPermissions(permissions.Options{Home: dir, ManagedDir: dir}))
	return cs, &asked
}

// TestForgedRequestStateIsANewCall: a retry whose request state this
// server did not give is asked again, whatever answer it carries.
func TestForgedRequestStateIsANewCall(t *testing.T) {
	dir := t.TempDir()
	cs, asked := askingServer(t, dir, func(*mcp.ElicitRequest) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} })
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
		Name:           "bash",
		Arguments:      map[string]any{"command": "touch forged", "description": "d"},
		InputResponses: mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept"}},
		RequestState:   "not-the-servers",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res); len(got) != 1 || got[0] != "Error: the user declined to run this command" || asked.Load() != 1 {
		t.Errorf("forged state: %q, asked %d times", got, asked.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "forged")); err == nil {
		t.Error("a forged answer ran the command")
	}
}

// TestAnsweredRetryRuns: the newest protocol's question and retry.
func TestAnsweredRetryRuns(t *testing.T) {
	dir := t.TempDir()
	cs, asked := askingServer(t, dir, func(*mcp.ElicitRequest) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "accept"} })
	if cs.InitializeResult().ProtocolVersion < "2026-07-28" {
		t.Fatalf("protocol %s: this test is about input requests", cs.InitializeResult().ProtocolVersion)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "touch answered", "description": "d"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res); len(got) != 1 || got[0] != "(no output)" || asked.Load() != 1 {
		t.Errorf("answered: %q, asked %d times", got, asked.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "answered")); err != nil {
		t.Error("the accepted command did not run")
	}
}

// TestDowngradedClientFallsBack: a client that asked for 2026-07-28 at
// initialize and agreed on an older version can be asked neither with an
// input request (it does not speak them) nor with elicitation/create (the
// SDK refuses it): askFallback applies.
func TestDowngradedClientFallsBack(t *testing.T) {
	dir := t.TempDir()
	s := askServer(t, dir, config.Hooks{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.RunLines(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(line string) { _, _ = io.WriteString(inW, line+"\n") }
	next := func() string {
		if !lines.Scan() {
			t.Fatal("no answer")
		}
		return lines.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := next(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", got)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"touch asked","description":"d"}}}`)
	got := next()
	if strings.Contains(got, "inputRequests") || !strings.Contains(got, "this client cannot ask for it") {
		t.Errorf("a downgraded client: %s", got)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("RunLines: %v", err)
	}
	for lines.Scan() {
	}
}

// TestRetryDoesNotRerunHooks: a call asked with an input request is
// repeated with the answer; the PreToolUse hooks ran the first time, and
// what they settled (here, a rewritten command) is what runs.
func TestRetryDoesNotRerunHooks(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "hook-runs")
	hook := config.Hook{Type: "command", Command: `echo run >> ` + count + `; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"touch rewritten"},"additionalContext":"checked"}}'`}
	s := askServer(t, dir, config.Hooks{PreToolUse: []config.HookGroup{{Matcher: "Bash", Hooks: []config.Hook{hook}}}})
	defer s.Close()
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs := dial(t, s, client, nil)
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "touch original", "description": "d"}})
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := os.ReadFile(count)
	if got := texts(res); len(got) != 2 || got[0] != "(no output)" || got[1] != "[hook] checked" || len(asked) != 1 || !strings.Contains(asked[0], "touch rewritten") || string(runs) != "run\n" {
		t.Errorf("result %q, questions %q, hook runs %q", got, asked, runs)
	}
	if _, err := os.Stat(filepath.Join(dir, "rewritten")); err != nil {
		t.Error("the rewritten command did not run")
	}
}

// TestRequestStateIsBoundToItsCall: an answered request state runs only
// the call it was given for, once: not other arguments, not in another
// session, not with its settled input altered, not a second time.
func TestRequestStateIsBoundToItsCall(t *testing.T) {
	dir := t.TempDir()
	s := askServer(t, dir, config.Hooks{})
	defer s.Close()
	// Clients that see the input requests themselves (no automatic retry),
	// and declare elicitation.
	connect := func() *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return nil, errors.New("not asked this way on 2026-07-28")
			},
		})
		cs := dial(t, s, client, nil)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	a, b := connect(), connect()
	call := func(cs *mcp.ClientSession, command, state string) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command, "description": "d"}}
		if state != "" {
			p.InputResponses, p.RequestState = mcp.InputResponseMap{approvalKey: &mcp.ElicitResult{Action: "accept"}}, state
		}
		res, err := cs.CallTool(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := call(a, "touch one", "")
	if !first.NeedsInput() || first.RequestState == "" || first.InputRequests[approvalKey] == nil {
		t.Fatalf("the first call was not asked with an input request: %+v", first)
	}
	state := first.RequestState
	settled, sig, _ := strings.Cut(state, ".")
	other := call(a, "touch other", "")
	otherSettled, _, _ := strings.Cut(other.RequestState, ".")
	for _, tc := range []struct {
		name, command, state string
		cs                   *mcp.ClientSession
	}{
		{"other arguments", "touch two", state, a},
		{"another session", "touch one", state, b},
		{"another call's settled input", "touch one", otherSettled + "." + sig, a},
		{"no signature", "touch one", settled, a},
	} {
		res := call(tc.cs, tc.command, tc.state)
		if !res.NeedsInput() {
			t.Errorf("%s: a retry of %q ran on a state it was not given (%q)", tc.name, tc.command, texts(res))
		}
	}
	if res := call(a, "touch one", state); res.NeedsInput() || len(texts(res)) != 1 || texts(res)[0] != "(no output)" {
		t.Fatalf("the answered retry: %+v", res)
	}
	for name, want := range map[string]bool{"one": true, "two": false, "other": false} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
	if err := os.Remove(filepath.Join(dir, "one")); err != nil {
		t.Fatal(err)
	}
	if res := call(a, "touch one", state); !res.NeedsInput() {
		t.Errorf("a used state ran again: %q", texts(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "one")); err == nil {
		t.Error("a replayed state ran the command")
	}
}

// approvalKey is the key of dsh's question in an input request.
const approvalKey = "approval"

// askServer is a server whose every bash call asks (default ask, no
// Claude Code settings), with hooks, working in dir; its stack is closed
// when the test ends.
func askServer(t *testing.T, dir string, hooks config.Hooks) *mcpserver.Server {
	cfg := config.File{Permissions: &config.Permissions{Default: "ask", ClaudeSettings: new(false)}, Hooks: hooks}
	cfg.Local.Env.Set, cfg.Local.SpillDir, cfg.Local.Grace = proctest.Set(), t.TempDir(), 200*time.Millisecond
	st, err := host.Standard(cfg, host.WithPermissions(permissions.Options{Home: dir, ManagedDir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return mcpserver.New(mcpserver.Options{Tools: st.Tools, Prompt: st.Prompt, Workdir: dir, Version: "test"})
}
