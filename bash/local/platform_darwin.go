package local

// What differs on macOS: no parent-death signal, no cgroups, and no way to
// read another process's environment (no /proc), so containment is the
// process group and the parent chain (containment: group), which Linux
// offers and tests too.

import (
	"errors"
	"syscall"

	"github.com/dsh-go/dsh/config"
)

// procAttr is a shell's spawn attributes: the leader of a new session and
// process group (no controlling terminal). macOS has no parent-death
// signal, so a shell outlives a dsh that is SIGKILLed; and no cgroups, so
// cgroupFD is always negative here.
func procAttr(cgroupFD int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// unavailable says why containment mode cannot work on macOS.
func unavailable(mode string) error {
	switch mode {
	case config.ContainCgroup:
		return errors.New("cgroups are Linux only; use group")
	case config.ContainMarker:
		return errors.New("the marker reads other processes' environments, which macOS does not show; use group")
	}
	return nil
}

// autoFallback is what auto uses here: the group and the parent chain.
const autoFallback = config.ContainGroup

// errNoCgroups is why auto uses the group here.
var errNoCgroups = errors.New("macOS has no cgroups, and does not show another process's environment to the marker")

// newCgroupNS does nothing: macOS has no cgroups.
func newCgroupNS(*syscall.SysProcAttr) {}

// userNSCommand is never: macOS has no namespaces.
func userNSCommand(path string, argv []string) (string, []string, bool) { return path, argv, false }
