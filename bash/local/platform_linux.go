package local

// What differs on Linux: the spawn's attributes and which containment
// modes exist (platform_darwin.go has macOS's).

import (
	"syscall"

	"github.com/dsh-go/dsh/config"
)

// procAttr is a shell's spawn attributes: the leader of a new session and
// process group (no controlling terminal), SIGKILLed by the kernel if this
// process dies, and started inside the cgroup cgroupFD (clone3
// CLONE_INTO_CGROUP) unless it is negative.
func procAttr(cgroupFD int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if cgroupFD >= 0 {
		a.UseCgroupFD = true
		a.CgroupFD = cgroupFD
	}
	return a
}

// unavailable says why containment mode cannot work here; every mode
// can on Linux.
func unavailable(mode string) error { return nil }

// autoFallback is what auto uses where no cgroup can be made: the marker.
const autoFallback = config.ContainMarker

// errNoCgroups is nil: auto tries to make a cgroup.
var errNoCgroups error

// newCgroupNS makes the child unshare a cgroup namespace, rooted at the
// cgroup it starts in (docs/spec.md §8).
func newCgroupNS(a *syscall.SysProcAttr) { a.Unshareflags |= syscall.CLONE_NEWCGROUP }
