//go:build darwin

package procfs

// macOS has no /proc: a process's state, parent, group and start time come
// from the kern.proc sysctls (kinfo_proc). What is not available: another
// process's environment (LookupEnv reads nothing), so the marker cannot
// work here; and pid namespaces, which macOS does not have.

import (
	"time"

	"golang.org/x/sys/unix"
)

// kthreadFlag is P_SYSTEM in Stat.Flags: a system process.
const kthreadFlag = 0x200

// The p_stat values of kinfo_proc (sys/proc.h).
const (
	sIdl   = 1 // being created by fork
	sRun   = 2
	sSleep = 3
	sStop  = 4
	sZomb  = 5
)

// ReadStat reads pid's kinfo_proc.
func ReadStat(pid int) (Stat, bool) {
	if pid <= 0 {
		return Stat{}, false
	}
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid {
		return Stat{}, false
	}
	return statOf(k), true
}

// statOf is a kinfo_proc as a Stat. Start is in microseconds since the
// epoch, the unit of Ticks here.
func statOf(k *unix.KinfoProc) Stat {
	state := byte('S')
	switch k.Proc.P_stat {
	case sIdl, sRun:
		state = 'R'
	case sStop:
		state = 'T'
	case sZomb:
		state = 'Z'
	}
	start := k.Proc.P_starttime
	return Stat{
		State: state,
		PPid:  int(k.Eproc.Ppid),
		Pgrp:  int(k.Eproc.Pgid),
		Flags: uint64(uint32(k.Proc.P_flag)),
		Start: uint64(start.Sec)*1e6 + uint64(start.Usec),
	}
}

// Pids lists every process's pid (kern.proc.all).
func Pids() ([]int, error) {
	procs, err := Table()
	if err != nil {
		return nil, err
	}
	pids := make([]int, len(procs))
	for i, p := range procs {
		pids[i] = p.Pid
	}
	return pids, nil
}

// Table lists every process with its Stat, in one sysctl
// (kern.proc.all).
func Table() ([]Proc, error) {
	all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	procs := make([]Proc, 0, len(all))
	for i := range all {
		if pid := int(all[i].Proc.P_pid); pid > 0 {
			procs = append(procs, Proc{Pid: pid, Stat: statOf(&all[i])})
		}
	}
	return procs, nil
}

// LookupEnv cannot read another process's environment here (there is no
// /proc/<pid>/environ): it reports EnvUnreadable.
func LookupEnv(pid int, name string) (string, Env) { return "", EnvUnreadable }

// PidNamespace is 1: macOS has no pid namespaces, every process shares
// the one, so stamps made here are judged (0 would mean unknown).
func PidNamespace() uint64 { return 1 }

// Ticks returns the time in microseconds since the epoch, the unit of
// Stat.Start here.
func Ticks() uint64 { return uint64(time.Now().UnixMicro()) }
