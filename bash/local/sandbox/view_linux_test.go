package sandbox

// The decisions of view.go, on paths alone: what a command
// is shown and what is hidden (the attacks themselves run in
// bash/local's sandbox tests, on real backends).

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// testSandbox is a sandbox of paths only: no backend, no probe.
func testSandbox(t *testing.T) *Sandbox {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	private := filepath.Join(base, "dsh-out-1-2-3-abc")
	must(t, os.MkdirAll(filepath.Join(private, "sandbox"), 0o700))
	return &Sandbox{mode: config.SandboxWorkspaceWrite, home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "ws"),
		dir: filepath.Join(private, "sandbox"), private: private, base: base, runDirs: []string{"/run"}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSpillView(t *testing.T) {
	s := testSandbox(t)
	other := filepath.Join(s.base, "dsh-out-9-9-9-def")
	run := filepath.Join(s.base, "dsh-run-0")
	for _, d := range []string{other, run, filepath.Join(s.base, "unrelated")} {
		must(t, os.Mkdir(d, 0o700))
	}
	replaced := []string{"/run"} // Landlock's; the base is under /tmp
	for _, c := range []struct {
		name, ws string
		want     spillView
	}{
		{"the base apart from the workspace: whole", "/srv/ws", spillView{base: s.base}},
		{"a workspace inside the base: whole, the workspace shown on top", filepath.Join(s.base, "ws"), spillView{base: s.base}},
		{"the base inside the workspace: whole, on top of it", filepath.Dir(s.base), spillView{base: s.base}},
		{"the base is the workspace: one by one", s.base, spillView{own: s.private, others: []string{other, run}}},
	} {
		v := view{roots: []string{c.ws}}
		if got := s.spillView(v, replaced); !equalSpill(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	home := s.home
	s.home = filepath.Join(s.base, "home")
	if got := s.spillView(view{roots: []string{"/srv/ws"}}, replaced); got.base != "" || got.own != s.private {
		t.Errorf("a base that holds the home directory is hidden whole: %+v", got)
	}
	s.home = home
	// bwrap: a base under /tmp is out of sight already, unless a shown
	// directory holds it.
	if got := s.spillView(view{roots: []string{"/srv/ws"}}, []string{"/run", filepath.Dir(s.base)}); !equalSpill(got, spillView{}) {
		t.Errorf("a base out of sight: %+v", got)
	}
	if got := s.spillView(view{roots: []string{"/srv/ws"}, workdir: filepath.Dir(s.base)}, []string{filepath.Dir(s.base)}); got.base != s.base {
		t.Errorf("a base shown by the workdir: %+v", got)
	}
}

func equalSpill(a, b spillView) bool {
	return a.base == b.base && a.own == b.own && slices.Equal(a.others, b.others)
}

func TestNewViewKeepsOutOfPrivateDirs(t *testing.T) {
	s := testSandbox(t)
	other := filepath.Join(s.base, "dsh-out-9-9-9-def", "x")
	v := s.newView(Command{Dir: other}, "/srv/ws", nil)
	if v.workdir != "" {
		t.Errorf("a workdir in another dsh's private directory is shown: %+v", v)
	}
	if v := s.newView(Command{Dir: "/srv/ws/sub"}, "/srv/ws", nil); v.workdir != "" || !slices.Equal(v.roots, []string{"/srv/ws"}) {
		t.Errorf("a workdir in the workspace: %+v", v)
	}
	if v := s.newView(Command{Dir: "/etc"}, "/srv/ws", nil); v.workdir != "/etc" {
		t.Errorf("a workdir outside the roots: %+v", v)
	}
}
