package local

import (
	"math"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// container is what the kill sequence acts on: a command's processes
// (see commandContainer).
type container interface {
	// signal sends sig to every member. It never fails loudly: a gone
	// member, EPERM or a missing pid are no-ops.
	signal(sig syscall.Signal)
	// live reports whether a member other than a zombie remains.
	live() bool
	// await waits until no live member remains or deadline passes, and
	// reports whether none remains.
	await(deadline time.Time) bool
	// release frees what the container holds (a cgroup) once it is empty.
	release()
}

// awaitExit waits until every pid has exited or deadline passes.
func awaitExit(pids []int, deadline time.Time) bool {
	var fds []unix.PollFd
	defer func() {
		for _, p := range fds {
			_ = unix.Close(int(p.Fd))
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err == unix.ESRCH {
			continue // already gone
		}
		if err != nil {
			return false
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
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
