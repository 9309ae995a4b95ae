//go:build linux

package hooks_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/proctest"
)

// TestProjectHooksAreSandboxed: with a sandbox on, a hook that the
// project's files brought runs in it, as the model's commands do, and a
// hook of the user's own does not (docs/spec.md §10): both try to write
// outside the workspace, and only the user's write lands.
func TestProjectHooksAreSandboxed(t *testing.T) {
	for _, backend := range []string{config.BackendBwrap, config.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t)
			outside, err := os.MkdirTemp("/var/tmp", "dsh-hooks-test-") // not under /tmp, which bwrap replaces
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(outside) })
			touch := func(name string) string {
				return `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"touch ` +
					filepath.Join(outside, name) + `; exit 0"}]}]}}`
			}
			for path, content := range map[string]string{
				filepath.Join(f.home, ".claude", "settings.json"):    touch("user"),
				filepath.Join(f.project, ".claude", "settings.json"): touch("project"),
			} {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := config.File{ClaudeHooks: true, TrustProjectHooks: true}
			cfg.Local.Sandbox = config.Sandbox{Mode: config.SandboxWorkspaceWrite, Backend: backend}
			cfg.Local.Env.Set = proctest.Set()
			cfg.Local.SpillDir = t.TempDir()
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			st, err := host.Standard(cfg, host.WithPermissions(permissions.Options{Home: f.home, ManagedDir: f.managed, ProjectDir: f.project}))
			if errors.Is(err, sandbox.ErrUnavailable) {
				t.Skipf("SKIP-REASON: sandbox backend %s cannot run here: %v", backend, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if res := bash(t, st, f.session(t), map[string]any{"command": "true"}); res.IsError {
				t.Fatalf("the call: %q", res.Text())
			}
			if _, err := os.Stat(filepath.Join(outside, "user")); err != nil {
				t.Errorf("the user's hook did not run outside the sandbox, the test proves nothing: %v", err)
			}
			if _, err := os.Stat(filepath.Join(outside, "project")); err == nil {
				t.Error("the project's hook wrote outside the workspace")
			}
		})
	}
}
