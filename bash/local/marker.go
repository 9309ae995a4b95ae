package local

// The marker and the group: without a cgroup, a command's members are
// found in the process table (/proc; on macOS the kern.proc sysctls): by
// its process group, by the run id (RunIDEnv) in their environment (marker
// mode only: macOS does not show another process's environment), and by
// the parent chain.

import (
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/internal/procfs"
)

// scanMembers lists the live processes in the group led by leader, with
// marker those carrying runID or in the cgroup namespace ns (its inode;
// 0: none), with known those it holds (pid → start time: a member once
// found stays one, even when its parent died), and with chain the
// descendants of all these; it records what it found in known. Only
// processes started at or after since can be members: the others'
// environments are not read. Once the leader was reaped (reaped > 0), its
// pgid may be reused once the group is empty: the group counts then only
// while it still holds a process started before the reap (groupHeld).
// With a namespace, an environment that reads empty is not waited for: a
// process of the command that dropped its environment is found by its
// namespace, or not at all. Only the processes after w are read
// (procfs.TableAfter): none forked before the leader can be a member.
func scanMembers(leader int, since, reaped uint64, marker, chain bool, runID string, known map[int]uint64, ns namespaces, w window) ([]int, error) {
	all, err := procfs.TableAfter(w.first, w.mark)
	if err != nil {
		return nil, err
	}
	held := leader > 1 && groupHeld(all, leader, since, reaped)
	self := os.Getpid()
	in := make(map[int]bool)
	parent := make(map[int]int)
	start := make(map[int]uint64) // for known
	var pending []int             // environment read empty: none, or in execve
	for _, p := range all {
		pid, st := p.Pid, p.Stat
		if pid == self || st.Dead() || st.Kernel() || st.Start < since {
			continue
		}
		parent[pid] = st.PPid
		if known != nil {
			start[pid] = st.Start
		}
		switch {
		case held && st.Pgrp == leader:
			in[pid] = true
		case known != nil && known[pid] == st.Start && st.Start != 0:
			in[pid] = true
		case marker && ns.holds(pid):
			in[pid] = true
		case marker:
			if markByEnv(pid, runID, in) && ns == (namespaces{}) {
				pending = append(pending, pid)
			}
		}
	}
	if len(pending) > 0 {
		awaitEnvs(pending, runID, in)
	}
	if chain {
		// The parent chain: children of members are members, even if they
		// left the group or dropped the marker from their environment.
		for grew := true; grew; {
			grew = false
			for pid, ppid := range parent {
				if !in[pid] && in[ppid] {
					in[pid], grew = true, true
				}
			}
		}
	}
	if known != nil {
		clear(known) // a member not found again has exited
	}
	pids := make([]int, 0, len(in))
	for pid := range in {
		pids = append(pids, pid)
		if known != nil {
			known[pid] = start[pid]
		}
	}
	return pids, nil
}

// window is where a scan's members can be in the process table: at pid
// first (the leader's) and after, given a mark taken before first was
// forked; the zero window is the whole table.
type window struct {
	first int
	mark  procfs.Mark
}

// markByEnv marks pid in in when its environment carries runID, and
// reports whether the environment read empty.
func markByEnv(pid int, runID string, in map[int]bool) (empty bool) {
	v, env := lookupEnv(pid, RunIDEnv)
	if env == procfs.EnvFound && v == runID {
		in[pid] = true
	}
	return env == procfs.EnvEmpty
}

// lookupEnv reads a process's environment; a variable so that a test can
// hold a process in the moment of its execve, when the environment reads
// empty, which a real process passes too quickly to be caught on purpose.
var lookupEnv = procfs.LookupEnv

// awaitEnvs reads the environments of pending again, with growing pauses,
// until none reads empty or execEnvWait is over — but at least
// minEnvReads times, however late a loaded machine wakes the scan — and
// marks those carrying runID in in.
func awaitEnvs(pending []int, runID string, in map[int]bool) {
	deadline := time.Now().Add(execEnvWait)
	for i, pause := 0, time.Millisecond; len(pending) > 0 && (i < minEnvReads || time.Now().Before(deadline)); i, pause = i+1, min(2*pause, 20*time.Millisecond) {
		time.Sleep(pause)
		left := pending[:0]
		for _, pid := range pending {
			if markByEnv(pid, runID, in) {
				left = append(left, pid)
			}
		}
		pending = left
	}
}

// execEnvWait bounds how long a scan waits for environments that read
// empty. A process in execve shows its new one within milliseconds (tens
// on a loaded machine); missing it would leave an escapee that has just
// exec'd running. A process started with no environment at all (env -i)
// costs a scan this much.
const execEnvWait = 250 * time.Millisecond

// cgroupNamespace is the inode of pid's cgroup namespace, 0 when it
// cannot be read.
func cgroupNamespace(pid int) uint64 {
	var st unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(pid)+"/ns/cgroup", &st) != nil {
		return 0
	}
	return st.Ino
}

// minEnvReads is how often a scan reads such an environment again at
// least: about 90 ms of pauses when the machine keeps time.
const minEnvReads = 8

// groupHeld reports whether the process group leader is still the
// command's: the shell is not reaped, or the group still holds a process
// (a zombie too: it keeps the id) started before the reap. A group is
// never empty while it exists, so the id was not free meanwhile and every
// process in it now, whenever it started, is the command's: a job's
// double fork after the shell ended, whose parent is gone, is found so.
func groupHeld(all []procfs.Proc, leader int, since, reaped uint64) bool {
	if reaped == 0 {
		return true
	}
	for _, p := range all {
		if p.Pgrp == leader && p.Start >= since && p.Start < reaped {
			return true
		}
	}
	return false
}
