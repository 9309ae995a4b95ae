package local

// Containment by cgroup v2: finding this process's cgroup, making the
// executor's cgroup under it (and, in contain.go, one per command below
// that), reading a cgroup's members and whether it is populated, and
// removing cgroups once empty.

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/internal/procfs"
)

// ownCgroup finds this process's cgroup v2 directory: the cgroup2 mount
// (which need not be /sys/fs/cgroup: hybrid machines mount it at
// /sys/fs/cgroup/unified beside the v1 controllers) joined with the path
// of the "0::" line of /proc/self/cgroup.
func ownCgroup() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "", errors.New("no cgroup v2 in /proc/self/cgroup")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 1 || tail[0] != "cgroup2" {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok {
			continue // this mount does not show our cgroup
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", errors.New("no cgroup2 file system mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupPrefix starts the name of an executor's cgroup:
// "dsh-<pidns>-<pid>-<start>-<random>", so a sweep can tell whose it was.
const cgroupPrefix = "dsh-"

// cgroupBase is the executor's cgroup and what the kernel offers there.
type cgroupBase struct {
	dir     string
	hasKill bool // cgroup.kill (Linux 5.14)
	// ns: a command can be started in a cgroup namespace of its own
	// (this process may unshare one: CAP_SYS_ADMIN), or, with userns, in
	// one inside a user namespace of its own (any user where the kernel
	// allows unprivileged user namespaces).
	ns, userns bool
}

// makeCgroupBase makes this executor's cgroup under parent. With assume
// (root, containment auto), that a process can be cloned into a child of
// it and into a cgroup namespace of its own is taken as given: the first
// command's spawn is the probe, and a failed one runs probeCgroupBase
// (containment.confirm), so no start of dsh spawns a probe process. Else
// probeCgroupBase checks now.
func makeCgroupBase(parent string, assume bool) (cgroupBase, error) {
	rnd := make([]byte, 4)
	_, _ = rand.Read(rnd)
	cb := cgroupBase{dir: filepath.Join(parent, cgroupPrefix+procfs.Owner().String()+"-"+hex.EncodeToString(rnd))}
	if err := os.Mkdir(cb.dir, 0o755); err != nil {
		return cgroupBase{}, fmt.Errorf("cannot make a cgroup in %s: %w", parent, err)
	}
	if assume {
		_, err := os.Stat(filepath.Join(cb.dir, "cgroup.kill"))
		cb.hasKill, cb.ns = err == nil, true
		return cb, nil
	}
	if err := probeCgroupBase(&cb); err != nil {
		_ = os.Remove(cb.dir)
		return cgroupBase{}, err
	}
	return cb, nil
}

// probeCgroupBase checks that a process can be started inside a child of
// cb.dir (clone into a cgroup needs Linux 5.7 and a cgroup we may write),
// and whether in a cgroup namespace of its own, and sets cb's facts.
func probeCgroupBase(cb *cgroupBase) error {
	probe := filepath.Join(cb.dir, "probe")
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fmt.Errorf("cannot make a cgroup in %s: %w", cb.dir, err)
	}
	defer os.Remove(probe)
	_, err := os.Stat(filepath.Join(probe, "cgroup.kill"))
	cb.hasKill = err == nil
	fd, err := unix.Open(probe, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		if sh, err = exec.LookPath("bash"); err != nil {
			return fmt.Errorf("no shell to probe the cgroup with: %w", err)
		}
	}
	if err := probeSpawn(sh, fd, false, false); err != nil {
		return fmt.Errorf("cannot start a process in a cgroup of %s: %w", cb.dir, err)
	}
	cb.ns = probeSpawn(sh, fd, true, false) == nil
	cb.userns = false
	if !cb.ns && os.Geteuid() != 0 {
		cb.ns = probeSpawn(sh, fd, true, true) == nil
		cb.userns = cb.ns
	}
	return nil
}

// probeSpawn runs `sh -c 'exit 0'` in the cgroup fd, in a cgroup
// namespace of its own with ns (in a user namespace of its own with user).
func probeSpawn(sh string, fd int, ns, user bool) error {
	cmd := exec.Command(sh, "-c", "exit 0")
	cmd.SysProcAttr = procAttr(fd)
	switch {
	case ns && user:
		var ok bool
		if cmd.Path, cmd.Args, ok = userNSCommand(cmd.Path, cmd.Args); !ok {
			return errors.New("no unshare program")
		}
	case ns:
		newCgroupNS(cmd.SysProcAttr)
	}
	return cmd.Run()
}

// canLeave reports whether a process with this process's credentials
// could move itself out of a cgroup below base: moving needs write access
// to the cgroup.procs of the cgroup it goes to and of the common ancestor
// (root has it everywhere; a user, in a subtree delegated to it). Where
// it cannot, no /proc scan looks for processes outside their cgroup. A
// command that becomes root (sudo) is beyond this, as beyond the marker:
// the sandbox is the boundary for it.
func canLeave(base string) bool {
	if os.Geteuid() == 0 {
		return true
	}
	for d := filepath.Dir(base); ; d = filepath.Dir(d) {
		procs := filepath.Join(d, "cgroup.procs")
		if _, err := os.Stat(procs); err != nil {
			return false // above the hierarchy's root
		}
		if unix.Access(procs, unix.W_OK) == nil {
			return true
		}
		if d == "/" {
			return false
		}
	}
}

// nsDelegate reports whether the cgroup v2 hierarchy is mounted with
// nsdelegate: then a process in a cgroup namespace cannot move itself, or
// another, to a cgroup outside it, whatever its privileges.
func nsDelegate() bool {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		_, post, ok := strings.Cut(line, " - ")
		tail := strings.Fields(post)
		if ok && len(tail) >= 3 && tail[0] == "cgroup2" {
			return strings.Contains(","+tail[2]+",", ",nsdelegate,")
		}
	}
	return false
}

// makeCommandCgroup makes a command's cgroup, called name, under the
// executor's cgroup base, and opens it for the shell to be cloned into.
func makeCommandCgroup(base, name string) (dir string, fd int, err error) {
	dir = filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", -1, fmt.Errorf("%s: cgroup: %w", Name, err)
	}
	fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return "", -1, fmt.Errorf("%s: cgroup: %w", Name, err)
	}
	return dir, fd, nil
}

// cgroupPopulated reads the populated flag of a cgroup's cgroup.events:
// false once no live process is left in it (zombies do not count).
func cgroupPopulated(dir string) (bool, error) {
	var buf [128]byte
	data, err := procfs.ReadFile(filepath.Join(dir, "cgroup.events"), buf[:])
	if err != nil {
		return false, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, errors.New("no populated line in " + dir + "/cgroup.events")
}

// cgroupTreeProcs reads the cgroup.procs of a cgroup and of every cgroup
// below it: a command may make cgroups of its own and move into them.
func cgroupTreeProcs(dir string) ([]int, error) {
	pids, err := cgroupProcs(dir)
	if err != nil {
		return nil, err
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			more, err := cgroupTreeProcs(filepath.Join(dir, e.Name()))
			if err == nil {
				pids = append(pids, more...)
			}
		}
	}
	return pids, nil
}

// cgroupProcs reads a cgroup's cgroup.procs.
func cgroupProcs(dir string) ([]int, error) {
	var buf [512]byte
	data, err := procfs.ReadFile(filepath.Join(dir, "cgroup.procs"), buf[:])
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// removeTree removes a cgroup directory and those below it, bottom up. An
// emptied cgroup can take a moment to be removable.
func removeTree(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeTree(filepath.Join(dir, e.Name()))
		}
	}
	for i := 0; i < 50; i++ {
		err := os.Remove(dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
