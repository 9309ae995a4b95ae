package local

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
)

// osThreads is how many OS threads this process has.
func osThreads(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestThreadsPerRunningCommand: a running command costs dsh no OS thread
// of its own (its exit is awaited on the poller, not in waitid), so a
// fork storm that shares dsh's process limit finds dsh with few threads
// to lose. 64 running commands once cost 64 threads blocked in waitid.
func TestThreadsPerRunningCommand(t *testing.T) {
	e := newExecutor(t, testConfig(t))
	const n = 64
	warm := start(t, e, "sleep 300") // the runtime's own threads start
	before := osThreads(t)
	procs := []bash.Process{warm}
	for range n {
		procs = append(procs, start(t, e, "sleep 300"))
	}
	during := osThreads(t)
	for _, p := range procs {
		p.Kill()
	}
	for _, p := range procs {
		wait(t, p)
	}
	t.Logf("threads: %d with 1 command running, %d with %d more", before, during, n)
	if grew := during - before; grew >= n/2 {
		t.Errorf("%d running commands cost %d OS threads", n, grew)
	}
}

// TestCommandsGetNprocBelowDsh: where dsh has a process limit of its own
// (RLIMIT_NPROC), its commands get a lower one, soft and hard, set before
// the command can fork (issue 15, item 3; the end-to-end storm is in
// cmd/dsh). Not parallel: the limit is this process's.
func TestCommandsGetNprocBelowDsh(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &old); err != nil {
		t.Fatal(err)
	}
	own := min(old.Max, 100000) // high enough for this process's threads
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: own, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	e := newExecutor(t, testConfig(t))
	_ = unix.Setrlimit(unix.RLIMIT_NPROC, &old) // the executor read it
	want := fmt.Sprintf("%d\n%d\n", below(own), below(own))
	if got := runCmd(t, e, "ulimit -Su; ulimit -Hu", 0).Stdout.Text; got != want {
		t.Errorf("the command's RLIMIT_NPROC (soft, hard) = %q, want %q (dsh's is %d)", got, want, own)
	}
	if got := runCmd(t, e, "ulimit -u unlimited", 0); os.Geteuid() != 0 && exitCode(got) == "0" {
		t.Errorf("a command raised its RLIMIT_NPROC again: %+v", got)
	}
	if d := e.Limits(); !strings.Contains(d, fmt.Sprintf("RLIMIT_NPROC %d for commands, below dsh's RLIMIT_NPROC %d", below(own), own)) {
		t.Errorf("Limits() = %q", d)
	}
}

// TestBelow: commands keep a reserve below dsh's limit for dsh.
func TestBelow(t *testing.T) {
	for limit, want := range map[uint64]uint64{1: 1, 64: 1, 65: 1, 200: 136, 4096: 3584, 100000: 98976} {
		if got := below(limit); got != want {
			t.Errorf("below(%d) = %d, want %d", limit, got, want)
		}
	}
}

// TestPerCommandCgroupLimits: where the pids (and memory) controllers can
// be enabled, each command's cgroup has local.limits' pids.max and
// memory.max.
func TestPerCommandCgroupLimits(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Containment = config.ContainCgroup
	cfg.Limits = config.Limits{Pids: 321, MemoryBytes: 256 << 20}
	e, err := New(cfg)
	if err != nil {
		t.Skipf("SKIP-REASON: no cgroup containment here: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if !e.limits.Load().cgPids {
		t.Skipf("SKIP-REASON: no pids controller for the executor's cgroup: %s", e.Limits())
	}
	got := runCmd(t, e, "cat "+e.contain.base+"/*/pids.max", 0).Stdout.Text
	if got != "321\n" {
		t.Errorf("the command's pids.max = %q, want 321", got)
	}
	if e.limits.Load().cgMemory {
		if got := runCmd(t, e, "cat "+e.contain.base+"/*/memory.max", 0).Stdout.Text; got != "268435456\n" {
			t.Errorf("the command's memory.max = %q, want 268435456", got)
		}
	}
	if !strings.Contains(e.Limits(), "pids.max 321 per command") {
		t.Errorf("Limits() = %q", e.Limits())
	}
}
