package local

// What differs on Linux: the spawn's attributes and which containment
// modes exist (platform_darwin.go has macOS's).

import (
	"os"
	"os/exec"
	"strconv"
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

// userNSCommand is path and argv run in a user namespace of their own, where
// they keep their uid and gid, and in a cgroup namespace in it, through
// util-linux's unshare: a process without CAP_SYS_ADMIN needs the first
// for the second. No process can leave a user namespace for its parent,
// so the command's processes are found by it wherever they move
// (userns_linux.go). The clone cannot do it: this process is not
// dumpable (guard), and so neither is its child until it executes, whose
// uid_map the parent may then not write; unshare, executed, writes its
// own. ok is false without unshare.
func userNSCommand(path string, argv []string) (string, []string, bool) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return path, argv, false
	}
	uid, gid := strconv.Itoa(os.Geteuid()), strconv.Itoa(os.Getegid())
	args := []string{"unshare", "--user", "--map-user=" + uid, "--map-group=" + gid, "--cgroup", "--", path}
	return unshare, append(args, argv[1:]...), true
}
