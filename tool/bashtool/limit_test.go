package bashtool_test

import (
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// TestForegroundLimits: a session may run maxForegroundPerSession
// foreground commands at once and all sessions maxForeground; a call over
// either is refused at once with its exact error, and the slots come back
// when the commands end.
func TestForegroundLimits(t *testing.T) {
	f := newFixture(t, config.Bash{MaxForegroundPerSession: 2, MaxForeground: 3}, nil, nil)
	gate := t.TempDir() + "/gate"
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	a, b, c := session.New("a", ""), session.New("b", ""), session.New("c", "")
	defer a.End()
	defer b.End()
	defer c.End()

	var wg sync.WaitGroup
	blocked := make(chan string, 3)
	block := func(s *session.Session) {
		ready := readyFifo(t)
		wg.Go(func() {
			res := f.call(t, s, jsonArgs(map[string]any{"command": "echo > " + ready.path + "; read x < " + gate, "description": "wait at the gate"}))
			blocked <- res.Text()
		})
		ready.wait(t)
	}
	quick := func(s *session.Session) tool.Result {
		return f.call(t, s, jsonArgs(map[string]any{"command": "echo ran", "description": "run at once"}))
	}

	block(a)
	block(a)
	if res := quick(a); !res.IsError || res.Text() != "Error: too many commands running in this session (limit 2)" {
		t.Errorf("a third command of a session: %q", res.Text())
	}
	block(b)
	if res := quick(c); !res.IsError || res.Text() != "Error: too many commands running on this server (limit 3)" {
		t.Errorf("a fourth command in all: %q", res.Text())
	}

	// Read-write: the open does not wait for a reader, and a command
	// that signalled ready but has not opened the gate yet still finds a
	// writer there (closing a write-only end could leave it waiting for
	// one forever). One line per command.
	w, err := os.OpenFile(gate, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("\n\n\n"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(blocked)
	for text := range blocked {
		if text != "(no output)" {
			t.Errorf("a command at the gate ended with %q", text)
		}
	}
	for _, s := range []*session.Session{a, a, c} {
		if res := quick(s); res.IsError || res.Text() != "ran\n" {
			t.Errorf("after the others ended: %q", res.Text())
		}
	}
}
