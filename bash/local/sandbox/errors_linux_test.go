package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// TestNewErrorWrapsItsCause: New's error wraps ErrUnavailable and the
// error that made the sandbox unavailable, so a caller can test for either.
func TestNewErrorWrapsItsCause(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := config.Sandbox{Mode: config.SandboxWorkspaceWrite, WritableRoots: []string{filepath.Join(file, "root")}}
	_, err := New(cfg, Options{Cwd: dir, Dir: dir, Private: dir})
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("New with a writable root under a file: %v, want one wrapping ErrUnavailable and ENOTDIR", err)
	}
}
