package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
)

// TestSpareOnlyWhereWanted: a sandbox whose executor never asked for a
// session network ahead (dsh run, the hooks') makes none after a scope
// took its own; one that did makes the next after each is taken.
func TestSpareOnlyWhereWanted(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("SKIP-REASON: no bwrap (apt install bubblewrap)")
	}
	work := t.TempDir()
	s, err := New(config.Sandbox{Mode: config.SandboxWorkspaceWrite, Backend: config.BackendBwrap, Network: &config.Network{}},
		Options{Cwd: work, Dir: work, Private: work, Shell: "/bin/bash", Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.net != netSetns && s.net != netHolder {
		t.Skip("SKIP-REASON: no network namespace per session here")
	}
	spare := func() *sessionNet {
		s.spare.mu.Lock()
		defer s.spare.mu.Unlock()
		return s.spare.net
	}
	scope := func(owner string) {
		sc, err := s.NewScope(owner, work)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sc.Close() })
	}
	scope("unwanted")
	time.Sleep(3 * refillDelay)
	if s.Prepared(); spare() != nil {
		t.Fatal("a spare was made though none was asked for")
	}
	s.Prepare()
	s.Prepared()
	first := spare()
	if first == nil {
		t.Fatal("Prepare made no spare")
	}
	scope("wanted")
	if spare() != nil {
		t.Fatal("the spare taken is still the spare")
	}
	proctest.Eventually(t, proctest.Wait, func() error {
		if s.Prepared(); spare() == nil {
			return errors.New("no new spare after one was taken")
		}
		return nil
	})
	if spare() == first {
		t.Fatal("the spare taken came back")
	}
}
