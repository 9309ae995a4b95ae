// Package procfs reads what dsh needs of /proc: a process's state, parent,
// process group and start time, whether it still runs, and its
// environment; and the stamp ([Stamp]) by which a dsh process names what
// it leaves behind, so that a later one can tell whether its owner still
// runs. Linux only.
package procfs

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Stat is what /proc/<pid>/stat says of a process.
type Stat struct {
	State byte   // R, S, D, Z, X, …
	PPid  int    // parent
	Pgrp  int    // process group
	Flags uint64 // PF_* flags
	Start uint64 // start time, clock ticks since boot
}

// Dead reports a zombie or a process being reaped: it runs no more.
func (s Stat) Dead() bool { return s.State == 'Z' || s.State == 'X' }

// Kernel reports a kernel thread (PF_KTHREAD): no command of ours, and its
// environment always reads empty.
func (s Stat) Kernel() bool { return s.Flags&0x00200000 != 0 }

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

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, bool) {
	var buf [512]byte
	data, err := ReadFile("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return Stat{}, false
	}
	return parseStat(data)
}

// parseStat parses the text of /proc/<pid>/stat.
func parseStat(data []byte) (Stat, bool) {
	// The command name (field 2) may hold spaces and ')'; the fields
	// resume after the last ')'. fields[0] is field 3.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	flags, err3 := strconv.ParseUint(string(f[6]), 10, 64)
	start, err4 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return Stat{}, false
	}
	return Stat{State: f[0][0], PPid: ppid, Pgrp: pgrp, Flags: flags, Start: start}, true
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

// Pids lists the pids in /proc.
func Pids() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
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

// LookupEnv reads pid's environment once and looks name up in it.
func LookupEnv(pid int, name string) (string, Env) {
	var buf [4096]byte
	data, err := ReadFile("/proc/"+strconv.Itoa(pid)+"/environ", buf[:])
	switch {
	case err != nil:
		return "", EnvUnreadable
	case len(data) == 0:
		return "", EnvEmpty
	}
	if v, ok := lookup(data, name); ok {
		return v, EnvFound
	}
	return "", EnvAbsent
}

// lookup finds name in a NUL-separated environment.
func lookup(env []byte, name string) (string, bool) {
	key := []byte(name + "=")
	for len(env) > 0 {
		var entry []byte
		entry, env, _ = bytes.Cut(env, []byte{0})
		if v, ok := bytes.CutPrefix(entry, key); ok {
			return string(v), true
		}
	}
	return "", false
}

// PidNamespace returns the inode number of this process's pid namespace
// (what /proc/self/ns/pid links to), or 0 when it cannot be read. A pid
// means something only within its namespace.
func PidNamespace() uint64 {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	// "pid:[4026531836]"
	start, end := bytes.IndexByte([]byte(link), '['), bytes.IndexByte([]byte(link), ']')
	if start < 0 || end <= start {
		return 0
	}
	n, err := strconv.ParseUint(link[start+1:end], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Ticks returns the time since boot in clock ticks, the unit of
// Stat.Start (USER_HZ, 100 on Linux), or 0 when /proc/uptime cannot be
// read.
func Ticks() uint64 {
	var buf [64]byte
	data, err := ReadFile("/proc/uptime", buf[:])
	if err != nil {
		return 0
	}
	secs, _, _ := bytes.Cut(data, []byte(" "))
	whole, frac, _ := bytes.Cut(secs, []byte("."))
	w, err := strconv.ParseUint(string(whole), 10, 64)
	if err != nil {
		return 0
	}
	t := w * userHZ
	if len(frac) >= 2 {
		if f, err := strconv.ParseUint(string(frac[:2]), 10, 64); err == nil {
			t += f * userHZ / 100
		}
	}
	return t
}

// userHZ is the kernel's USER_HZ, the clock tick of /proc: 100 on every
// Linux architecture Go supports.
const userHZ = 100
