package mcpserver_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
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
	st := stacktest.Must(t, config.Local{GraceMs: 300})
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
