//go:build linux

package procfs

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// The window: a scan that wants only the processes started after a given
// one need not read every process's stat. Pids are handed out in a cycle
// (the kernel takes the first free pid after the last one given, wrapping
// to reservedPids past pid_max), so every pid given after the process
// whose pid is first lies between first and the last pid given now,
// modulo the wrap, unless the cycle came round past first since. A Mark
// taken before that process was forked bounds how far the cycle moved:
// each pid given moves it one, and each pid in use that it skips one
// more; every pid in use is a live or unreaped task's pid, process group
// or session (three at most each) — so it moved less than
// 4·forks + 3·threads, where forks is the tasks forked since the mark and
// threads the tasks there were at the mark. While that stays below the
// cycle, the window holds every process started since; beyond, the scan
// reads the whole table.

// Mark is a point in the process table's history, taken with NewMark.
type Mark struct {
	forks, threads uint64
	ok             bool
}

// reservedPids is where the pid cycle resumes after pid_max (the
// kernel's RESERVED_PIDS).
const reservedPids = 300

// NewMark reads the count of tasks forked since boot and the tasks there
// are now. A Mark that could not be read makes TableAfter read the whole
// table.
func NewMark() Mark {
	if !windowUsable() {
		return Mark{}
	}
	forks, ok1 := forked()
	_, threads, ok2 := loadavg()
	return Mark{forks: forks, threads: threads, ok: ok1 && ok2}
}

// TableAfter lists the processes of /proc, as Table does, except that
// when m allows it leaves out, unread, those whose pids were given before
// first's: first is a process forked after m was taken. The processes
// started after first are all in it; those started before may be too.
//
// A narrow window (the usual case: a short command on a machine that
// forks little meanwhile) is read pid by pid, which costs a few µs where
// listing /proc costs about 60; a wide one from the listing.
func TableAfter(first int, m Mark) ([]Proc, error) {
	if !m.ok || first <= 0 {
		return Table()
	}
	if w, ok := windowOf(first, m); ok && w.count() <= maxProbe {
		if procs, ok := w.probe(); ok {
			return procs, nil
		}
	}
	pids, err := Pids()
	if err != nil {
		return nil, err
	}
	// After the listing: every pid it holds was given by now.
	w, ok := windowOf(first, m)
	if !ok {
		return tableOf(pids), nil
	}
	kept := pids[:0]
	for _, pid := range pids {
		if w.in(pid) {
			kept = append(kept, pid)
		}
	}
	return tableOf(kept), nil
}

// maxProbe is the widest window read pid by pid: a probe of a pid costs
// one or two µs, the listing of /proc about 60.
const maxProbe = 32

// window is the pids given from first to last, in the cycle that wraps
// from size-1 to reservedPids.
type window struct{ first, last, size int }

// windowOf is the window from first to the last pid given now, false when
// m cannot bound it: the cycle may have come round since.
func windowOf(first int, m Mark) (window, bool) {
	last, _, ok1 := loadavg()
	forks, ok2 := forked()
	size := pidMax()
	if !ok1 || !ok2 || size == 0 || forks < m.forks || 4*(forks-m.forks)+3*m.threads+reservedPids >= uint64(size)-reservedPids {
		return window{}, false
	}
	return window{first, last, size}, true
}

func (w window) in(pid int) bool {
	if w.first <= w.last {
		return pid >= w.first && pid <= w.last
	}
	return pid >= w.first || pid <= w.last // the cycle wrapped
}

// count is the number of pids in the window.
func (w window) count() int {
	if w.first <= w.last {
		return w.last - w.first + 1
	}
	return w.size - w.first + w.last - reservedPids + 1
}

// probe reads the Stat of every process whose pid is in the window. A
// thread's id answers at /proc/<tid> too, though /proc does not list it:
// a pidfd, which only a process's pid gets, tells them apart. Without
// pidfds (Linux before 5.3, a seccomp filter, no fd left) it gives up.
func (w window) probe() ([]Proc, bool) {
	var procs []Proc
	for pid, n := w.first, w.count(); n > 0; pid, n = pid+1, n-1 {
		if pid >= w.size {
			pid = reservedPids
		}
		st, ok := ReadStat(pid)
		if !ok {
			continue
		}
		switch fd, err := unix.PidfdOpen(pid, 0); {
		case err == nil:
			_ = unix.Close(fd)
			procs = append(procs, Proc{Pid: pid, Stat: st})
		case err == unix.ENOENT || err == unix.EINVAL: // a thread (EINVAL before Linux 6.9)
		case err == unix.ESRCH: // gone since
		default:
			return nil, false
		}
	}
	return procs, true
}

// forked reads the count of tasks forked since boot (the processes line
// of /proc/stat).
func forked() (uint64, bool) {
	var buf [4096]byte
	data, err := ReadFile("/proc/stat", buf[:])
	if err != nil {
		return 0, false
	}
	i := bytes.Index(data, []byte("\nprocesses "))
	if i < 0 {
		return 0, false
	}
	line, _, _ := bytes.Cut(data[i+len("\nprocesses "):], []byte("\n"))
	n, err := strconv.ParseUint(string(line), 10, 64)
	return n, err == nil
}

// loadavg reads the last pid given in this pid namespace and the count of
// tasks ("0.20 0.18 0.12 1/80 11206").
func loadavg() (last int, threads uint64, ok bool) {
	var buf [128]byte
	data, err := ReadFile("/proc/loadavg", buf[:])
	if err != nil {
		return 0, 0, false
	}
	f := bytes.Fields(data)
	if len(f) < 5 {
		return 0, 0, false
	}
	_, tasks, _ := bytes.Cut(f[3], []byte("/"))
	threads, err1 := strconv.ParseUint(string(tasks), 10, 64)
	last, err2 := strconv.Atoi(string(f[4]))
	return last, threads, err1 == nil && err2 == nil
}

// pidMax is the size of the pid cycle, 0 when unknown; read at each scan,
// as root may lower it meanwhile.
func pidMax() int {
	var buf [32]byte
	data, err := ReadFile("/proc/sys/kernel/pid_max", buf[:])
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(data)))
	if err != nil {
		return 0
	}
	return n
}

// windowUsable reports whether /proc shows this process's pid namespace,
// whose last pid /proc/loadavg gives: else the window means nothing.
var windowUsable = sync.OnceValue(func() bool {
	self, err := os.Readlink("/proc/self")
	return err == nil && self == strconv.Itoa(os.Getpid())
})

// tableOf reads the Stat of each of pids; those gone are left out.
func tableOf(pids []int) []Proc {
	procs := make([]Proc, 0, len(pids))
	for _, pid := range pids {
		if st, ok := ReadStat(pid); ok {
			procs = append(procs, Proc{Pid: pid, Stat: st})
		}
	}
	return procs
}
