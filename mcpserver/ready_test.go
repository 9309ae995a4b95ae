package mcpserver_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
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
