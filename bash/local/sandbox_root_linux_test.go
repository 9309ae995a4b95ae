package local

import (
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
)

// TestSandboxWorkspaceIsRoot: a session whose cwd is / (an MCP client may
// start dsh there) writes nothing outside /tmp, and its /dev, /proc and
// /tmp are the sandbox's: before, / was bound writable over them, so
// `> /dev/null` failed and the whole filesystem, ~/.bashrc included, was
// writable.
func TestSandboxWorkspaceIsRoot(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			s.owner = session.New("root", "/")
			t.Cleanup(s.owner.End)
			if r := s.run("echo quiet > /dev/null && echo > \"$TMPDIR/x\" && test -r /proc/self/status && echo ok"); exitCode(r) != "0" || r.Stdout.Text != "ok\n" {
				t.Errorf("devices, /tmp and /proc in a session of /: %+v", r)
			}
			out := outsideDir(t)
			if r := s.run("cd / && touch " + out + "/x"); !blocked(r) {
				t.Errorf("a session of / wrote outside /tmp: %+v", r)
			}
		})
	}
}
