package sandbox

// The decisions of view.go and sockets.go, on paths alone: what a command
// is shown and what is hidden (the attacks themselves run in
// bash/local's sandbox tests, on real backends).

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
)

func TestSocketPath(t *testing.T) {
	for line, want := range map[string]string{
		"0000000000000000: 00000002 00000000 00010000 0001 01 23456 /run/dbus/system_bus_socket": "/run/dbus/system_bus_socket",
		"0000000000000000: 00000003 00000000 00000000 0001 03  1076":                             "",
		"0000000000000000: 00000002 00000000 00010000 0001 01 23457 @/tmp/.X11-unix/X0":          "@/tmp/.X11-unix/X0",
		"0000000000000000: 00000002 00000000 00010000 0001 01 23458 /opt/a dir/s.sock":           "/opt/a dir/s.sock",
		"Num       RefCount Protocol Flags    Type St Inode Path":                                "Path",
		"": "",
	} {
		if got := socketPath(line); got != want {
			t.Errorf("socketPath(%q) = %q, want %q", line, got, want)
		}
	}
}

// testSandbox is a sandbox of paths only: no backend, no probe.
func testSandbox(t *testing.T) *Sandbox {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	private := filepath.Join(base, "dsh-out-1-2-3-abc")
	must(t, os.MkdirAll(filepath.Join(private, "sandbox"), 0o700))
	return &Sandbox{mode: config.SandboxWorkspaceWrite, home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "ws"),
		dir: filepath.Join(private, "sandbox"), private: private, base: base, runDirs: []string{"/run"}, creds: ownCreds()}
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
	// Shown again only where the sandbox put it out of sight: elsewhere
	// the read-only root shows it, and a bind of / would cover /dev.
	if v := s.newView(Command{Dir: "/etc"}, "/srv/ws", []string{"/tmp"}); v.workdir != "" {
		t.Errorf("a workdir the root shows: %+v", v)
	}
	if v := s.newView(Command{Dir: "/tmp/w"}, "/srv/ws", []string{"/tmp"}); v.workdir != "/tmp/w" {
		t.Errorf("a workdir in /tmp: %+v", v)
	}
}

func TestConfigView(t *testing.T) {
	s := testSandbox(t)
	s.home = "/home/dsh-test"
	for _, c := range []struct {
		name, config, ws string
		roots            []string
		hidden           bool
	}{
		{"dsh's own directory", "/etc/dsh/dsh.yaml", "/srv/ws", nil, true},
		{"in the workspace", "/srv/ws/.dsh/dsh.yaml", "/srv/ws", nil, true},
		{"the workspace", "/srv/ws/dsh.yaml", "/srv/ws", nil, false},
		{"holds the workspace", "/srv/x/dsh.yaml", "/srv/x/ws", nil, false},
		{"holds a writable root", "/srv/x/dsh.yaml", "/srv/ws", []string{"/srv/x/cache"}, false},
		{"right under /", "/etc/dsh.yaml", "/srv/ws", nil, false},
		{"/", "/dsh.yaml", "/srv/ws", nil, false},
		{"the home directory", filepath.Join(s.home, "dsh.yaml"), "/srv/ws", nil, false},
		{"in the home directory", filepath.Join(s.home, ".config", "dsh", "dsh.yaml"), "/srv/ws", nil, true},
		{"out of sight (/tmp with bwrap)", "/tmp/x/dsh.yaml", "/srv/ws", nil, false},
	} {
		s.config, s.configDir = c.config, filepath.Dir(c.config)
		roots := append([]string{c.ws}, c.roots...)
		dir, file := s.configView(c.ws, roots, []string{"/run", "/tmp"}, roots)
		if (dir != "") != c.hidden || (c.hidden && (dir != s.configDir || file != c.config)) {
			t.Errorf("%s: %q, %q; want hidden %v", c.name, dir, file, c.hidden)
		}
	}
	// A workdir in it does not keep it visible; one that holds it shows
	// it, so it is hidden on top.
	s.config, s.configDir = "/tmp/x/dsh.yaml", "/tmp/x"
	if dir, _ := s.configView("/srv/ws", []string{"/srv/ws"}, []string{"/tmp"}, []string{"/srv/ws", "/tmp"}); dir != "/tmp/x" {
		t.Errorf("a config directory a workdir shows is not hidden")
	}
}

func TestResolvTarget(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	must(t, os.MkdirAll(filepath.Join(run, "resolve"), 0o755))
	target := filepath.Join(run, "resolve", "stub-resolv.conf")
	must(t, os.WriteFile(target, []byte("nameserver 127.0.0.53\n"), 0o644))
	link := filepath.Join(dir, "resolv.conf")
	must(t, os.Symlink(target, link))
	old := resolvConf
	t.Cleanup(func() { resolvConf = old })
	resolvConf = link
	if got := resolvTarget([]string{run}); got != target {
		t.Errorf("resolvTarget = %q, want %q", got, target)
	}
	if got := resolvTarget([]string{"/elsewhere"}); got != "" {
		t.Errorf("a target outside the run directories: %q", got)
	}
	s := testSandbox(t)
	s.runDirs = []string{run}
	grants := s.landlockGrants(Command{}, view{}, t.TempDir())
	if grants[target]&readRights != readRights {
		t.Errorf("landlock: the resolver's config under /run is not readable: %v", grants[target])
	}
}

// TestCoveredSockets: bound sockets in sight are covered; those under
// the replaced directories, allowed, gone, or hidden by name are not.
func TestCoveredSockets(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "dsh-sockets-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	names := []string{"covered.sock", "allowed.sock", "hidden.sock", "replaced/x.sock", "shown/y.sock"}
	must(t, os.Mkdir(filepath.Join(dir, "replaced"), 0o700))
	must(t, os.Mkdir(filepath.Join(dir, "shown"), 0o700))
	for _, n := range names {
		l, err := net.Listen("unix", filepath.Join(dir, n))
		must(t, err)
		t.Cleanup(func() { l.Close() })
	}
	gone := filepath.Join(dir, "gone.sock")
	l, err := net.Listen("unix", gone)
	must(t, err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	must(t, os.Remove(gone))
	t.Cleanup(func() { l.Close() })
	s := testSandbox(t)
	s.allowed = []string{filepath.Join(dir, "allowed.sock")}
	v := view{roots: []string{filepath.Join(dir, "replaced", "shown")}, workdir: filepath.Join(dir, "shown"),
		hidden: []hiddenPath{{path: filepath.Join(dir, "hidden.sock")}}}
	got := s.coveredSockets(v, []string{filepath.Join(dir, "replaced"), filepath.Join(dir, "shown")})
	want := []string{filepath.Join(dir, "covered.sock"), filepath.Join(dir, "shown", "y.sock")}
	var mine []string
	for _, p := range got {
		if strings.HasPrefix(p, dir+"/") {
			mine = append(mine, p)
		}
	}
	slices.Sort(mine)
	if !slices.Equal(mine, want) {
		t.Errorf("covered %q, want %q", mine, want)
	}
}

// BenchmarkCoveredSockets is what finding the host sockets to cover
// costs each bwrap command, with n sockets bound in one directory: in
// sight (each is covered), or under a replaced directory (/run: each is
// only read and passed over).
//
//	go test -run '^$' -bench CoveredSockets -count 6 ./bash/local/sandbox/
func BenchmarkCoveredSockets(b *testing.B) {
	for _, where := range []string{"covered", "replaced"} {
		for _, n := range []int{0, 10, 100, 1000} {
			if where == "replaced" && n == 0 {
				continue
			}
			b.Run(fmt.Sprintf("%s=%d", where, n), func(b *testing.B) { benchCovered(b, where, n) })
		}
	}
}

func benchCovered(b *testing.B, where string, n int) {
	dir, err := os.MkdirTemp("/var/tmp", "dsh-bench-sockets-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for i := range n {
		l, err := net.Listen("unix", filepath.Join(dir, fmt.Sprint(i, ".sock")))
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
	}
	s := &Sandbox{runDirs: []string{"/run"}, creds: ownCreds()}
	v := view{roots: []string{b.TempDir()}}
	out, want := s.replaced(), n
	if where == "replaced" {
		out, want = append(out, dir), 0
	}
	for b.Loop() {
		if got := s.coveredSockets(v, out); len(got) < want {
			b.Fatalf("covered %d, want at least %d", len(got), want)
		}
	}
}

// TestCoveredSocketsOnlyReachable: a socket the command could not
// connect to (in a directory of another user's that it cannot search, or
// that it may not write) gets no cover: bwrap, as root too, could not make
// its mount point there, and every command would fail.
func TestCoveredSocketsOnlyReachable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: the sockets of another user are made by root")
	}
	dir, err := os.MkdirTemp("/var/tmp", "dsh-sockets-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	private, open := filepath.Join(dir, "private"), filepath.Join(dir, "open")
	must(t, os.Mkdir(private, 0o700))
	must(t, os.Mkdir(open, 0o755))
	socks := map[string]os.FileMode{filepath.Join(private, "a.sock"): 0o777, filepath.Join(open, "b.sock"): 0o777, filepath.Join(open, "c.sock"): 0o755}
	for p, mode := range socks {
		l, err := net.Listen("unix", p)
		must(t, err)
		t.Cleanup(func() { l.Close() })
		must(t, os.Chmod(p, mode))
		must(t, os.Chown(p, 65534, 65534))
	}
	for _, d := range []string{private, open} {
		must(t, os.Chown(d, 65534, 65534))
	}
	s := testSandbox(t)
	var mine []string
	for _, p := range s.coveredSockets(view{}, []string{"/run"}) {
		if strings.HasPrefix(p, dir+"/") {
			mine = append(mine, p)
		}
	}
	if want := []string{filepath.Join(open, "b.sock")}; !slices.Equal(mine, want) {
		t.Errorf("covered %q, want %q", mine, want)
	}
}
