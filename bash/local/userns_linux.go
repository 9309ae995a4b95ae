package local

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// namespaces are those a command's shell started in, by inode (0: none
// or unknown). A process in the cgroup namespace is the command's; so is
// one in the user namespace or in any user namespace below it: a process
// may make a new cgroup namespace, or a new user namespace, but never
// return to a parent user namespace, so for a command that is not root
// the user namespace is a mark it cannot drop, wherever its cgroup.
type namespaces struct{ cgroup, user uint64 }

// nsGetParent is the ioctl NS_GET_PARENT (linux/nsfs.h): the parent of a
// user namespace, as a new descriptor.
const nsGetParent = 0xb702

// maxUserNSDepth is the kernel's limit on nested user namespaces.
const maxUserNSDepth = 32

// holds reports whether pid is in one of the namespaces.
func (n namespaces) holds(pid int) bool {
	if n.cgroup != 0 && cgroupNamespace(pid) == n.cgroup {
		return true
	}
	return n.user != 0 && inUserNSTree(pid, n.user)
}

// inUserNSTree reports whether pid's user namespace is ns or below it.
func inUserNSTree(pid int, ns uint64) bool {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	for range maxUserNSDepth + 1 {
		var st unix.Stat_t
		err := unix.Fstat(fd, &st)
		if err != nil || st.Ino == ns {
			_ = unix.Close(fd)
			return err == nil
		}
		parent, err := unix.IoctlRetInt(fd, nsGetParent)
		_ = unix.Close(fd)
		if err != nil {
			return false // the initial namespace: no parent
		}
		fd = parent
	}
	_ = unix.Close(fd)
	return false
}
