package main

// Where dsh serve listens: a TCP address, or a Unix socket only its owner
// can reach (docs/spec.md §6.1).

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// unixPrefix starts an --addr that names a Unix socket.
const unixPrefix = "unix:"

// serveAddr is a parsed --addr.
type serveAddr struct {
	// socket is the path of a Unix socket; "" for TCP.
	socket string
	// tcp is HOST:PORT, and host its host, for TCP.
	tcp, host string
}

// parseAddr reads --addr: unix:PATH or HOST:PORT.
func parseAddr(addr string) (serveAddr, error) {
	if path, ok := strings.CutPrefix(addr, unixPrefix); ok {
		if path == "" {
			return serveAddr{}, usageError("serve: --addr unix: needs a path (unix:/run/user/1000/dsh.sock)")
		}
		return serveAddr{socket: path}, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return serveAddr{}, usageError("serve: --addr %s: %v", addr, err)
	}
	return serveAddr{tcp: addr, host: host}, nil
}

// noAuthWarning is the line dsh serve prints with --no-auth on a TCP
// address: loopback keeps other machines out, not other users of this one.
func noAuthWarning(addr string) string {
	return "dsh: warning: --no-auth on " + addr + ": every user of this machine can run commands as you; --addr unix:PATH serves a socket only you can open"
}

// listen opens the listener of a and returns it with the URL clients use
// (for a socket, the URL to send through it).
func (a serveAddr) listen(log *slog.Logger) (net.Listener, string, error) {
	if a.socket == "" {
		ln, err := net.Listen("tcp", a.tcp)
		if err != nil {
			return nil, "", err
		}
		return ln, "http://" + ln.Addr().String() + "/mcp", nil
	}
	ln, err := listenPrivate(a.socket)
	if err != nil {
		return nil, "", err
	}
	return ownerOnly{UnixListener: ln, log: log}, "http://localhost/mcp", nil
}

// listenPrivate makes a Unix socket at path with mode 0600. The umask is
// narrowed while the socket is made, so that it is never open to others,
// not even between its creation and a chmod. A socket left by a dsh that
// died (nothing answers on it) is replaced; anything else at path is left
// alone and refused.
func listenPrivate(path string) (*net.UnixListener, error) {
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	old := unix.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, err
	}
	return ln, nil
}

// removeStaleSocket removes a socket at path that nothing listens on.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().Type() != os.ModeSocket:
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	c, err := net.Dial("unix", path)
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("%s is in use by another server", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return err
	}
	return os.Remove(path)
}

// ownerOnly accepts only connections from processes of dsh's own user,
// whatever the socket's mode later becomes: the kernel names the peer
// (SO_PEERCRED), which cannot be forged.
type ownerOnly struct {
	*net.UnixListener
	log *slog.Logger
}

func (l ownerOnly) Accept() (net.Conn, error) {
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == os.Getuid() {
			return c, nil
		}
		l.log.Warn("refused a connection from another user", "uid", uid, "err", err)
		_ = c.Close()
	}
}

// peerUID is the user id of the process at the other end of c.
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid, cerr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { uid, cerr = socketPeerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, cerr
}
