//go:build linux

package sandbox

// Network by domain without root: the session's namespace belongs to a
// holder's user namespace, which dsh cannot enter. So the holder itself
// sets it up: bwrap gives it CAP_NET_ADMIN and CAP_NET_BIND_SERVICE in
// that user namespace (ambient, as bwrap does with --cap-add there), and
// it runs a helper program (dsh's own, or local.sandbox.helper) that adds
// the route and the rules, opens the gateway's two sockets, hands them to
// dsh over a Unix socket (SCM_RIGHTS), then executes the holder's shell.
// The sockets stay in the namespace they were opened in.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// netSetupEnv marks a holder's helper; the sockets go out on fd 4.
const (
	netSetupEnv = "DSH_SANDBOX_NETSETUP"
	netSetupFD  = 4
)

// holderNetMap says why a session namespace held by a holder process
// (dsh not root) cannot have a network map here, "" when it can: a
// helper program must exist, and a holder that sets up must work.
func (s *Sandbox) holderNetMap() string {
	if s.netHelper() == "" {
		return "network by domain without root needs dsh's own program, or local.sandbox.helper, to set up each session's namespace"
	}
	if err := probeNetHolder(s); err != nil {
		return "network by domain without root: a holder could not set up its namespace: " + err.Error()
	}
	return ""
}

// netHelper is the program a holder runs to set up: local.sandbox.helper,
// else this program when it calls HelperMain; "" when neither.
func (s *Sandbox) netHelper() string {
	if s.helper != "" {
		return s.helper
	}
	if !selfHelper.Load() {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// probeNetHolder starts a holder that sets up, once per process.
var probeNetHolder = func(s *Sandbox) error {
	probeOnce.Do(func() {
		n, err := s.bwrap.newHolder(s, true)
		if err == nil {
			n.socks.close()
			n.close()
		}
		probeErr = err
	})
	return probeErr
}

var (
	probeOnce sync.Once
	probeErr  error
)

// netSetupMain is a holder's helper: it sets up the namespace it is in,
// sends the sockets on fd 4, and executes its arguments (the holder's
// shell). On failure it says why on stderr and exits 1.
func netSetupMain() {
	runtime.LockOSThread()
	if err := netSetup(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "dsh network set-up: %v\n", err)
		os.Exit(1)
	}
}

func netSetup(args []string) error {
	if len(args) < 2 {
		return errors.New("no command to execute: want SHELL ARGV…")
	}
	socks, err := setupNetns(-1)
	if err != nil {
		return err
	}
	tf, err := socks.tcp.File()
	if err != nil {
		return err
	}
	uf, err := socks.dns.File()
	if err != nil {
		return err
	}
	rights := unix.UnixRights(int(tf.Fd()), int(uf.Fd()))
	if err := unix.Sendmsg(netSetupFD, []byte{1}, rights, nil, 0); err != nil {
		return fmt.Errorf("sending the sockets: %w", err)
	}
	_ = unix.Close(netSetupFD)
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if len(kv) < len(netSetupEnv) || kv[:len(netSetupEnv)] != netSetupEnv {
			env = append(env, kv)
		}
	}
	return syscall.Exec(args[0], args[1:], env) // the sockets are close-on-exec
}

// receiveSockets reads the gateway's sockets a holder's helper sent on c.
func receiveSockets(c *net.UnixConn) (*gatewaySockets, error) {
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	oob := make([]byte, unix.CmsgSpace(2*4))
	_, oobn, _, _, err := c.ReadMsgUnix(make([]byte, 1), oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("no sockets came (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, fmt.Errorf("the sockets did not come (%v)", err)
	}
	return socketsOf(fds[0], fds[1])
}

// socketsOf makes the gateway's sockets of two received fds.
func socketsOf(tcpFD, udpFD int) (*gatewaySockets, error) {
	tf, uf := os.NewFile(uintptr(tcpFD), "gateway"), os.NewFile(uintptr(udpFD), "resolver")
	defer tf.Close()
	defer uf.Close()
	l, err := net.FileListener(tf)
	if err != nil {
		return nil, err
	}
	pc, err := net.FilePacketConn(uf)
	if err != nil {
		l.Close()
		return nil, err
	}
	tl, ok1 := l.(*net.TCPListener)
	uc, ok2 := pc.(*net.UDPConn)
	if !ok1 || !ok2 {
		l.Close()
		pc.Close()
		return nil, errors.New("the sockets are not TCP and UDP")
	}
	return &gatewaySockets{tcp: tl, dns: uc}, nil
}

// holderSetsUp makes cmd, a holder, set its namespace up for a network
// map: the capabilities it needs there, the helper in front of its shell,
// and a Unix socket on fd 4 whose other end it returns.
func holderSetsUp(s *Sandbox, cmd *exec.Cmd, shell *[]string) (*net.UnixConn, error) {
	helper := s.netHelper()
	if helper == "" {
		return nil, errors.New("sandbox: network holder: no helper program to set up its namespace")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: network holder: %w", err)
	}
	parent := os.NewFile(uintptr(fds[0]), "setup")
	defer parent.Close()
	c, err := net.FileConn(parent)
	if err != nil {
		_ = unix.Close(fds[1])
		return nil, fmt.Errorf("sandbox: network holder: %w", err)
	}
	cmd.Args = append(cmd.Args, "--cap-add", "CAP_NET_ADMIN", "--cap-add", "CAP_NET_BIND_SERVICE")
	cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(uintptr(fds[1]), "setup")) // fd 4
	cmd.Env = append(append([]string(nil), cmd.Env...), netSetupEnv+"=1")
	*shell = append([]string{helper, (*shell)[0]}, *shell...) // HELPER SHELL ARGV… (from $0)
	return c.(*net.UnixConn), nil
}
