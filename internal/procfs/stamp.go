package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stamp names a process so that another process can later tell whether
// it still runs: its pid namespace, its pid there, and its start time.
// Written "<pidns>-<pid>-<start>", it heads the names of what a dsh
// process leaves behind it (run ids, cgroups, spill directories), so that
// a later one can sweep what a dead one left. A pid means something only
// in its pid namespace, and the start time tells a reused pid.
type Stamp struct {
	PidNS uint64 // inode of the pid namespace; 0 when it could not be read
	Pid   int
	Start uint64 // clock ticks since boot
}

// Owner returns this process's stamp.
func Owner() Stamp {
	self := os.Getpid()
	return Stamp{PidNS: PidNamespace(), Pid: self, Start: Start(self)}
}

// String writes the stamp as "<pidns>-<pid>-<start>".
func (s Stamp) String() string {
	return fmt.Sprintf("%d-%d-%d", s.PidNS, s.Pid, s.Start)
}

// CutStamp reads the stamp at the head of name ("<pidns>-<pid>-<start>-"
// and a rest that is not empty) and returns the rest. It reports false
// for anything else, including a name that has one number too few (a
// name written before the pid namespace was part of the stamp).
func CutStamp(name string) (s Stamp, rest string, ok bool) {
	f := strings.SplitN(name, "-", 4)
	if len(f) < 4 || f[3] == "" {
		return Stamp{}, "", false
	}
	ns, err0 := strconv.ParseUint(f[0], 10, 64)
	pid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[2], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil || pid <= 0 {
		return Stamp{}, "", false
	}
	return Stamp{PidNS: ns, Pid: pid, Start: start}, f[3], true
}

// Gone reports whether s names a process of this process's pid namespace
// that no longer runs (its pid is free, or taken by a process started at
// another time). A stamp of another pid namespace (a container's process
// seen from the host, or the host's seen from inside one), or one whose
// namespace is unknown on either side, is never judged gone: its pid
// means nothing here.
func (s Stamp) Gone() bool {
	if s.PidNS == 0 || s.PidNS != PidNamespace() {
		return false
	}
	return !Alive(s.Pid, s.Start)
}
