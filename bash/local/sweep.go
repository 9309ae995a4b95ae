package local

// The start-up sweep: what dsh processes that died left running, found by
// the owner their run ids and cgroup names carry.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/internal/procfs"
)

// Leftovers is what a start-up sweep killed and removed: processes and
// cgroups of dsh processes that no longer run.
type Leftovers struct {
	Pids    []int
	Cgroups []string
}

// sweep kills what dsh processes that died left behind: processes carrying
// a run id (in the variable runIDEnv; RunIDEnv but in tests) whose dsh no
// longer runs (whatever containment that dsh used), and, next to this
// executor's cgroup, the cgroups of dsh processes gone. They get SIGKILL
// at once: their owner is gone, nobody waits for them. Several dsh
// processes may sweep at once: what another removes first is skipped.
func sweep(cgroupParent, runIDEnv string) (Leftovers, error) {
	var left Leftovers
	var errs []error
	pids, err := procfs.Pids()
	if err != nil {
		return left, err
	}
	self := os.Getpid()
	for _, pid := range pids {
		if pid == self {
			continue
		}
		if st, ok := procfs.ReadStat(pid); !ok || st.Dead() || st.Kernel() {
			continue // (a kernel thread's environment reads empty, and Getenv waits on that)
		}
		id, ok := procfs.Getenv(pid, runIDEnv)
		if ok && deadOwner(id) && syscall.Kill(pid, syscall.SIGKILL) == nil {
			left.Pids = append(left.Pids, pid)
		}
	}
	if cgroupParent != "" {
		entries, err := os.ReadDir(cgroupParent)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			name, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
			if !ok || !e.IsDir() || !deadOwner(name) {
				continue
			}
			dir := filepath.Join(cgroupParent, e.Name())
			if err := removeCgroupTree(dir); err != nil {
				// Gone meanwhile: another dsh starting up swept it, or
				// its exiting owner removed it. Neither is ours to report.
				if !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			left.Cgroups = append(left.Cgroups, dir)
		}
	}
	return left, errors.Join(errs...)
}

// deadOwner reports whether a run id or a cgroup name (after its prefix)
// names, by the stamp at its head, a dsh that no longer runs; see
// procfs.Stamp.Gone for the stamps it never judges.
func deadOwner(name string) bool {
	s, _, ok := procfs.CutStamp(name)
	return ok && s.Gone()
}

// removeCgroupTree kills everything in a dead dsh's cgroup and removes it
// and its children. When the cgroup vanishes under it (removed by another
// sweeper, or by its owner finishing its exit) the error is
// os.ErrNotExist. (A cgroup being removed loses its files before its
// directory: cgroup.procs gone is the sign.)
func removeCgroupTree(dir string) error {
	err := killCgroupTree(dir)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "cgroup.procs")); errors.Is(statErr, os.ErrNotExist) {
			return fmt.Errorf("%s: %s: %w", Name, dir, os.ErrNotExist)
		}
	}
	return err
}

// killCgroupTree is removeCgroupTree without the vanish check at its own
// level; children that vanish are skipped.
func killCgroupTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			err := removeCgroupTree(filepath.Join(dir, e.Name()))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	cc := &commandContainer{cg: dir, cgFD: -1, nsFD: -1}
	_, err = os.Stat(filepath.Join(dir, "cgroup.kill"))
	cc.hasKill = err == nil
	cc.signal(syscall.SIGKILL)
	if !cc.await(time.Now().Add(2 * time.Second)) {
		return fmt.Errorf("%s: processes of %s did not die", Name, dir)
	}
	cc.release()
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s: cannot remove %s", Name, dir)
	}
	return nil
}
