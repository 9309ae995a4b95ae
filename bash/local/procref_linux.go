package local

import (
	"syscall"

	"github.com/dsh-go/dsh/internal/procfs"
	"golang.org/x/sys/unix"
)

// procRef is one process that group mode stopped, known by its pid and
// start time, so that resuming it never signals a process that took the
// pid over once it died and was reaped (a SIGKILL, or a SIGTERM a stopped
// process does not handle, ends it while stopped). On Linux a pidfd,
// opened before the start time is checked, pins the process itself.
type procRef struct {
	pid   int
	start uint64
	fd    int // pidfd; -1 without one (Linux < 5.3, EMFILE)
}

// openRef refers to pid if it is still the process that started at
// start; false when it is gone or the pid is another process's now.
func openRef(pid int, start uint64) (procRef, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return procRef{}, false
	}
	if err != nil {
		fd = -1
	}
	// Checked after the open: if it still matches, the pidfd is the
	// process that started at start, whatever happens to the pid later.
	if st, ok := procfs.ReadStat(pid); !ok || st.Start != start || start == 0 {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		return procRef{}, false
	}
	return procRef{pid: pid, start: start, fd: fd}, true
}

// signal sends sig to the process referred to, and to nothing else.
func (p procRef) signal(sig syscall.Signal) {
	if p.fd >= 0 {
		_ = unix.PidfdSendSignal(p.fd, sig, nil, 0)
		return
	}
	if procfs.Start(p.pid) == p.start {
		_ = syscall.Kill(p.pid, sig)
	}
}

// close releases the pidfd.
func (p procRef) close() {
	if p.fd >= 0 {
		_ = unix.Close(p.fd)
	}
}
