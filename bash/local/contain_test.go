package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
)

// modes are the containments under test; cgroup only where this machine
// can make one.
func modes(t *testing.T) []string {
	t.Helper()
	out := []string{config.ContainMarker}
	if c, err := newContainment(config.ContainCgroup); err == nil {
		c.close()
		out = append(out, config.ContainCgroup)
	} else {
		t.Logf("cgroup containment unavailable here: %v", err)
	}
	return out
}

func TestRunIDInEnvironment(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	a := runCmd(t, e, "echo $"+RunIDEnv, 0).Stdout.Text
	b := runCmd(t, e, "echo $"+RunIDEnv, 0).Stdout.Text
	prefix := fmt.Sprintf("%d-%d-%d-", procfs.PidNamespace(), os.Getpid(), procfs.Start(os.Getpid()))
	if !strings.HasPrefix(a, prefix) || !strings.HasPrefix(b, prefix) || a == b {
		t.Fatalf("run ids %q, %q: want distinct ids starting %q", a, b, prefix)
	}
	// A spec cannot override it.
	spec, _ := e.Resolve(bash.Request{Command: "echo $" + RunIDEnv})
	spec.Env = map[string]string{RunIDEnv: "forged"}
	res, err := e.Run(t.Context(), spec)
	if err != nil || !strings.HasPrefix(res.Stdout.Text, prefix) {
		t.Fatalf("with a forged id in the spec: %q, %v", res.Stdout.Text, err)
	}
}

// TestEscapesEndWithTheCommand: what left the group is ended with the
// command, in either containment: a foreground exit, a timeout, a killed
// background process.
func TestEscapesEndWithTheCommand(t *testing.T) {
	t.Parallel()
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.Containment = mode
			e := newExecutor(t, cfg)
			escape := func(f string) string {
				return "setsid sleep 300 & echo $! > " + f + "; ( ( exec 0<&- 1>&- 2>&-; setsid sleep 300 & echo $! > " + f + "2 ) & )"
			}
			check := func(f string) {
				for _, p := range []string{f, f + "2"} {
					awaitFile(t, p)
					awaitGone(t, readPid(t, p))
				}
			}

			f := tempFile(t, "fg")
			if res := runCmd(t, e, escape(f)+"; until [ -s "+f+"2 ]; do sleep 0.01; done", 0); exitCode(res) != "0" {
				t.Fatalf("foreground: %+v", res)
			}
			check(f) // a foreground exit

			f = tempFile(t, "timeout")
			// The timeout comes after both escapes are made, however
			// slow the machine: the escape waits for them.
			if res := runCmd(t, e, escape(f)+"; until [ -s "+f+"2 ]; do sleep 0.01; done; sleep 60", 3000); !res.TimedOut {
				t.Fatalf("timeout: %+v", res)
			}
			check(f) // a timeout

			f = tempFile(t, "bg")
			p := start(t, e, escape(f)+"; sleep 300")
			awaitFile(t, f+"2")
			p.Kill()
			wait(t, p)
			check(f) // a killed background process
		})
	}
}

// TestCgroupPerCommand: the command runs in a cgroup of its own, removed
// when the command is done; the executor's goes at Close.
func TestCgroupPerCommand(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Containment = config.ContainCgroup
	e, err := New(cfg)
	if err != nil {
		t.Skipf("no cgroup containment here: %v", err)
	}
	if !strings.Contains(e.Containment(), "cgroup v2") {
		t.Errorf("Containment() = %q", e.Containment())
	}
	own := runCmd(t, e, "grep ^0:: /proc/self/cgroup", 0).Stdout.Text
	base := e.contain.base
	rel, _ := strings.CutPrefix(strings.TrimSpace(own), "0::")
	dir := filepath.Join(cgroupMount(t), rel)
	if filepath.Dir(dir) != base {
		t.Fatalf("the command ran in %q (%s), want a child of %s", rel, dir, base)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the command's cgroup %s is still there: %v", dir, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("the executor's cgroup %s is still there after Close: %v", base, err)
	}
}

// TestKeepDetached: with keepDetached, what a foreground command leaves
// runs on (in its group or out of it) until Close; a timeout and a
// background task still end theirs.
func TestKeepDetached(t *testing.T) {
	t.Parallel()
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.Containment = mode
			cfg.KeepDetached = true
			e, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			kept := tempFile(t, "kept")
			res := runCmd(t, e, "sleep 300 >/dev/null 2>&1 & echo $! > "+kept+"; setsid sleep 300 >/dev/null 2>&1 & echo $! > "+kept+"2", 0)
			if exitCode(res) != "0" {
				t.Fatalf("%+v", res)
			}
			keptPids := []int{readPid(t, kept), readPid(t, kept+"2")}
			for _, pid := range keptPids {
				killOnCleanup(t, kept)
				if gone(pid) {
					t.Fatalf("pid %d was not kept", pid)
				}
			}

			f := tempFile(t, "timeout")
			if res := runCmd(t, e, "setsid sleep 300 & echo $! > "+f+"; sleep 60", 2000); !res.TimedOut {
				t.Fatalf("timeout: %+v", res)
			}
			awaitGone(t, readPid(t, f))
			f = tempFile(t, "bg")
			p := start(t, e, "setsid sleep 300 & echo $! > "+f)
			wait(t, p)
			awaitGone(t, readPid(t, f))

			for _, pid := range keptPids {
				if gone(pid) {
					t.Fatalf("kept pid %d ended before Close", pid)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			for _, pid := range keptPids {
				if !gone(pid) {
					t.Errorf("kept pid %d outlived Close", pid)
				}
			}
		})
	}
}

// TestMarkerCatchesAnEscapeeInExecve: in marker mode, an escapee whose
// environment reads empty when the command's leader exits (it is in
// execve; a real one passes that moment too quickly to be caught on
// purpose, so lookupEnv holds it there for its first reads) is still
// found and killed with the command. Under load, a helper saw 2 of 2000
// `setsid sleep 300 &` escapees survive before the scan waited for such
// environments. Not parallel: it replaces lookupEnv.
func TestMarkerCatchesAnEscapeeInExecve(t *testing.T) {
	var mu sync.Mutex
	reads := make(map[int]int)
	lookupEnv = func(pid int, name string) (string, procfs.Env) {
		mu.Lock()
		reads[pid]++
		n := reads[pid]
		mu.Unlock()
		if n <= 5 {
			return "", procfs.EnvEmpty
		}
		return procfs.LookupEnv(pid, name)
	}
	t.Cleanup(func() { lookupEnv = procfs.LookupEnv })
	cfg := testConfig(t)
	cfg.Containment = config.ContainMarker
	e := newExecutor(t, cfg)
	f := tempFile(t, "escapee")
	killOnCleanup(t, f)
	if res := runCmd(t, e, "setsid sleep 300 & echo $! > "+f, 0); exitCode(res) != "0" {
		t.Fatalf("%+v", res)
	}
	// The run is done only when no member is left: nothing to wait for.
	if pid := readPid(t, f); !gone(pid) {
		t.Fatalf("the escapee %d outlived the command", pid)
	}
}

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

// awaitFile waits for a command to write a file.
func awaitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if data, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(data))) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was never written", path)
		}
		time.Sleep(5 * time.Millisecond)
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

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		"/sys/fs/cgroup":      "/sys/fs/cgroup",
		`/mnt/with\040space`:  "/mnt/with space",
		`/a\134b`:             `/a\b`,
		`/trailing\04`:        `/trailing\04`,
		`/not\999octal`:       `/not\999octal`,
		`/tab\011and\012line`: "/tab\tand\nline",
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// cgroupMount is where cgroup2 is mounted (ownCgroup without this
// process's own cgroup path).
func cgroupMount(t *testing.T) string {
	t.Helper()
	parent, err := ownCgroup()
	if err != nil {
		t.Skipf("no cgroup2: %v", err)
	}
	self, _ := os.ReadFile("/proc/self/cgroup")
	for line := range strings.SplitSeq(string(self), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && p != "/" {
			return strings.TrimSuffix(parent, p)
		}
	}
	return parent
}

// TestSubCgroupEscape: a command that makes a cgroup below its own and
// moves a process into it does not get it past the kill, and leaves no
// cgroup behind.
func TestSubCgroupEscape(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Containment = config.ContainCgroup
	e, err := New(cfg)
	if err != nil {
		t.Skipf("no cgroup containment here: %v", err)
	}
	f := tempFile(t, "sub")
	res := runCmd(t, e, `CG=`+cgroupMount(t)+`$(sed -n 's/^0:://p' /proc/self/cgroup); mkdir $CG/sub && `+
		`setsid sh -c 'echo $$ > $0/sub/cgroup.procs && echo $$ > `+f+` && exec sleep 300' $CG & until [ -s `+f+` ]; do sleep 0.01; done`, 0)
	if exitCode(res) != "0" {
		t.Fatalf("%+v", res)
	}
	awaitGone(t, readPid(t, f))
	base := e.contain.base
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("cgroups left under %s after Close: %v", base, err)
	}
}

// TestForkStormIsKilled: a TERM-ignoring escapee that forks without pause
// while the kill runs leaves nothing carrying the command's run id.
func TestForkStormIsKilled(t *testing.T) {
	t.Parallel()
	for _, mode := range modes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.Containment = mode
			e := newExecutor(t, cfg)
			f := tempFile(t, "id")
			p := start(t, e, `echo $`+RunIDEnv+` > `+f+`; setsid bash -c 'trap "" TERM; while :; do sleep 300 & done' & sleep 300`)
			awaitFile(t, f)
			id := strings.TrimSpace(string(must(os.ReadFile(f))))
			for len(marked(id)) < 5 { // the storm is going
				time.Sleep(5 * time.Millisecond)
			}
			p.Kill()
			wait(t, p)
			deadline := time.Now().Add(5 * time.Second)
			for {
				left := marked(id)
				if len(left) == 0 {
					return
				}
				if time.Now().After(deadline) {
					for _, pid := range left {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
					t.Fatalf("%d processes of the command outlived its kill: %v", len(left), left)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// marked lists the live processes carrying run id id.
func marked(id string) []int {
	var pids []int
	all, _ := procfs.Pids()
	for _, pid := range all {
		if v, ok := procfs.Getenv(pid, RunIDEnv); ok && v == id && !gone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestPollExit: without pidfds, exits are awaited by looking.
func TestPollExit(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if pollExit([]int{cmd.Process.Pid}, time.Now().Add(50*time.Millisecond)) {
		t.Fatal("pollExit reported a running process gone")
	}
	_ = cmd.Process.Kill()
	if !pollExit([]int{cmd.Process.Pid}, time.Now().Add(5*time.Second)) {
		t.Fatal("pollExit missed the exit (a zombie has exited)")
	}
}

// TestReapedLeaderGroup: once the shell is reaped, a process that took its
// pid as a new group (pid reuse) is not counted as a member.
func TestReapedLeaderGroup(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid // stands for a reused pgid
	if got, _ := scanMembers(pid, 0, 0, false, ""); !slices.Contains(got, pid) {
		t.Fatalf("before the reap: members %v lack %d", got, pid)
	}
	if got, _ := scanMembers(pid, 0, 1, false, ""); slices.Contains(got, pid) {
		t.Fatalf("reaped at tick 1: %d, started later, counted as a member", pid)
	}
}
