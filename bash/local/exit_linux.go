package local

import (
	"math"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// awaitExit waits until every pid has exited or deadline passes.
func awaitExit(pids []int, deadline time.Time) bool {
	var fds []unix.PollFd
	defer func() {
		for _, p := range fds {
			_ = unix.Close(int(p.Fd))
		}
	}()
	var polled []int // no pidfd for these (Linux < 5.3, EMFILE, seccomp)
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err == unix.ESRCH {
			continue // already gone
		}
		if err != nil {
			polled = append(polled, pid)
			continue
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	if len(polled) > 0 && !pollExit(polled, deadline) {
		return false
	}
	for {
		pending := 0
		for i := range fds {
			if fds[i].Fd >= 0 && fds[i].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 {
				_ = unix.Close(int(fds[i].Fd))
				fds[i].Fd = -1 // poll skips negative fds
			}
			if fds[i].Fd >= 0 {
				pending++
			}
			fds[i].Revents = 0
		}
		if pending == 0 {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		ms := int(min(left.Milliseconds()+1, math.MaxInt32))
		if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
			return false
		}
	}
}

// awaitChildExit returns once the child pid has exited, without reaping it.
// It waits on the runtime's poller (a pidfd turns readable when its
// process exits), so a running command costs dsh no OS thread blocked in
// waitid: under a fork storm that shares dsh's process limit, every
// thread dsh does not need is one the storm cannot starve it of. Without
// pidfds (Linux before 5.3) it returns at once and the caller's Wait
// blocks a thread as before.
func awaitChildExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		// Signo is SIGCHLD once it exited; 0 while it runs.
		return err != nil || info.Signo != 0
	})
}
