package main

// A reserve of file descriptors for commands (docs/spec.md §6.1): a flood
// of connections to either listener of dsh serve must not take the
// descriptors a command's pipes and spill files need.

import (
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The reserve: fdReserveBase descriptors for commands that start (a
// command's spawn takes about ten at once: its pipes, the exec error pipe,
// a pidfd, a cgroup's, a sandbox's), and fdReservePerCommand more for each
// command running, for what it opens later (its two spill files, and a
// finished stream's file read back).
const (
	fdReserveBase       = 128
	fdReservePerCommand = 4
)

// fdReserve is a listener that closes each connection it accepts whose
// descriptor lies among the last reserve() below RLIMIT_NOFILE. The
// kernel gives a new descriptor the lowest free number, so a connection
// numbered N means that 0…N are all open: counting them costs nothing, and
// counts everything the process has open, not connections alone. No
// connection then ever holds one of the reserved descriptors; commands
// take them once the numbers below are used up.
type fdReserve struct {
	net.Listener
	reserve func() int
	log     *slog.Logger
	name    string // the listener, for the log

	refused atomic.Int64
	logged  atomic.Int64 // unix nanoseconds of the last warning
}

// reserveFDs wraps ln; running counts the commands that run now.
func reserveFDs(ln net.Listener, name string, running func() int, log *slog.Logger) *fdReserve {
	return &fdReserve{Listener: ln, name: name, log: log,
		reserve: func() int { return fdReserveBase + fdReservePerCommand*running() }}
}

func (l *fdReserve) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		fd, ok := connFD(c)
		limit := nofile()
		if !ok || fd < limit-l.reserve() {
			return c, nil
		}
		_ = c.Close()
		l.warn(fd, limit)
	}
}

// warn logs refused connections, at most once every 10 s with the count
// since the last warning: a flood would otherwise flood the log too.
func (l *fdReserve) warn(fd, limit int) {
	l.refused.Add(1)
	now := time.Now().UnixNano()
	last := l.logged.Load()
	if now-last < int64(10*time.Second) || !l.logged.CompareAndSwap(last, now) {
		return
	}
	n := l.refused.Swap(0)
	l.log.Warn("refused connections: the open files left are kept for commands",
		"listener", l.name, "refused", n, "open", fd+1, "limit", limit)
}

// connFD is the descriptor of c, when it has one.
func connFD(c net.Conn) (int, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if raw.Control(func(u uintptr) { fd = int(u) }) != nil {
		return 0, false
	}
	return fd, fd >= 0
}

// nofile is the soft RLIMIT_NOFILE, read on every accept (a syscall, far
// cheaper than the accept), so a limit changed with prlimit counts at once.
func nofile() int {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil || rl.Cur > 1<<30 {
		return 1 << 30
	}
	return int(rl.Cur)
}
