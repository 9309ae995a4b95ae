// Package stacktest composes dsh's stack for tests as a front end does,
// with host.Standard: the local executor, the task runtime, and the bash
// and task tools in a registry. Every command carries the test run's leak
// mark (package proctest), and everything is closed when the test ends.
// The stack reads no Claude Code settings of the machine: without a
// permissions section their Bash rules apply (docs/spec.md §9.1), and a
// developer's own would decide the tests' commands.
package stacktest

import (
	"maps"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/proctest"
)

// New composes the stack over the local section cfg, with a 200 ms grace,
// a spill directory of the test's and the sandbox off unless cfg sets
// them: the tests read what commands write in the test's directories,
// which the default sandbox would keep from them. Its error is
// host.Standard's (an unavailable containment, say).
func New(t testing.TB, cfg config.Local) (*host.Stack, error) {
	t.Helper()
	if cfg.Grace == 0 {
		cfg.Grace = 200 * time.Millisecond
	}
	if cfg.SpillDir == "" {
		cfg.SpillDir = t.TempDir()
	}
	if cfg.Sandbox.Mode == "" {
		cfg.Sandbox.Mode = config.SandboxOff
	}
	set := proctest.Set()
	maps.Copy(set, cfg.Env.Set)
	cfg.Env.Set = set
	none := t.TempDir() // no settings files: home, managed dir and project
	s, err := host.Standard(config.File{Local: cfg}, host.WithPermissions(permissions.Options{Home: none, ManagedDir: none, ProjectDir: none}))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the stack: %v", err)
		}
	})
	return s, nil
}

// Must is New for a test that expects the stack to compose.
func Must(t testing.TB, cfg config.Local) *host.Stack {
	t.Helper()
	s, err := New(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
