package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/permissions"
)

// TestPermissionsLine: doctor's permissions line without a section says
// what applies then (docs/spec.md §9.1): with no Claude Code settings file
// every command runs; with some, their rules under a default of allow,
// the project's allow rules ignored. In process, with the settings files
// in directories of the test's own.
func TestPermissionsLine(t *testing.T) {
	t.Parallel()
	home, managed, project := t.TempDir(), t.TempDir(), t.TempDir()
	opts := permissions.Options{Home: home, ManagedDir: managed, ProjectDir: project}
	var cfg config.File
	if got, want := permissionsLine(cfg, opts), "none (no permissions section, no Claude Code settings file: every command runs)"; got != want {
		t.Errorf("no file:\n got %q\nwant %q", got, want)
	}
	sandboxed := cfg
	sandboxed.Local.Sandbox.Mode = config.SandboxWorkspaceWrite
	if got, want := permissionsLine(sandboxed, opts), "none (no permissions section, no Claude Code settings file: every command runs; leaving the sandbox asks the user)"; got != want {
		t.Errorf("a sandbox:\n got %q\nwant %q", got, want)
	}

	user := filepath.Join(home, ".claude", "settings.json")
	writeSettings(t, user, `{"permissions":{"deny":["Bash(curl:*)","Read(./secrets)"],"ask":["Bash(git push:*)"]}}`)
	local := filepath.Join(project, ".claude", "settings.local.json")
	writeSettings(t, local, `{"permissions":{"allow":["Bash(make:*)"]}}`)
	want := "no permissions section: default allow; rules from " + user + " (2 rules), " + local + " (0 rules; allow rules ignored (trustProjectAllow: false))"
	if got := permissionsLine(cfg, opts); got != want {
		t.Errorf("Claude Code settings:\n got %q\nwant %q", got, want)
	}
	if got := permissionsLine(sandboxed, opts); got != want+"; leaving the sandbox asks the user" {
		t.Errorf("Claude Code settings and a sandbox:\n got %q", got)
	}
}

// TestPermissionsLineOverSSH: with executor ssh the sessions' cwds are on
// the remote host, so doctor reads no project file from a local directory
// of the same path, as the stack's gate does not. Not parallel: it clears
// CLAUDE_PROJECT_DIR.
func TestPermissionsLineOverSSH(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	home, cwd := t.TempDir(), t.TempDir()
	opts := permissions.Options{Home: home, ManagedDir: t.TempDir()}
	project := filepath.Join(cwd, ".claude", "settings.json")
	writeSettings(t, project, `{"permissions":{"deny":["Bash(curl:*)"]}}`)
	var cfg config.File
	cfg.Local.Cwd = cwd
	if got, want := permissionsLine(cfg, opts), "no permissions section: default allow; rules from "+project+" (1 rule)"; got != want {
		t.Errorf("executor local:\n got %q\nwant %q", got, want)
	}
	cfg.Executor, cfg.SSH.Cwd = config.ExecutorSSH, cwd
	if got, want := permissionsLine(cfg, opts), "none (no permissions section, no Claude Code settings file: every command runs)"; got != want {
		t.Errorf("executor ssh:\n got %q\nwant %q", got, want)
	}
}

func writeSettings(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
