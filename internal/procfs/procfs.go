// Package procfs reads what dsh needs of the process table: a process's
// state, parent, process group and start time, whether it still runs, and
// its environment; and the stamp ([Stamp]) by which a dsh process names
// what it leaves behind, so that a later one can tell whether its owner
// still runs. On Linux everything comes from /proc (procfs_linux.go); on
// macOS from the kern.proc sysctls (procfs_darwin.go), where another
// process's environment cannot be read and there are no pid namespaces.
// Other platforms are not supported.
package procfs

import (
	"errors"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Stat is what /proc/<pid>/stat (on macOS, kinfo_proc) says of a process.
type Stat struct {
	State byte   // R, S, D, T, Z, X, …
	PPid  int    // parent
	Pgrp  int    // process group
	Flags uint64 // PF_* flags (on macOS, p_flag)
	Start uint64 // start time: clock ticks since boot (on macOS, µs since the epoch)
}

// Proc is a process of the table: its pid and what ReadStat says of it.
type Proc struct {
	Pid int
	Stat
}

// Dead reports a zombie or a process being reaped: it runs no more.
func (s Stat) Dead() bool { return s.State == 'Z' || s.State == 'X' }

// Kernel reports a kernel thread (PF_KTHREAD; on macOS P_SYSTEM): no command of ours, and its
// environment always reads empty.
func (s Stat) Kernel() bool { return s.Flags&kthreadFlag != 0 }

// ReadFile reads a small /proc or /sys file with plain syscalls into buf
// (grown when needed): os.ReadFile's file machinery costs more than the
// read itself, and containment reads such files at the end of every
// command.
func ReadFile(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf)+512)...)
		}
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
}

// Start returns pid's start time, or 0 when it cannot be read.
func Start(pid int) uint64 {
	st, _ := ReadStat(pid)
	return st.Start
}

// Alive reports whether pid runs (a zombie does not) and, when start is
// known on both sides, was started at start, so a reused pid does not
// count.
func Alive(pid int, start uint64) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	st, ok := ReadStat(pid)
	if !ok {
		return true // cannot tell: it answered the signal
	}
	if st.Dead() {
		return false
	}
	return start == 0 || st.Start == start
}

// Getenv returns the value of name in pid's environment (as it was when
// the process started), and whether it is there. It fails quietly, for a
// process gone or not ours to read.
//
// While a process is in execve, its environ reads empty for a moment; an
// empty read is tried again a few times (about 10 ms in all), so a process
// that is being exec'd is not taken for one without the variable.
func Getenv(pid int, name string) (string, bool) {
	for try := 0; ; try++ {
		v, env := LookupEnv(pid, name)
		if env != EnvEmpty {
			return v, env == EnvFound
		}
		if try == 20 {
			return "", false // an empty environment
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// Env is what one read of a process's environment found.
type Env int

const (
	EnvFound      Env = iota // the variable is there
	EnvAbsent                // the environment is not empty; no such variable
	EnvEmpty                 // the environment reads empty: none, or the process is in execve
	EnvUnreadable            // gone, or not ours to read
)
