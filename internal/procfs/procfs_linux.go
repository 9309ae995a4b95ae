//go:build linux

package procfs

// Linux: everything comes from /proc.

import (
	"bytes"
	"os"
	"strconv"
)

// kthreadFlag is PF_KTHREAD in Stat.Flags: a kernel thread.
const kthreadFlag = 0x00200000

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

// Table lists every process in /proc with its Stat; processes gone
// between the listing and the read are left out.
func Table() ([]Proc, error) {
	pids, err := Pids()
	if err != nil {
		return nil, err
	}
	return tableOf(pids), nil
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
