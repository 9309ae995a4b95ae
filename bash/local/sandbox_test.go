//go:build linux

package local

// The sandbox's claims, each proven by the attack it stops: every test
// runs the attack sandboxed and, as a control, unsandboxed
// (dangerouslyDisableSandbox), where it must succeed; a test whose
// control fails proves nothing and says so.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
)

// backends are the sandbox backends every claim is checked on: bwrap,
// landlock on a thread of dsh, and landlock through a helper (this test
// binary, whose TestMain calls sandbox.HelperMain).
var backends = []string{config.BackendBwrap, config.BackendLandlock, landlockHelper}

const landlockHelper = "landlock-helper"

// sandboxOf is the sandbox section of backend b in mode.
func sandboxOf(b, mode string) config.Sandbox {
	if b == landlockHelper {
		return config.Sandbox{Mode: mode, Backend: config.BackendLandlock, Helper: os.Args[0]}
	}
	return config.Sandbox{Mode: mode, Backend: b}
}

// landlocked reports whether b is a landlock backend.
func landlocked(b string) bool { return b != config.BackendBwrap }

// sbx is an executor with a sandbox, a workspace and a session.
type sbx struct {
	t       testing.TB
	e       *Executor
	backend string
	ws      string
	owner   *session.Session
}

// newSbx makes a sandboxed executor; a backend this machine cannot run is
// skipped with the reason, which CI prints.
func newSbx(t testing.TB, backend, mode string, edit func(*config.Local), opts ...Option) *sbx {
	t.Helper()
	cfg := testConfig(t)
	ws := t.TempDir()
	cfg.Cwd = ws
	cfg.Sandbox = sandboxOf(backend, mode)
	if edit != nil {
		edit(&cfg)
	}
	e, err := New(cfg, opts...)
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("SKIP-REASON: sandbox backend %s cannot run here: %v", backend, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	s := &sbx{t: t, e: e, backend: backend, ws: ws, owner: session.New("test", ws)}
	t.Cleanup(s.owner.End)
	return s
}

// run runs command as the session, sandboxed, with a 10 s timeout
// (scaled by proctest.Slowdown: a bound, not what the tests check).
func (s *sbx) run(command string) bash.Result {
	s.t.Helper()
	return s.runSpec(bash.Request{Command: command, Owner: s.owner})
}

// control runs command as the session, outside the sandbox.
func (s *sbx) control(command string) bash.Result {
	s.t.Helper()
	return s.runSpec(bash.Request{Command: command, Owner: s.owner, Unsandboxed: true})
}

func (s *sbx) runSpec(req bash.Request) bash.Result {
	s.t.Helper()
	if req.TimeoutMs == nil {
		ms := float64(proctest.Scale(10*time.Second) / time.Millisecond)
		req.TimeoutMs = &ms
	}
	spec, err := s.e.Resolve(req)
	if err != nil {
		s.t.Fatal(err)
	}
	res, err := bash.Run(context.Background(), s.e, spec)
	if err != nil {
		s.t.Fatalf("Run(%q): %v", req.Command, err)
	}
	return res
}

// blocked reports whether a write or read failed the way the backend
// fails it: EROFS (bwrap's read-only mounts) or EACCES (Landlock).
func blocked(r bash.Result) bool {
	return exitCode(r) != "0" && (strings.Contains(r.Stderr.Text, "Read-only file system") ||
		strings.Contains(r.Stderr.Text, "Permission denied"))
}

// outsideDir is a directory outside the workspace that bwrap shows (not
// under /tmp, which the sandbox replaces).
func outsideDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "dsh-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestSandboxWritesStayInTheWorkspace(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			outside := outsideDir(t)
			extra := outsideDir(t)
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) {
				c.Sandbox.WritableRoots = []string{extra}
			})
			must(t, os.MkdirAll(filepath.Join(s.ws, ".git"), 0o755))
			must(t, os.WriteFile(filepath.Join(s.ws, ".git", "config"), []byte("[core]\n"), 0o644))
			must(t, os.Mkdir(filepath.Join(s.ws, "src"), 0o755))

			// Inside the workspace (Landlock: in an existing entry).
			if r := s.run("echo x > src/f && cat src/f"); exitCode(r) != "0" || r.Stdout.Text != "x\n" {
				t.Errorf("write in the workspace: %+v", r)
			}
			must(t, os.Mkdir(filepath.Join(extra, "sub"), 0o755))
			if r := s.run("echo x > " + extra + "/sub/f"); exitCode(r) != "0" {
				t.Errorf("write in a writable root: %+v", r)
			}
			if r := s.run("echo x > $TMPDIR/f && cat $TMPDIR/f"); exitCode(r) != "0" {
				t.Errorf("write in TMPDIR: %+v", r)
			}
			// Outside, and the protected .git/config.
			for _, attack := range []string{
				"echo x > " + outside + "/f",
				"echo pwned >> .git/config",
				"mkdir .git/hooks && echo pwned > .git/hooks/pre-commit",
			} {
				if r := s.run(attack); !blocked(r) {
					t.Errorf("%s: not blocked: %+v", attack, r)
				}
				if r := s.control(attack); exitCode(r) != "0" {
					t.Errorf("control %s failed, the test proves nothing: %+v", attack, r)
				}
			}
		})
	}
}

func TestSandboxReadOnlyWritesOnlyTmp(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxReadOnly, nil)
			must(t, os.Mkdir(filepath.Join(s.ws, "src"), 0o755))
			if r := s.run("echo x > src/f"); !blocked(r) {
				t.Errorf("write in the workspace, read-only mode: %+v", r)
			}
			if r := s.control("echo x > src/f"); exitCode(r) != "0" {
				t.Errorf("control: %+v", r)
			}
			if r := s.run("echo x > $TMPDIR/f && cat $TMPDIR/f"); r.Stdout.Text != "x\n" {
				t.Errorf("TMPDIR is not writable: %+v", r)
			}
			// Per command: the next command's /tmp is empty again.
			if r := s.run("cat $TMPDIR/f"); exitCode(r) == "0" {
				t.Errorf("read-only mode's /tmp outlived its command: %+v", r)
			}
		})
	}
}

func TestSandboxHidesCredentials(t *testing.T) {
	home := outsideDir(t) // not under /tmp, which bwrap replaces
	t.Setenv("HOME", home)
	must(t, os.Mkdir(filepath.Join(home, ".ssh"), 0o700))
	key := filepath.Join(home, ".ssh", "id_ed25519")
	must(t, os.WriteFile(key, []byte("PRIVATE KEY\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine x password y\n"), 0o600))
	token := filepath.Join(home, "token")
	must(t, os.WriteFile(token, []byte("served-token\n"), 0o600))
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Cwd = t.TempDir()
			cfg.Sandbox = sandboxOf(b, config.SandboxWorkspaceWrite)
			e, err := New(cfg, WithHidden(token))
			if errors.Is(err, sandbox.ErrUnavailable) {
				t.Skipf("SKIP-REASON: sandbox backend %s cannot run here: %v", b, err)
			}
			must(t, err)
			t.Cleanup(func() { e.Close() })
			s := &sbx{t: t, e: e, backend: b, ws: cfg.Cwd, owner: session.New("hide", cfg.Cwd)}
			t.Cleanup(s.owner.End)
			self := strconv.Itoa(os.Getpid())
			for _, attack := range []string{
				"cat ~/.ssh/id_ed25519",
				"cat " + token,
			} {
				r := s.run(attack)
				for _, secret := range []string{"PRIVATE KEY", "served-token"} {
					if strings.Contains(r.Stdout.Text, secret) {
						t.Errorf("%s: read %q: %q", attack, secret, r.Stdout.Text)
					}
				}
			}
			// Hidden reads as empty with bwrap (a directory as an empty
			// one), is unreadable with Landlock.
			r := s.run("cat ~/.ssh/id_ed25519; cat ~/.netrc")
			if b == config.BackendBwrap && (r.Stdout.Text != "" || !strings.Contains(r.Stderr.Text, "No such file")) {
				t.Errorf("bwrap: the hidden key does not read as empty: %+v", r)
			}
			if r := s.run("cat ~/.netrc"); b == config.BackendBwrap && (exitCode(r) != "0" || r.Stdout.Text != "") {
				t.Errorf("bwrap: the hidden file does not read as empty: %+v", r)
			}
			if landlocked(b) && !blocked(r) {
				t.Errorf("landlock: the hidden key is not EACCES: %+v", r)
			}
			// dsh's environment is out of sight.
			if r := s.run("cat /proc/" + self + "/environ"); r.Stdout.Text != "" {
				t.Errorf("read dsh's environment: %+v", r)
			}
			// Controls: outside the sandbox each secret is there to read.
			if r := s.control("cat ~/.ssh/id_ed25519 ~/.netrc " + token); !strings.Contains(r.Stdout.Text, "PRIVATE KEY") || !strings.Contains(r.Stdout.Text, "served-token") || !strings.Contains(r.Stdout.Text, "machine") {
				t.Errorf("control: %+v", r)
			}
			if r := s.control("cat /proc/" + self + "/environ"); !strings.Contains(r.Stdout.Text, "PATH=") {
				t.Errorf("control: dsh's environment not readable unsandboxed: %+v", r)
			}
			// Nor can a command write into dsh's stdout to forge a result.
			if r := s.run("echo forged > /proc/" + self + "/fd/1"); exitCode(r) == "0" {
				t.Errorf("wrote into dsh's stdout: %+v", r)
			}
		})
	}
}

// retire removes path, a closed socket's file or the directory that held
// one, once the commands that may have listed the socket while it was
// bound have made their mounts.
func retire(path string) {
	time.Sleep(proctest.Scale(time.Second))
	os.RemoveAll(path)
}

// unixServer serves "ok" over HTTP on a Unix socket at path.
func unixServer(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	// Closed, the socket leaves /proc/net/unix but its file stays a
	// while: another test's sandboxed command may have listed it while
	// bound, and its bwrap fails to cover a file gone before its mounts
	// (docs/spec.md §11, a known race).
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })}
	done := make(chan struct{})
	go func() { _ = srv.Serve(l); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done; retire(path) })
}

func TestSandboxNetworkOff(t *testing.T) {
	// A listener on the host's loopback, and a Unix socket under /run.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	sock := filepath.Join(runDir(t), fmt.Sprintf("dsh-test-%d.sock", os.Getpid()))
	unixServer(t, sock)
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			for _, attack := range []string{
				"exec 3<>/dev/tcp/127.0.0.1/" + port,
				"curl -sS --max-time 5 --unix-socket " + sock + " http://x/",
			} {
				if r := s.run(attack); exitCode(r) == "0" {
					t.Errorf("%s: reached the host: %+v", attack, r)
				}
				if r := s.control(attack); exitCode(r) != "0" {
					t.Errorf("control %s failed, the test proves nothing: %+v", attack, r)
				}
			}
			// ping: no route out of the session's namespace (bwrap), no
			// socket at all (Landlock); nothing is sent either way.
			if r := s.run("ping -c 1 -W 1 192.0.2.1"); exitCode(r) == "0" {
				t.Errorf("ping went out: %+v", r)
			}
		})
	}
}

// TestSandboxFirstCommandsOfSessions: the first command of each session,
// which makes the session's network namespace, runs, many sessions at
// once. (Without root, a holder's namespace was once joined before the
// holder had written its uid map: the command's own bwrap could then make
// no namespace, now and then.)
func TestSandboxFirstCommandsOfSessions(t *testing.T) {
	s := newSbx(t, "bwrap", config.SandboxWorkspaceWrite, nil)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			owner := session.New(fmt.Sprintf("first-%d", i), s.ws)
			defer owner.End()
			if r := s.runSpec(bash.Request{Command: "true", Owner: owner}); exitCode(r) != "0" {
				t.Errorf("session %d's first command: %+v", i, r)
			}
		})
	}
	wg.Wait()
}

func TestSandboxSessionSharesItsNetwork(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("SKIP-REASON: no /usr/bin/python3 for the dev server")
	}
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			desc := strings.Join(s.e.Sandbox().Describe(), "\n")
			if landlocked(b) {
				// Landlock has no namespace to share (docs/spec.md §11):
				// doctor says so, and a server cannot even listen.
				if !strings.Contains(desc, "network: off; no IP sockets at all") {
					t.Errorf("landlock: doctor does not say how the network is off: %s", desc)
				}
				r := s.run("/usr/bin/python3 -c 'import socket; socket.socket().bind((\"127.0.0.1\", 0))'")
				if exitCode(r) == "0" {
					t.Errorf("landlock: a server could listen: %+v", r)
				}
				return
			}
			shared := strings.Contains(desc, "one network namespace per session")
			if shared {
				t.Logf("shared per session here; doctor says: %s", strings.ReplaceAll(desc, "\n", "; "))
			} else {
				// bwrap on a machine where no namespace can be shared:
				// doctor must say so, and say it true (below).
				t.Logf("SKIP-REASON: bwrap cannot share a network namespace per session here; doctor says: %s", strings.ReplaceAll(desc, "\n", "; "))
				if !strings.Contains(desc, "network: off; each command has a network namespace of its own") ||
					!strings.Contains(desc, "\nnetwork namespace per command: ") {
					t.Errorf("doctor does not say why each command has a namespace of its own: %s", desc)
				}
			}
			spec, err := s.e.Resolve(bash.Request{Command: "exec /usr/bin/python3 -u -m http.server 8765 --bind 127.0.0.1", Owner: s.owner})
			must(t, err)
			p, err := s.e.Start(context.Background(), spec)
			must(t, err)
			defer func() { p.Kill(); <-p.Done() }()
			proctest.Eventually(t, proctest.Wait, func() error {
				if !strings.Contains(p.Read().Delta, "Serving HTTP") {
					return errors.New("the server is not serving yet")
				}
				return nil
			})
			get := "curl -sS -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:8765/"
			if r := s.run(get); shared && r.Stdout.Text != "200" {
				t.Errorf("the session's next call cannot reach its server: %+v", r)
			} else if !shared && exitCode(r) == "0" {
				t.Errorf("doctor says each command has a namespace of its own, yet the next call reached the server: %+v", r)
			}
			other := session.New("other", s.ws)
			defer other.End()
			if r := s.runSpec(bash.Request{Command: get, Owner: other}); exitCode(r) == "0" {
				t.Errorf("another session reached the server: %+v", r)
			}
			if c, err := net.DialTimeout("tcp", "127.0.0.1:8765", time.Second); err == nil {
				c.Close()
				t.Errorf("the host reached the session's server")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// nonRootRunDir names, in a test run as another user, a directory under
// /run that the root test made for it: only root may make one there.
const nonRootRunDir = "DSH_TEST_RUN_DIR"

// runDir is where a test makes a Unix socket under /run.
func runDir(t *testing.T) string {
	if d := os.Getenv(nonRootRunDir); d != "" {
		return d
	}
	return "/run"
}

// TestSandboxAsNonRoot runs the sandbox's tests again as nobody: without
// root, bwrap makes its namespaces as an unprivileged user, the session's
// network namespace is held by a process and joined with nsenter, and
// containment falls back to the marker. Then the network tests once more
// as nobody without nsenter on PATH, where no namespace can be shared:
// each command has one of its own, the network stays off, and doctor's
// description says so (TestSandboxSessionSharesItsNetwork checks it).
func TestSandboxAsNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: switching to another user needs root; the tests ran as this user already")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("SKIP-REASON: no setpriv (util-linux) to run the tests as another user")
	}
	dir, err := os.MkdirTemp("/var/tmp", "dsh-nonroot-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "local.test")
	data, err := os.ReadFile(os.Args[0])
	must(t, err)
	must(t, os.WriteFile(bin, data, 0o755))
	tmp, run := filepath.Join(dir, "tmp"), fmt.Sprintf("/run/dsh-test-%d", os.Getpid())
	plant := fmt.Sprintf("/opt/dsh-test-%d", os.Getpid())
	for _, d := range []string{tmp, run, plant} {
		must(t, os.Mkdir(d, 0o755))
		must(t, os.Chown(d, 65534, 65534))
	}
	must(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(run); os.RemoveAll(plant) })
	suid := filepath.Join(dir, "suid-id")
	id, err := exec.LookPath("id")
	must(t, err)
	data, err = os.ReadFile(id)
	must(t, err)
	must(t, os.WriteFile(suid, data, 0o755))
	must(t, os.Chmod(suid, 0o755|os.ModeSetuid))
	// forced: the run takes away what it needs to share a namespace, so
	// its skip reason is this test's doing, not this machine's.
	asNobody := func(name, tests string, forced bool, env ...string) {
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", bin,
			"-test.run", "^TestSandbox("+tests+")$", "-test.v", "-test.count=1")
		cmd.Env = append(append(os.Environ(), "TMPDIR="+tmp, nonRootRunDir+"="+run, plantEnv+"="+plant, setuidEnv+"="+suid), env...)
		cmd.Dir = tmp
		out, err := cmd.CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "--- ") || strings.Contains(line, "SKIP-REASON") || strings.Contains(line, "_test.go:") {
				if forced {
					line = strings.ReplaceAll(line, "SKIP-REASON", "as expected")
				}
				t.Log(name + ": " + line)
			}
		}
		if err != nil {
			t.Fatalf("the sandbox tests failed %s: %v", name, err)
		}
	}
	asNobody("as nobody", "SetuidDoesNotElevate|PrivilegesAndEnv|WritesStayInTheWorkspace|ReadOnlyWritesOnlyTmp|HidesCredentials|NetworkOff|SessionSharesItsNetwork|FirstCommandsOfSessions|Signals|SpillFilesReadableByTheSession|SessionEndEndsItsTasks|BadInput|ProgressAndStdin|AllowSockets|HostSocketsOutOfReach|DshFilesOutOfReach|OtherDshSpillOutOfReach|RunIsEmpty|DescribesItsBoundary|NetworkMap.*|Terminal.*", false)
	noNsenter := filepath.Join(dir, "bin")
	must(t, os.Mkdir(noNsenter, 0o755))
	linkPathExcept(t, noNsenter, "nsenter")
	asNobody("as nobody without nsenter", "NetworkOff|SessionSharesItsNetwork|FirstCommandsOfSessions", true, "PATH="+noNsenter)
}

// linkPathExcept fills dir with links to the programs on PATH but name:
// a PATH where only that one is missing.
func linkPathExcept(t *testing.T, dir, name string) {
	t.Helper()
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			link := filepath.Join(dir, e.Name())
			if e.Name() == name || e.IsDir() {
				continue
			}
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier PATH entry's comes first
			}
			must(t, os.Symlink(filepath.Join(p, e.Name()), link))
		}
	}
}

// TestSandboxSpareNetworkIsOneSessions: the session network made ahead
// (Started waits for it) goes to one session only: sessions whose first
// commands come after it, one by one and at once, each run in a network
// namespace of their own, none the host's, and each session's later
// commands in its own again.
func TestSandboxSpareNetworkIsOneSessions(t *testing.T) {
	s := newSbx(t, "bwrap", config.SandboxWorkspaceWrite, nil)
	if !strings.Contains(strings.Join(s.e.Sandbox().Describe(), "\n"), "one network namespace per session") {
		t.Skip("SKIP-REASON: no network namespace per session here")
	}
	host, err := os.Readlink("/proc/self/ns/net")
	must(t, err)
	netns := func(owner *session.Session) string {
		r := s.runSpec(bash.Request{Command: "readlink /proc/self/ns/net", Owner: owner})
		if exitCode(r) != "0" {
			t.Fatalf("%+v", r)
		}
		return strings.TrimSpace(r.Stdout.Text)
	}
	seen := map[string]string{}
	check := func(name, ns string) {
		if ns == host || seen[ns] != "" {
			t.Errorf("session %s runs in %s, which is the host's (%s) or session %s's", name, ns, host, seen[ns])
		}
		seen[ns] = name
	}
	for i := range 3 {
		s.e.Started() // a spare is there
		owner := session.New(fmt.Sprintf("after-%d", i), s.ws)
		t.Cleanup(owner.End)
		ns := netns(owner)
		check(owner.ID(), ns)
		if again := netns(owner); again != ns {
			t.Errorf("session %s's second command runs in %s, its first in %s", owner.ID(), again, ns)
		}
	}
	s.e.Started()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			owner := session.New(fmt.Sprintf("at-once-%d", i), s.ws)
			defer owner.End()
			ns := netns(owner)
			mu.Lock()
			check(owner.ID(), ns)
			mu.Unlock()
		})
	}
	wg.Wait()
}
