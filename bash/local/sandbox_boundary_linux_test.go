package local

// The sandbox's boundary around dsh itself (issue 27, items 4 to 6):
// nothing of dsh's own (its socket, token file, audit log, config
// directory, other sessions' and other dsh processes' spill files) and no
// host Unix socket outside allowSockets is reachable from a sandboxed
// command, wherever it lives; /run reads as empty on every backend; and
// Describe says what is hidden and what stays reachable. Each attack runs
// sandboxed and, as its control, unsandboxed, where it must succeed.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// plantEnv names, in the tests TestSandboxAsNonRoot runs as nobody, a
// directory under /opt that root made for them: only root may make one
// there.
const plantEnv = "DSH_TEST_PLANT_DIR"

// plantDir is a directory outside /run and /tmp (which bwrap replaces)
// where a test plants a host's socket or dsh's files: under /opt where
// the test may make one, else under /var/tmp. It goes with the test.
func plantDir(t *testing.T) string {
	t.Helper()
	parent := os.Getenv(plantEnv)
	if parent == "" && os.Geteuid() == 0 {
		parent = "/opt"
	}
	if parent == "" {
		return outsideDir(t)
	}
	dir, err := os.MkdirTemp(parent, "dsh-test-")
	must(t, err)
	t.Cleanup(func() { retire(dir) }) // it may hold a socket
	return dir
}

// TestSandboxHostSocketsOutOfReach: a Unix socket a host process bound
// outside /run and /tmp (under /opt) cannot be connected to from a
// sandboxed command, though no config lists it: bwrap covers every bound
// socket outside allowSockets, Landlock refuses socket(AF_UNIX). As root,
// a socket in another user's private directory, which no command can
// reach, does not keep commands from starting.
func TestSandboxHostSocketsOutOfReach(t *testing.T) {
	sock := filepath.Join(plantDir(t), "planted.sock")
	unixServer(t, sock)
	attack := "curl -sS --max-time 5 --unix-socket " + sock + " http://x/"
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			if os.Geteuid() == 0 { // after the probe, which would skip the test
				other := filepath.Join(plantDir(t), "other")
				must(t, os.Mkdir(other, 0o700))
				unixServer(t, filepath.Join(other, "s.sock"))
				must(t, os.Chown(other, 65534, 65534))
			}
			if r := s.run("true"); exitCode(r) != "0" {
				t.Fatalf("a sandboxed true failed: %+v", r)
			}
			if r := s.run(attack); exitCode(r) == "0" || r.Stdout.Text == "ok" {
				t.Errorf("reached a host socket under %s: %+v", filepath.Dir(sock), r)
			}
			if r := s.control(attack); r.Stdout.Text != "ok" {
				t.Errorf("control: the socket is not reachable unsandboxed, the test proves nothing: %+v", r)
			}
			if !landlocked(b) {
				return
			}
			// Landlock: no Unix socket can be made at all (seccomp).
			mk := "python3 -c 'import socket; socket.socket(socket.AF_UNIX)'"
			if r := s.run(mk); exitCode(r) == "0" || !strings.Contains(r.Stderr.Text, "Operation not permitted") {
				t.Errorf("landlock: socket(AF_UNIX) was not refused: %+v", r)
			}
		})
	}
}

// dshFiles are the files of a dsh as a test plants them: its socket
// (served), token file, audit log, and config file in a directory that
// also holds a secret.
type dshFiles struct {
	sock, token, audit, config, secret string
}

func plantDshFiles(t *testing.T) dshFiles {
	dir := plantDir(t)
	conf := filepath.Join(dir, "etc-dsh")
	must(t, os.Mkdir(conf, 0o700))
	f := dshFiles{
		sock: filepath.Join(dir, "dsh.sock"), token: filepath.Join(dir, "token"), audit: filepath.Join(dir, "audit.jsonl"),
		config: filepath.Join(conf, "dsh.yaml"), secret: filepath.Join(conf, "hooks.env"),
	}
	unixServer(t, f.sock)
	must(t, os.WriteFile(f.token, []byte("TOKEN-SECRET\n"), 0o600))
	must(t, os.WriteFile(f.audit, []byte(`{"event":"call","command":"AUDIT-LINE"}`+"\n"), 0o600))
	must(t, os.WriteFile(f.config, []byte("local: {}\n"), 0o600))
	must(t, os.WriteFile(f.secret, []byte("API_KEY=CONFIG-DIR-SECRET\n"), 0o600))
	return f
}

// TestSandboxDshFilesOutOfReach: what dsh tells its executor of its own
// (dsh serve's socket and token file, the audit log, the config file) is
// out of a sandboxed command's reach: the socket cannot be connected to,
// the files read nothing, the config file's directory is hidden but the
// config itself reads, unwritable.
func TestSandboxDshFilesOutOfReach(t *testing.T) {
	f := plantDshFiles(t)
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil, WithHidden(f.sock, f.token, f.audit), WithConfigFile(f.config))
			for _, c := range []struct{ name, attack, found string }{
				{"dsh's socket", "curl -sS --max-time 5 --unix-socket " + f.sock + " http://x/", "ok"},
				{"the token file", "cat " + f.token, "TOKEN-SECRET"},
				{"the audit log", "cat " + f.audit, "AUDIT-LINE"},
				{"the config directory", "cat " + f.secret, "CONFIG-DIR-SECRET"},
				{"the config directory's list", "ls -A " + filepath.Dir(f.config), "hooks.env"},
			} {
				if r := s.run(c.attack); strings.Contains(r.Stdout.Text, c.found) {
					t.Errorf("%s: %q reached it: %+v", c.name, c.attack, r)
				}
				if r := s.control(c.attack); !strings.Contains(r.Stdout.Text, c.found) {
					t.Errorf("control %s: %q found nothing unsandboxed, the test proves nothing: %+v", c.name, c.attack, r)
				}
			}
			if r := s.run("cat " + f.config); r.Stdout.Text != "local: {}\n" {
				t.Errorf("the config file is not readable: %+v", r)
			}
			if r := s.run("echo x >> " + f.config); !blocked(r) {
				t.Errorf("the config file is writable: %+v", r)
			}
		})
	}
}

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

// TestSandboxRunIsEmpty: /run lists nothing on every backend (bwrap: an
// empty tmpfs; Landlock: unreadable), and /etc/resolv.conf, which may
// lead into /run, still reads.
func TestSandboxRunIsEmpty(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.Sandbox.Network = &config.Network{Host: true} })
			if r := s.run("ls -A /run"); r.Stdout.Text != "" {
				t.Errorf("/run is not empty: %+v", r)
			}
			if r := s.control("ls -A /run"); r.Stdout.Text == "" {
				t.Logf("the host's /run is empty: the test proves nothing here")
			}
			if r := s.run("cat /etc/resolv.conf > /dev/null"); exitCode(r) != "0" {
				t.Errorf("/etc/resolv.conf does not read: %+v", r)
			}
		})
	}
}

// TestSandboxDescribesItsBoundary: doctor's lines (Describe) say each
// writable root, each allowed socket, the network, what is hidden of
// dsh's own and how many host sockets are covered.
func TestSandboxDescribesItsBoundary(t *testing.T) {
	f := plantDshFiles(t)
	extra := outsideDir(t)
	allowed := filepath.Join(plantDir(t), "allowed.sock")
	unixServer(t, allowed)
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) {
				c.Sandbox.WritableRoots = []string{extra}
				if !landlocked(b) {
					c.Sandbox.AllowSockets = []string{allowed}
				}
			}, WithHidden(f.token), WithConfigFile(f.config))
			lines := s.e.Sandbox().Describe()
			desc := "\n" + strings.Join(lines, "\n") + "\n"
			want := []string{
				"\nwritable: the session's workspace (its cwd; default " + s.ws + ")\n",
				"\nwritable: " + extra + "\n",
				"\nhidden (dsh): " + f.token + "\n",
				"\nhidden (dsh): " + filepath.Dir(f.config) + " (the config file's directory; " + f.config + " reads, read-only)\n",
				"\nnetwork: off",
			}
			if landlocked(b) {
				want = append(want, "\nUnix sockets: none can be made (seccomp)")
			} else {
				want = append(want, "\nsocket: "+allowed+" (allowSockets)\n", "\nhost Unix sockets: ")
			}
			for _, w := range want {
				if !strings.Contains(desc, w) {
					t.Errorf("Describe lacks %q:%s", w, desc)
				}
			}
		})
	}
}
