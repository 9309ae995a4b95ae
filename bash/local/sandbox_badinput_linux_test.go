package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
)

// TestSandboxRootGoneMidSession: a writable root or a workspace removed
// after the session began fails the call with one clear line, on both
// backends; nothing runs, sandboxed or not. Before, bwrap failed with its
// own "Can't find source path" as the command's stderr, and Landlock ran
// the command granting less.
func TestSandboxRootGoneMidSession(t *testing.T) {
	for _, b := range backends[:2] {
		t.Run(b, func(t *testing.T) {
			root := outsideDir(t)
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.Sandbox.WritableRoots = []string{root} })
			if r := s.run("true"); exitCode(r) != "0" {
				t.Fatalf("first call: %+v", r)
			}
			mark := filepath.Join(s.ws, "ran")
			for _, gone := range []string{root, s.ws} {
				if err := os.RemoveAll(gone); err != nil {
					t.Fatal(err)
				}
				spec, err := s.e.Resolve(bash.Request{Command: "echo > " + mark, Owner: s.owner})
				if err == nil {
					_, err = bash.Run(context.Background(), s.e, spec)
				}
				// The workspace is also the workdir here, which the
				// executor finds missing first: its own one line.
				want := "sandbox: writableRoots: " + root + " is no longer a directory; nothing was run"
				if gone == s.ws {
					want = `workdir "` + s.ws + `" does not exist`
				}
				if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s gone: %v, want … %s", gone, err, want)
				}
			}
		})
	}
}

// TestSandboxSymlinkWorkspace: a session whose cwd is a symlink to a
// directory writes in the directory it names, and nowhere else.
func TestSandboxSymlinkWorkspace(t *testing.T) {
	for _, b := range backends[:2] {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			real := outsideDir(t)
			if err := os.Mkdir(filepath.Join(real, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(outsideDir(t), "link")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			s.owner = session.New("link", link)
			t.Cleanup(s.owner.End)
			// Landlock makes nothing new directly in a root: write in sub.
			if r := s.runSpec(bash.Request{Command: "echo x > sub/f && cat " + real + "/sub/f", Owner: s.owner, Workdir: link}); exitCode(r) != "0" || r.Stdout.Text != "x\n" {
				t.Errorf("a write in the symlinked workspace: %+v", r)
			}
			if r := s.run("echo x > " + filepath.Dir(link) + "/g"); !blocked(r) {
				t.Errorf("a write beside the link: %+v", r)
			}
		})
	}
}

// TestSandboxReadOnlyWorkspace: a workspace on a read-only filesystem
// still runs its commands sandboxed (reading is what they may want); a
// write fails with the filesystem's own error and the sandbox's hint, and
// nothing runs unsandboxed instead.
func TestSandboxReadOnlyWorkspace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: mounting a read-only filesystem needs root")
	}
	ws := outsideDir(t)
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "dsh-test", ws).Run(); err != nil {
		t.Skipf("SKIP-REASON: cannot mount a read-only tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command("umount", ws).Run() })
	for _, b := range backends[:2] {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.Cwd = ws })
			s.owner = session.New("ro", ws)
			t.Cleanup(s.owner.End)
			r := s.runSpec(bash.Request{Command: "ls -a . && echo x > f", Owner: s.owner, Workdir: ws})
			if !blocked(r) || !strings.Contains(r.Stdout.Text, "..") {
				t.Errorf("a write in a read-only workspace: %+v", r)
			}
		})
	}
}
