package local

// The sandbox's boundary around dsh itself (issue 27, items 4 to 6):
// nothing of dsh's own is reachable from a sandboxed command, wherever it
// lives. Each attack runs sandboxed and, as its control, unsandboxed,
// where it must succeed.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// TestSandboxOtherDshSpillOutOfReach: a second dsh's executor under the
// same spill base (the temp dir, or a spillDir outside it like /var/tmp)
// spills a command's raw output; a sandboxed command of this executor
// can neither read the file nor list the other's private directory.
// Unsandboxed (the control) it can.
func TestSandboxOtherDshSpillOutOfReach(t *testing.T) {
	for _, where := range []string{"temp dir", "outside"} {
		t.Run(where, func(t *testing.T) {
			base := t.TempDir()
			if where == "outside" {
				base = outsideDir(t)
			}
			cfg := testConfig(t)
			cfg.SpillDir, cfg.MaxOutputBytes = base, 100
			first := newExecutor(t, cfg)
			r := runCmd(t, first, "seq 1 1000", 0)
			path := r.Stdout.SpillPath
			if path == "" {
				t.Fatalf("the first executor spilled nothing: %+v", r)
			}
			private := filepath.Base(filepath.Dir(path))
			for _, b := range backends {
				t.Run(b, func(t *testing.T) {
					s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.SpillDir = base })
					read := "wc -l < " + path
					if r := s.run(read); strings.TrimSpace(r.Stdout.Text) == "1000" {
						t.Errorf("read another dsh's spill file %s: %+v", path, r)
					}
					if r := s.control(read); strings.TrimSpace(r.Stdout.Text) != "1000" {
						t.Errorf("control: %+v", r)
					}
					list := "ls -A " + base
					if r := s.run(list); strings.Contains(r.Stdout.Text, private) {
						t.Errorf("listed another dsh's private directory in %s: %+v", base, r)
					}
					if r := s.control(list); !strings.Contains(r.Stdout.Text, private) {
						t.Errorf("control: %+v", r)
					}
				})
			}
		})
	}
}
