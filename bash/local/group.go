package local

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// container is what the kill sequence acts on. Today it is the command's
// process group; the containment issue will add one that also reaches
// descendants which left the group.
type container interface {
	// signal sends sig to every member. It never fails loudly: a gone
	// group, EPERM or a missing pid are no-ops.
	signal(sig syscall.Signal)
	// live reports whether a member other than a zombie remains.
	live() bool
	// await waits until no live member remains or deadline passes, and
	// reports whether none remains.
	await(deadline time.Time) bool
}

// processGroup is the group a command leads (its pgid is the leader's pid,
// since the leader was started with setsid).
type processGroup struct{ pgid int }

func (g processGroup) signal(sig syscall.Signal) {
	if g.pgid > 1 {
		_ = syscall.Kill(-g.pgid, sig)
	}
}

// await waits for the group's live members to exit. kill(-pgid, 0) alone
// cannot tell whether any remain: zombies count as members, and where PID 1
// does not reap orphans they stay for good. So the members are listed from
// /proc (zombies left out) and awaited through pidfds, which become readable
// when their process exits: no polling loop, no guessed sleep.
func (g processGroup) await(deadline time.Time) bool {
	if g.pgid <= 1 {
		return true
	}
	if err := syscall.Kill(-g.pgid, 0); err == syscall.ESRCH {
		return true
	}
	pids, err := g.members()
	if err != nil {
		return false // cannot tell: the caller goes on to SIGKILL
	}
	return awaitExit(pids, deadline)
}

func (g processGroup) live() bool {
	if g.pgid <= 1 {
		return false
	}
	if err := syscall.Kill(-g.pgid, 0); err == syscall.ESRCH {
		return false
	}
	pids, err := g.members()
	return err != nil || len(pids) > 0
}

// members lists the group's processes that are not zombies.
func (g processGroup) members() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pgrp, ok := procStat(pid)
		if ok && pgrp == g.pgid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids, nil
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

// procStat reads the state (field 3) and process group (field 5) of pid.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name may hold spaces and ')'; fields resume after the
	// last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}
