package local

import (
	"math"
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
