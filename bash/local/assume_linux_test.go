package local

import (
	"os"
	"strings"
	"testing"
)

// assumedExecutor is an executor, as root with containment auto, whose
// cgroup containment was assumed rather than probed; the test skips
// where that is not the case (not root, no cgroup v2 to make one in).
func assumedExecutor(t *testing.T) *Executor {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: cgroup containment is assumed only as root; other users probe at start")
	}
	e := newExecutor(t, testConfig(t))
	e.Started()
	if !e.contain.assumed.Load() {
		t.Skipf("SKIP-REASON: no cgroup containment assumed here (%s)", e.contain.describe())
	}
	return e
}

// TestAssumedCgroupHolds: as root, the start spawns no probe, and the
// first unsandboxed command confirms what was assumed: it runs in a
// cgroup of its own, in a cgroup namespace of its own (its cgroup reads
// as the root of the namespace).
func TestAssumedCgroupHolds(t *testing.T) {
	t.Parallel()
	e := assumedExecutor(t)
	entries, _ := os.ReadDir(e.contain.base)
	for _, de := range entries {
		if de.IsDir() {
			t.Errorf("the executor's cgroup has a child before any command: %s", de.Name())
		}
	}
	res := runCmd(t, e, "grep '^0::' /proc/self/cgroup", 0)
	if got := strings.TrimSpace(res.Stdout.Text); got != "0::/" {
		t.Errorf("the command's cgroup: %q, want 0::/ (its own namespace)", got)
	}
	if e.contain.assumed.Load() {
		t.Error("a command in its cgroup namespace did not confirm the containment")
	}
	if d := e.Containment(); !strings.Contains(d, "cgroup v2") {
		t.Errorf("containment: %s", d)
	}
}

// TestAssumedCgroupFailsOver: where what was assumed does not hold (here
// the executor's cgroup is gone before its first command), the first
// command's failure runs the probe, which turns containment to the
// marker, and the command runs there: the caller sees it succeed.
func TestAssumedCgroupFailsOver(t *testing.T) {
	t.Parallel()
	e := assumedExecutor(t)
	if err := os.Remove(e.contain.base); err != nil {
		t.Fatal(err)
	}
	res := runCmd(t, e, "echo ran; echo $"+RunIDEnv, 0)
	if !strings.HasPrefix(res.Stdout.Text, "ran\n") || exitCode(res) != "0" {
		t.Fatalf("first command: %+v", res)
	}
	if d := e.Containment(); !strings.HasPrefix(d, "marker:") || !strings.Contains(d, "cannot make a cgroup") {
		t.Errorf("containment after the failed probe: %s", d)
	}
	if l := e.Limits(); strings.Contains(l, "pids.max") && !strings.Contains(l, "not in force") {
		t.Errorf("limits still name the cgroup: %s", l)
	}
	// The marker contains what the command leaves behind.
	p := start(t, e, "sleep 100 & echo $!; wait")
	p.Kill()
	wait(t, p)
}
