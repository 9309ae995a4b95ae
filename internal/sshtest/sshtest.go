// Package sshtest starts a real OpenSSH server for tests of the SSH
// executor: `sshd -D -f <config>` on a loopback port, with a host key and
// a client key it generates, a known_hosts file naming the host key, and
// an authorized key for the test user. When the tests run as root the test
// user is a dedicated system account (made once, if missing), so that
// nothing of root's own login (its rc files) slows or changes the
// commands; otherwise it is the user running the tests.
//
// A test skips, saying why, only when sshd is not installed (CI installs
// Debian's openssh-server). The server, its connections and a test's
// agent are stopped when the test ends.
//
// Proxy puts a TCP proxy in front of a server whose Freeze stops every
// byte in both directions without closing anything: a half-open
// connection, as a dead network or a suspended laptop leaves it. With
// Options.Netns the server runs in a network namespace of its own, and
// CutNetwork makes the kernel drop the packets (its veth link goes down):
// the same silence without a proxy in between. That needs root; the test
// skips, saying why, without it.
package sshtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
)

// TestUser is the account the tests log in as when they run as root.
const TestUser = "dsh-ssh-test"

// testHome is its home: empty, so that its login runs no rc file.
const testHome = "/var/lib/dsh-ssh-test"

// Server is a running test sshd.
type Server struct {
	// Host and Port are where it listens (127.0.0.1 and a free port).
	Host string
	Port int
	// User is the account to log in as; UID and GID are its ids.
	User     string
	UID, GID int
	// Dir holds the server's files; readable by User.
	Dir string
	// KnownHosts lists the server's host key for [Host]:Port; Identity is
	// a private key the server accepts for User, and Signer the same key.
	KnownHosts string
	Identity   string
	Signer     gossh.Signer
	// HostKey is the server's public host key.
	HostKey gossh.PublicKey
	// ECDSAHostKey is its second host key, an ECDSA P-256 one, with
	// Options.ECDSAHostKey; nil without.
	ECDSAHostKey gossh.PublicKey

	cmd         *exec.Cmd
	loginScript string // the file of Options.LoginScript, "" without one
	netns       *netns // with Options.Netns; nil without
}

// Options configure a server.
type Options struct {
	// MaxSessions is sshd's MaxSessions (0: sshd's default, 10).
	MaxSessions int
	// LoginScript, when set, is a stand-in for the remote user's rc files:
	// every bash that a session of this server starts, the login shell
	// (when it is bash) and the executor's own among them, sources it
	// first. sshd's SetEnv points BASH_ENV at a file holding it, for this
	// server's sessions only; LoginProcesses finds them.
	LoginScript string
	// ECDSAHostKey gives the server a second host key, of another type
	// (ecdsa-sha2-nistp256), besides its ed25519 one.
	ECDSAHostKey bool
	// Netns runs sshd in a network namespace of its own, reached over a
	// veth pair, so that CutNetwork can make the kernel drop the
	// connection's packets. It needs root and iproute2's ip; without
	// them the test skips, saying why.
	Netns bool
}

// sshdPath finds sshd, or "" when it is not installed.
func sshdPath() string {
	for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	return ""
}

// Start starts a server for t, stopped when t ends; t skips when sshd is
// not installed.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	sshd := sshdPath()
	if sshd == "" {
		t.Skip("sshd is not installed (Debian: apt-get install openssh-server): the SSH executor's tests need a real OpenSSH server")
	}
	u, err := loginUser()
	if err != nil {
		t.Fatalf("the test user: %v", err)
	}
	s := &Server{Host: "127.0.0.1", User: u.Username}
	s.UID, _ = strconv.Atoi(u.Uid)
	s.GID, _ = strconv.Atoi(u.Gid)
	s.Dir = sharedDir(t, "", 0o755)
	hostSigner := s.writeKeys(t)
	s.HostKey = hostSigner.PublicKey()
	if opts.ECDSAHostKey {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		s.ECDSAHostKey = writePrivateKey(t, filepath.Join(s.Dir, "host_ecdsa"), priv).PublicKey()
	}
	if opts.LoginScript != "" {
		s.loginScript = filepath.Join(s.Dir, "login.sh")
		writeFile(t, s.loginScript, []byte(opts.LoginScript+"\n"), 0o644)
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation needs its empty directory.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Netns {
		s.netns = newNetns(t)
		s.Host = s.netns.inner
	}
	// A free port may be taken between its discovery and sshd's bind:
	// try a few. In a namespace of its own, every port is free.
	for attempt := 0; ; attempt++ {
		s.Port = 22
		if s.netns == nil {
			s.Port = freePort(t)
		}
		s.writeConfig(t, opts)
		if err := s.start(t, sshd); err == nil {
			break
		} else if attempt == 4 {
			t.Fatal(err)
		}
	}
	s.writeKnownHosts(t)
	return s
}

// loginUser is the account the tests log in as: TestUser, made if
// missing, when running as root; else the current user.
func loginUser() (*user.User, error) {
	if os.Geteuid() != 0 {
		return user.Current()
	}
	userOnce.Do(func() { userErr = ensureTestUser() })
	if userErr != nil {
		return nil, userErr
	}
	return user.Lookup(TestUser)
}

var (
	userOnce sync.Once
	userErr  error
)

// ensureTestUser makes the test account: a system user with bash, an
// empty home and a password that cannot be typed but does not lock the
// account (sshd refuses locked ones).
func ensureTestUser() error {
	if _, err := user.Lookup(TestUser); err == nil {
		return nil
	}
	out, err := exec.Command("useradd", "--system", "--create-home", "--home-dir", testHome,
		"--shell", "/bin/bash", "--password", "*", TestUser).CombinedOutput()
	if _, lookErr := user.Lookup(TestUser); lookErr == nil {
		return nil // made here, or by a test binary running beside this one
	}
	return fmt.Errorf("useradd %s: %v: %s", TestUser, err, out)
}

// SharedDir is a new directory the test and the server's commands can
// both use (FIFOs, files): owned by the login user, removed when t ends.
func (s *Server) SharedDir(t testing.TB) string {
	t.Helper()
	dir := sharedDir(t, s.Dir, 0o755)
	if err := os.Chown(dir, s.UID, s.GID); err != nil && os.Geteuid() == 0 {
		t.Fatal(err)
	}
	return dir
}

// sharedDir makes a directory with mode under base (the OS temp dir when
// empty), removed when t ends.
func sharedDir(t testing.TB, base string, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp(base, "dsh-sshd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeKeys writes the host key, the client key and authorized_keys, and
// returns the host key.
func (s *Server) writeKeys(t testing.TB) gossh.Signer {
	t.Helper()
	hostSigner := writeKey(t, filepath.Join(s.Dir, "host_ed25519"))
	s.Identity = filepath.Join(s.Dir, "id_ed25519")
	s.Signer = writeKey(t, s.Identity)
	auth := gossh.MarshalAuthorizedKey(s.Signer.PublicKey())
	writeFile(t, filepath.Join(s.Dir, "authorized_keys"), auth, 0o644)
	return hostSigner
}

// writeKey writes a new ed25519 private key in OpenSSH's format and
// returns it as a signer.
func writeKey(t testing.TB, path string) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return writePrivateKey(t, path, priv)
}

// writePrivateKey writes priv in OpenSSH's format and returns it as a
// signer.
func writePrivateKey(t testing.TB, path string, priv crypto.PrivateKey) gossh.Signer {
	t.Helper()
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, pem.EncodeToMemory(block), 0o600)
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

func writeFile(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// writeConfig writes sshd's config for the current port.
func (s *Server) writeConfig(t testing.TB, opts Options) {
	t.Helper()
	lines := []string{
		fmt.Sprintf("ListenAddress %s:%d", s.Host, s.Port),
		"HostKey " + filepath.Join(s.Dir, "host_ed25519"),
	}
	if opts.ECDSAHostKey {
		lines = append(lines, "HostKey "+filepath.Join(s.Dir, "host_ecdsa"))
	}
	lines = append(lines,
		"AuthorizedKeysFile "+filepath.Join(s.Dir, "authorized_keys"),
		"AllowUsers "+s.User,
		"PidFile none",
		"StrictModes no",
		"UsePAM no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password",
		"AllowAgentForwarding no",
		"AllowTcpForwarding no",
		"X11Forwarding no",
		"PrintMotd no",
		"PrintLastLog no",
		"LogLevel ERROR",
		"MaxStartups 200",
	)
	if opts.MaxSessions > 0 {
		lines = append(lines, fmt.Sprintf("MaxSessions %d", opts.MaxSessions))
	}
	if s.loginScript != "" {
		lines = append(lines, "SetEnv BASH_ENV="+s.loginScript)
	}
	writeFile(t, filepath.Join(s.Dir, "sshd_config"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// start runs sshd and waits until it accepts connections; it fails when
// sshd exits first (its port was taken, say).
func (s *Server) start(t testing.TB, sshd string) error {
	t.Helper()
	log := &syncWriter{}
	args := []string{sshd, "-D", "-e", "-f", filepath.Join(s.Dir, "sshd_config")}
	if s.netns != nil {
		// ip execs sshd in the namespace: its pid is sshd's.
		args = append([]string{"ip", "netns", "exec", s.netns.name}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sshd: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	deadline := time.Now().Add(proctest.Wait)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-exited:
			return fmt.Errorf("sshd exited: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("sshd did not listen on %s within %v: %s", addr, proctest.Wait, log.String())
		}
		time.Sleep(10 * time.Millisecond) // sshd signals nothing when it listens
	}
	s.cmd = cmd
	t.Cleanup(func() { s.stop(exited) })
	return nil
}

// stop ends sshd and every process it forked for a connection.
// The children go before the wait: they hold sshd's stderr, which
// cmd.Wait reads to its end, and one serving a half-open connection
// would hold it for good.
func (s *Server) stop(exited chan struct{}) {
	children := descendants(s.cmd.Process.Pid)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	for _, pid := range children {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-exited
}

// KillConnections kills the sshd processes serving connections (not the
// listener): every client's connection drops at once, as when a server's
// connection handler dies. It returns how many it killed.
func (s *Server) KillConnections() int {
	pids := descendants(s.cmd.Process.Pid)
	n := 0
	for _, pid := range pids {
		if cmdline(pid) != "" && strings.HasPrefix(cmdline(pid), "sshd:") {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}

// LoginProcesses lists the live processes of this server's sessions that
// carry its LoginScript (BASH_ENV names its file): a login it holds up, and
// whatever the script started. None without a LoginScript.
func (s *Server) LoginProcesses() []int {
	if s.loginScript == "" {
		return nil
	}
	pids, _ := procfs.Pids()
	var out []int
	for _, pid := range pids {
		if st, ok := procfs.ReadStat(pid); !ok || st.Dead() || st.Kernel() {
			continue
		}
		if v, env := procfs.LookupEnv(pid, "BASH_ENV"); env == procfs.EnvFound && v == s.loginScript {
			out = append(out, pid)
		}
	}
	return out
}

// descendants lists the live descendants of pid, by the parent chain.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procfs.ReadStat(p); ok && !st.Dead() {
			parent[p] = st.PPid
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func cmdline(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return strings.TrimRight(strings.ReplaceAll(string(data), "\x00", " "), " ")
}

// writeKnownHosts writes a known_hosts file naming the server's key.
func (s *Server) writeKnownHosts(t testing.TB) {
	t.Helper()
	s.KnownHosts = s.KnownHostsFor(t, s.HostKey, s.Port)
}

// KnownHostsFor writes a new known_hosts file that names key for the
// server's host at each of ports (a proxy's port, say), and returns its
// path.
func (s *Server) KnownHostsFor(t testing.TB, key gossh.PublicKey, ports ...int) string {
	t.Helper()
	f, err := os.CreateTemp(s.Dir, "known_hosts-")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	var lines []string
	for _, port := range ports {
		addr := knownhosts.Normalize(net.JoinHostPort(s.Host, strconv.Itoa(port)))
		lines = append(lines, knownhosts.Line([]string{addr}, key))
	}
	writeFile(t, f.Name(), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return f.Name()
}

// Config is an ssh section for the server: its host and port, the test
// user, the identity file and known_hosts, a 200 ms grace and a 1 s
// keep-alive (stretched by proctest.Slowdown: a loaded machine answers
// late), the spill files in a directory of the test's, and the test run's
// leak mark in every command's environment.
func (s *Server) Config(t testing.TB) config.SSH {
	t.Helper()
	return config.SSH{
		Host:         s.Host,
		Port:         s.Port,
		User:         s.User,
		IdentityFile: s.Identity,
		KnownHosts:   s.KnownHosts,
		Grace:        200 * time.Millisecond,
		Keepalive:    proctest.Scale(time.Second),
		SpillDir:     s.SharedDir(t),
		Env:          config.SSHEnv{Set: proctest.Set()},
	}
}

// freePort is a loopback port nobody listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Agent serves an SSH agent holding the server's client key on a Unix
// socket, until t ends, and returns the socket's path.
func (s *Server) Agent(t testing.TB) string {
	t.Helper()
	keyring := agent.NewKeyring()
	data, err := os.ReadFile(s.Identity)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := gossh.ParseRawPrivateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.Add(agent.AddedKey{PrivateKey: raw}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sharedDir(t, "", 0o700), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = agent.ServeAgent(keyring, c)
			})
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	return sock
}

// syncWriter is a strings.Builder that sshd's stderr copier writes while
// the test reads it.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
