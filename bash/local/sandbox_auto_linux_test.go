package local

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
)

// The default sandbox (docs/spec.md §11): mode auto is workspace-write
// where a backend works, and where none does commands run unsandboxed and
// the executor says so once; a config value that is wrong on any machine
// still fails.

// TestSandboxAutoWhereABackendWorks: auto confines as workspace-write.
func TestSandboxAutoWhereABackendWorks(t *testing.T) {
	s := newSbx(t, config.BackendBwrap, config.SandboxAuto, func(c *config.Local) { c.Sandbox.Backend = config.BackendAuto })
	if s.e.Sandbox() == nil || s.e.SandboxUnavailable() != nil || s.e.Sandbox().Mode() != config.SandboxWorkspaceWrite {
		t.Fatalf("auto where a backend works: sandbox %v, unavailable %v", s.e.Sandbox(), s.e.SandboxUnavailable())
	}
	out := outsideDir(t)
	if r := s.run("touch " + out + "/x"); !blocked(r) {
		t.Errorf("auto: a write outside the workspace was not blocked: %+v", r)
	}
	if r := s.run("touch in-ws"); exitCode(r) != "0" {
		t.Errorf("auto: a write in the workspace failed: %+v", r)
	}
}

// noBackendPath sets PATH to a directory with bash and without bwrap, for
// the rest of the test: with allowSockets, which Landlock refuses, no
// backend can enforce the section.
func noBackendPath(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sh, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
}

// TestSandboxAutoWithoutABackend: commands run, unsandboxed; the
// executor logs the warning once and keeps why.
func TestSandboxAutoWithoutABackend(t *testing.T) {
	noBackendPath(t)
	var logged bytes.Buffer
	cfg := testConfig(t)
	ws := t.TempDir()
	cfg.Cwd = ws
	cfg.Sandbox = config.Sandbox{Mode: config.SandboxAuto, AllowSockets: []string{"/run/dsh-test.sock"}}
	e, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatalf("auto without a backend: %v", err)
	}
	defer e.Close()
	if e.Sandbox() != nil || !errors.Is(e.SandboxUnavailable(), sandbox.ErrNoBackend) {
		t.Fatalf("auto without a backend: sandbox %v, unavailable %v", e.Sandbox(), e.SandboxUnavailable())
	}
	if n := strings.Count(logged.String(), "level=WARN msg=\""+NotSandboxedWarning+"\" why=\"sandbox: bubblewrap not found"); n != 1 {
		t.Errorf("the warning was logged %d times, want once:\n%s", n, logged.String())
	}
	out := t.TempDir() // a write the sandbox would block
	owner := session.New("test", ws)
	defer owner.End()
	spec, err := e.Resolve(bash.Request{Command: "echo x > " + out + "/x", Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := bash.Run(t.Context(), e, spec); err != nil || exitCode(r) != "0" {
		t.Errorf("an unsandboxed write failed: %+v, %v", r, err)
	}
}

// TestSandboxAutoRefusesBadValues: auto falls back for a missing backend,
// not for a writable root that does not exist, and an explicit mode
// refuses to start without a backend.
func TestSandboxAutoRefusesBadValues(t *testing.T) {
	cfg := testConfig(t)
	cfg.Sandbox = config.Sandbox{Mode: config.SandboxAuto, WritableRoots: []string{"/nonexistent-dsh-root"}}
	if e, err := New(cfg); err == nil || errors.Is(err, sandbox.ErrNoBackend) ||
		err.Error() != "bash-local: sandbox: writableRoots: /nonexistent-dsh-root does not exist" {
		t.Errorf("auto with a missing writable root: %v", err)
		if e != nil {
			e.Close()
		}
	}
	noBackendPath(t)
	cfg = testConfig(t)
	cfg.Sandbox = config.Sandbox{Mode: config.SandboxWorkspaceWrite, AllowSockets: []string{"/run/dsh-test.sock"}}
	if e, err := New(cfg); !errors.Is(err, sandbox.ErrNoBackend) {
		t.Errorf("workspace-write without a backend: %v", err)
		if e != nil {
			e.Close()
		}
	}
}
