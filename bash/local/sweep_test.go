package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/internal/procfs"
)

// testRunIDEnv marks the fabricated leftovers of the sweep tests instead
// of RunIDEnv, and privateCgroupParent holds their cgroups: every dsh and
// executor starting meanwhile on this machine (other test binaries run at
// the same time) sweeps, and would take them first and log it.
const testRunIDEnv = "DSH_TEST_SWEEP_RUN_ID"

// privateCgroupParent makes an empty cgroup below this process's own one
// that no sweep looks into, or returns "" where none can be made.
func privateCgroupParent(t *testing.T) string {
	t.Helper()
	own, err := ownCgroup()
	if err != nil {
		t.Logf("no cgroup sweep test: %v", err)
		return ""
	}
	dir, err := os.MkdirTemp(own, "sweeptest-")
	if err != nil {
		t.Logf("no cgroup sweep test: %v", err)
		return ""
	}
	t.Cleanup(func() { removeTree(dir) })
	return dir
}

// TestSweep: processes and cgroups of a dsh that no longer runs are killed
// and removed when an executor starts; those of a live one are left alone.
func TestSweep(t *testing.T) {
	self, ns := os.Getpid(), procfs.PidNamespace()
	deadOwner := fmt.Sprintf("%d-%d-%d", ns, self, procfs.Start(self)+7) // this pid, another start: a dsh gone
	otherNS := fmt.Sprintf("%d-%d-%d", ns+1, self, procfs.Start(self)+7) // another namespace: never judged
	mark := func(env string) *exec.Cmd {
		cmd := exec.Command("sleep", "300")
		cmd.Env = append(os.Environ(), env, leakMark)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	orphan := mark(testRunIDEnv + "=" + deadOwner + "-abc-1")
	mine := mark(testRunIDEnv + fmt.Sprintf("=%d-%d-%d-abc-1", ns, self, procfs.Start(self)))
	foreign := mark(testRunIDEnv + "=" + otherNS + "-abc-1")

	var cgOrphan *exec.Cmd
	var cgDir string
	parent := privateCgroupParent(t)
	if parent != "" {
		cgDir = filepath.Join(parent, cgroupPrefix+deadOwner+"-sweeptest")
		if err := os.MkdirAll(filepath.Join(cgDir, "1"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = removeCgroupTree(cgDir) })
		cgOrphan = mark("NO_MARKER=1")
		if err := os.WriteFile(filepath.Join(cgDir, "1", "cgroup.procs"), []byte(fmt.Sprint(cgOrphan.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}

	left, err := sweep(parent, testRunIDEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(left.Pids, orphan.Process.Pid) {
		t.Errorf("swept pids %v lack the orphan %d", left.Pids, orphan.Process.Pid)
	}
	if slices.Contains(left.Pids, mine.Process.Pid) || gone(mine.Process.Pid) {
		t.Errorf("the sweep killed %d, whose dsh runs", mine.Process.Pid)
	}
	if slices.Contains(left.Pids, foreign.Process.Pid) || gone(foreign.Process.Pid) {
		t.Errorf("the sweep killed %d, whose dsh is of another pid namespace", foreign.Process.Pid)
	}
	awaitGone(t, orphan.Process.Pid)
	if cgDir != "" {
		awaitGone(t, cgOrphan.Process.Pid)
		if _, err := os.Stat(cgDir); !os.IsNotExist(err) {
			t.Errorf("the dead dsh's cgroup %s is still there", cgDir)
		}
		found := false
		for _, d := range left.Cgroups {
			found = found || d == cgDir
		}
		if !found {
			t.Errorf("swept cgroups %v lack %s", left.Cgroups, cgDir)
		}
	}
}

// TestConcurrentSweeps: dsh processes starting together sweep the same
// dead dsh's cgroups; one removing a cgroup while another reads it is no
// error (CI saw "sweeping ... no such file or directory" when two `dsh
// run` started at once).
func TestConcurrentSweeps(t *testing.T) {
	parent := privateCgroupParent(t)
	if parent == "" {
		t.Skip("no cgroup to sweep")
	}
	self, ns := os.Getpid(), procfs.PidNamespace()
	for round := range 20 {
		var dirs []string
		for i := range 4 {
			dead := fmt.Sprintf("%d-%d-%d", ns, self, procfs.Start(self)+uint64(100+round*10+i))
			dir := filepath.Join(parent, cgroupPrefix+dead+"-race")
			if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "c"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = removeCgroupTree(dir) })
			dirs = append(dirs, dir)
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		lefts := make([]Leftovers, 4)
		for i := range 4 {
			wg.Go(func() { lefts[i], errs[i] = sweep(parent, testRunIDEnv) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: concurrent sweeps failed: %v", round, err)
		}
		for _, dir := range dirs {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("round %d: %s is still there", round, dir)
			}
			if !slices.ContainsFunc(lefts, func(l Leftovers) bool { return slices.Contains(l.Cgroups, dir) }) {
				t.Errorf("round %d: no sweep reported %s", round, dir)
			}
		}
	}
}

func TestRunIDOwner(t *testing.T) {
	for _, tc := range []struct {
		id    string
		ns    uint64
		pid   int
		start uint64
		ok    bool
	}{
		{"99-12-345-abcd-6", 99, 12, 345, true},
		{"99-12-345-abcd", 99, 12, 345, true},
		{"99-12-345", 0, 0, 0, false},
		{"x-12-345-a", 0, 0, 0, false},
		{"99-x-345-a", 0, 0, 0, false},
		{"99-0-345-a", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	} {
		ns, pid, start, ok := runIDOwner(tc.id)
		if ok != tc.ok || (ok && (ns != tc.ns || pid != tc.pid || start != tc.start)) {
			t.Errorf("runIDOwner(%q) = %d, %d, %d, %v", tc.id, ns, pid, start, ok)
		}
	}
}
