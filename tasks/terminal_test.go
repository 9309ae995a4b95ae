package tasks

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/session"
)

// fakeTerm is a terminal that records what is typed.
type fakeTerm struct {
	mu    sync.Mutex
	typed []byte
	err   error
}

func (f *fakeTerm) Input(p []byte, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.typed = append(f.typed, p...)
	return nil
}
func (f *fakeTerm) Screen() string                      { return "[cursor: row 1, col 1]" }
func (f *fakeTerm) Keys(names []string) ([]byte, error) { return nil, nil }
func (f *fakeTerm) Size() (cols, rows int)              { return 80, 24 }
func (f *fakeTerm) Foreground() []Program               { return nil }
func (f *fakeTerm) Typed() ([]byte, bool)               { return nil, false }

func (f *fakeTerm) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return string(f.typed)
}

// TestInputFenceAndErrors: input reaches only the owner's task with a
// terminal while it runs; the errors are exact and wrap their sentinels.
func TestInputFenceAndErrors(t *testing.T) {
	svc := newService(t, Config{})
	owner, other := session.New("a", ""), session.New("b", "")
	term := &fakeTerm{}
	withTerm := newFake(true)
	run := func() (Hooks, error) { h, err := withTerm.run(); h.Terminal = term; return h, err }
	snap, err := svc.Start(Spec{Kind: "bash", Label: "cat", Owner: owner, Run: run, Sandboxed: true})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Terminal != (TerminalSize{80, 24}) || !snap.Sandboxed {
		t.Fatalf("snapshot %+v", snap)
	}
	plain := start(t, svc, "bash", "sleep 9", owner, newFake(true))
	deadline := time.Now().Add(time.Second)

	if _, err := svc.Input(owner, snap.ID, []byte("hi\r"), deadline); err != nil || term.text() != "hi\r" {
		t.Fatalf("input: %v, typed %q", err, term.text())
	}
	for _, tc := range []struct {
		caller *session.Session
		id     string
		want   string
		is     error
	}{
		{other, snap.ID, "task bash-1 belongs to another session", ErrForbidden},
		{owner, "bash-9", "unknown task bash-9", ErrUnknown},
		{owner, plain.ID, "task bash-2 has no terminal: only a bash task started with tty: true takes input", ErrNoTerminal},
	} {
		_, err := svc.Input(tc.caller, tc.id, []byte("x"), deadline)
		if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
			t.Errorf("%s: got %v, want %q", tc.id, err, tc.want)
		}
	}
	withTerm.finish(Outcome{Status: Completed, Detail: "exit code: 0"})
	settled(t, svc, snap.ID)
	_, err = svc.Input(owner, snap.ID, []byte("late"), deadline)
	if want := "task bash-1 has finished: it takes no more input"; err == nil || err.Error() != want || !errors.Is(err, ErrFinished) {
		t.Errorf("finished: got %v", err)
	}
	if term.text() != "hi\r" {
		t.Errorf("typed into a finished task: %q", term.text())
	}
	if news, done, err := svc.Changed(owner, snap.ID); err != nil || news != nil || done == nil {
		t.Errorf("Changed without a producer's signal: %v %v %v", news, done, err)
	}
}
