//go:build linux

package local

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
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
	if slices.Contains(left.Pids, mine.Process.Pid) || proctest.Gone(mine.Process.Pid) {
		t.Errorf("the sweep killed %d, whose dsh runs", mine.Process.Pid)
	}
	if slices.Contains(left.Pids, foreign.Process.Pid) || proctest.Gone(foreign.Process.Pid) {
		t.Errorf("the sweep killed %d, whose dsh is of another pid namespace", foreign.Process.Pid)
	}
	proctest.AwaitGone(t, orphan.Process.Pid)
	if cgDir != "" {
		proctest.AwaitGone(t, cgOrphan.Process.Pid)
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

// pidnsHelperEnv, set to a spill base, makes the test binary the dsh of
// another pid namespace in TestSweepSparesAnotherPidNamespace.
const pidnsHelperEnv = "DSH_LOCAL_TEST_PIDNS_SPILL"

// TestSweepSparesAnotherPidNamespace: a dsh in a pid namespace of its own
// (a container sharing /tmp with the host, say) spills under a base a
// host dsh shares; the host dsh's start-up sweep leaves that live spill
// directory alone, although the pid and start time the directory records,
// read in the host's namespace, name no running process.
func TestSweepSparesAnotherPidNamespace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	cmd, spill := startPidnsHelper(t, base)
	if inner := cmd.innerPid; inner == cmd.Process.Pid {
		t.Fatalf("the helper has pid %d in its namespace and in the host's: no namespace of its own", inner)
	}
	// A dead dsh of this namespace, which the sweep must remove: it shows
	// that the sweep ran before the check below.
	dead := filepath.Join(base, fmt.Sprintf("dsh-out-%d-999999-1-abcdef", procfs.PidNamespace()))
	if err := os.Mkdir(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.SpillDir = base
	// New sweeps base, but may return before it has.
	newExecutor(t, cfg).started()
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the start-up sweep left the spill directory of a dead dsh of this namespace: %v", err)
	}
	if _, err := os.Stat(spill); err != nil {
		t.Fatalf("the host's start-up sweep removed the live spill file of a dsh in another pid namespace: %v", err)
	}
}

// pidnsHelper is a test binary running runPidnsHelper in a pid namespace
// of its own.
type pidnsHelper struct {
	*exec.Cmd
	innerPid int // its pid in its own namespace
}

// startPidnsHelper starts the test binary as a dsh in a new pid namespace
// (and a mount namespace, for its own /proc; a user namespace too unless
// root) spilling under base, and returns it with its spill file, once
// made. The helper ends when the test does. Where no namespace can be
// made, the test is skipped.
func startPidnsHelper(t *testing.T, base string) (*pidnsHelper, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), pidnsHelperEnv+"="+base)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		Pdeathsig:  syscall.SIGKILL,
	}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a process in a new pid namespace here: %v", err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the helper's cue to end
		if err := cmd.Wait(); err != nil {
			t.Errorf("the pid namespace helper: %v; stderr:\n%s", err, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if reason, ok := strings.CutPrefix(line, "skip: "); ok {
		t.Skipf("the new pid namespace cannot have a /proc of its own here: %s", strings.TrimSpace(reason))
	}
	var inner int
	var spill string
	if _, scanErr := fmt.Sscan(line, &inner, &spill); err != nil || scanErr != nil {
		t.Fatalf("the pid namespace helper reported no spill file: %q, %v, %v", line, err, scanErr)
	}
	return &pidnsHelper{Cmd: cmd, innerPid: inner}, spill
}

// runPidnsHelper is the body of the helper: it mounts its namespace's
// /proc (so that it reads its own pid and start time, as a containerised
// dsh does), runs a command whose output spills under base, reports its
// pid and the spill file, and keeps both until stdin closes. It reports
// "skip: why" instead where it cannot mount /proc.
func runPidnsHelper(base string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// Where the namespace cannot have its own /proc (a container that
	// masks parts of it, say), the test cannot be made: say so, and end.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Printf("skip: making mounts private: %v\n", err)
		return
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fmt.Printf("skip: mounting /proc: %v\n", err)
		return
	}
	e, err := New(config.Local{SpillDir: base, MaxOutputBytes: 10, Containment: config.ContainMarker})
	if err != nil {
		fail(err)
	}
	spec, err := e.Resolve(bash.Request{Command: "seq 1000"})
	if err != nil {
		fail(err)
	}
	res, err := bash.Run(context.Background(), e, spec)
	if err != nil {
		fail(err)
	}
	if res.Stdout.SpillPath == "" {
		fail(fmt.Errorf("no spill file: %+v", res.Stdout))
	}
	fmt.Println(os.Getpid(), res.Stdout.SpillPath)
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := e.Close(); err != nil {
		fail(err)
	}
}
