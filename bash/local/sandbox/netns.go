//go:build linux

package sandbox

// network: false with bwrap: one network namespace per session, with only
// lo, so that a server one command starts in the background is reachable
// by the session's later commands and by no other session. As root, dsh
// makes the namespace itself and starts each bwrap from a thread that
// entered it (setns); as another user, a holder process in a user
// namespace of its own owns it and each command joins it through nsenter.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// netMode is how commands get their network.
type netMode int

const (
	netHost       netMode = iota // network: true
	netSetns                     // a namespace per session, entered with setns (root)
	netHolder                    // a namespace per session, owned by a holder, joined with nsenter
	netPerCommand                // bwrap --unshare-net: a namespace per command
	netBlocked                   // landlock: no IP socket at all
)

func (m netMode) describe() string {
	switch m {
	case netHost:
		return "the host's network, loopback services included"
	case netSetns:
		return "off; one network namespace per session with only lo, shared by its commands (entered with setns)"
	case netHolder:
		return "off; one network namespace per session with only lo, shared by its commands (held by a process, joined with nsenter)"
	case netPerCommand:
		return "off; each command has a network namespace of its own with only lo: a server started in one call is not reachable from the next"
	default:
		return "off; no IP sockets at all, loopback included (seccomp)"
	}
}

// sessionNet is one session's network namespace: an open namespace file
// (root) or a holder process.
type sessionNet struct {
	fd     int // netSetns: the namespace; -1 otherwise
	holder *exec.Cmd
	stop   *os.File // the holder's stdin: closing it ends the holder
	pid    int      // the holder's child, whose namespaces commands join
	// socks are the gateway's sockets a holder set up (a network map
	// without root); nil otherwise.
	socks *gatewaySockets
}

// newSessionNet makes a session's namespace, in the sandbox's mode; nil
// when commands do not share one.
func (s *Sandbox) newSessionNet() (*sessionNet, error) {
	switch s.net {
	case netSetns:
		fd, err := newNetns()
		if err != nil {
			return nil, fmt.Errorf("sandbox: network namespace: %w", err)
		}
		return &sessionNet{fd: fd}, nil
	case netHolder:
		return s.bwrap.newHolder(s, s.netMap != nil)
	}
	return nil, nil
}

func (n *sessionNet) close() {
	if n == nil {
		return
	}
	n.socks.close() // the gateway's already, when it started
	if n.fd >= 0 {
		_ = unix.Close(n.fd)
	}
	if n.holder != nil {
		_ = n.stop.Close()
		_ = n.holder.Wait()
	}
}

// nsenterArgs is the nsenter prefix that joins a holder's namespaces.
func (n *sessionNet) nsenterArgs(nsenter string) []string {
	p := "/proc/" + strconv.Itoa(n.pid) + "/ns/"
	return []string{nsenter, "--preserve-credentials", "--user=" + p + "user", "--net=" + p + "net", "--"}
}

// newNetns makes a network namespace with lo up and returns it open.
func newNetns() (int, error) {
	fd := -1
	err := onThreadIn(func() error { return unix.Unshare(unix.CLONE_NEWNET) }, func() error {
		var err error
		if fd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return err
		}
		if err = loUp(); err != nil {
			_ = unix.Close(fd)
			fd = -1
		}
		return err
	})
	return fd, err
}

// inNetns runs start on a thread that entered the namespace fd, so the
// process it starts is born there.
func inNetns(fd int, start func() error) error {
	enter := func() error {
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("sandbox: entering the session's network namespace: %w", err)
		}
		return nil
	}
	return onThreadIn(enter, start)
}

// onThreadIn runs fn on a goroutine of its own whose OS thread enter moved
// into another network namespace, then brings the thread back. A thread
// that cannot come back is discarded (its goroutine ends locked), which
// also ends what fn started on it (the parent-death signal): never seen in
// practice, since going back to where a thread came from is always
// allowed.
func onThreadIn(enter, fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- err
			return
		}
		defer unix.Close(orig)
		if err := enter(); err != nil {
			// Still where it was: unshare and setns change nothing on failure.
			runtime.UnlockOSThread()
			ch <- err
			return
		}
		err = fn()
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- err
	}()
	return <-ch
}

// newHolder starts a session's holder: bwrap with a user and a network
// namespace of its own (bwrap brings lo up), running a shell that says
// ready, then waits for its stdin to close; with setup, its helper sets
// the namespace up for a network map first (netmap_holder.go). bwrap reports its child's pid
// on the info fd — before that child has written its uid and gid maps: a
// command that joined the user namespace then would have no uid there, and
// its own bwrap could make no namespace. So the holder is ready only once
// its shell runs.
func (b *bwrapBackend) newHolder(s *Sandbox, setup bool) (*sessionNet, error) {
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		infoW.Close()
		return nil, err
	}
	defer readyR.Close()
	stdin, stop, err := os.Pipe()
	if err != nil {
		infoW.Close()
		readyW.Close()
		return nil, err
	}
	var stderr bytes.Buffer // safe to read once Wait returned
	cmd := &exec.Cmd{
		Path:        b.path,
		Args:        []string{"bwrap", "--unshare-user", "--unshare-net", "--die-with-parent"},
		Env:         s.env,
		Dir:         "/",
		Stdin:       stdin,
		Stdout:      readyW,
		Stderr:      &stderr,
		ExtraFiles:  []*os.File{infoW},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	shell := []string{s.shell, "-c", "echo ready; exec >&-; read -r _"}
	var conn *net.UnixConn
	if setup {
		if conn, err = holderSetsUp(s, cmd, &shell); err != nil {
			stdin.Close()
			infoW.Close()
			readyW.Close()
			stop.Close()
			return nil, err
		}
		defer conn.Close()
	}
	cmd.Args = append(append(cmd.Args, "--ro-bind", "/", "/", "--info-fd", "3", "--"), shell...)
	err = cmd.Start()
	stdin.Close()
	infoW.Close()
	readyW.Close()
	if len(cmd.ExtraFiles) > 1 {
		cmd.ExtraFiles[1].Close() // the helper's end
	}
	if err != nil {
		stop.Close()
		return nil, fmt.Errorf("sandbox: network holder: %w", err)
	}
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(bufio.NewReader(infoR)).Decode(&info); err != nil || info.ChildPid <= 0 {
		stop.Close()
		_ = cmd.Wait()
		// %v, here and below: err is nil when what came was merely wrong.
		return nil, fmt.Errorf("sandbox: network holder reported no pid: %v", err)
	}
	var socks *gatewaySockets
	if conn != nil {
		if socks, err = receiveSockets(conn); err != nil {
			stop.Close()
			_ = cmd.Wait()
			return nil, fmt.Errorf("sandbox: network holder's set-up: %w (%s)", err, strings.TrimSpace(stderr.String()))
		}
	}
	if line, err := bufio.NewReader(readyR).ReadString('\n'); line != "ready\n" {
		socks.close()
		stop.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("sandbox: network holder did not start: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	return &sessionNet{fd: -1, holder: cmd, stop: stop, pid: info.ChildPid, socks: socks}, nil
}

// loUp brings up lo in the calling thread's network namespace.
func loUp() error {
	sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(sock)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(sock, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(sock, unix.SIOCSIFFLAGS, ifr)
}
