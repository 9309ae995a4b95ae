package local

import (
	"syscall"

	"github.com/dsh-go/dsh/internal/procfs"
)

// procRef is one process that group mode stopped, known by its pid and
// start time, so that resuming it never signals a process that took the
// pid over once it died and was reaped. macOS has no pidfd: the start
// time is checked again right before each signal.
type procRef struct {
	pid   int
	start uint64
}

// openRef refers to pid if it is still the process that started at
// start; false when it is gone or the pid is another process's now.
func openRef(pid int, start uint64) (procRef, bool) {
	if start == 0 || procfs.Start(pid) != start {
		return procRef{}, false
	}
	return procRef{pid: pid, start: start}, true
}

// signal sends sig to the process referred to if the pid is still its.
func (p procRef) signal(sig syscall.Signal) {
	if procfs.Start(p.pid) == p.start {
		_ = syscall.Kill(p.pid, sig)
	}
}

// close has nothing to release here.
func (p procRef) close() {}
