package local

import (
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// assumedExecutor is an executor as root with containment auto, which
// must have assumed cgroup containment rather than probed it wherever a
// cgroup of dsh's can be made here (the test skips only where none can:
// then there is nothing to assume).
func assumedExecutor(t *testing.T) *Executor {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: cgroup containment is assumed only as root; other users probe at start")
	}
	if c, err := newContainment(config.ContainCgroup); err != nil {
		t.Skipf("SKIP-REASON: no cgroup containment here: %v", err)
	} else {
		c.close()
	}
	e := newExecutor(t, testConfig(t))
	e.Started()
	if !e.contain.assumed.Load() || e.contain.generation() != 0 {
		t.Fatalf("as root, the start probed: %s", e.contain.describe())
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
	res := runCmd(t, e, "grep '^0::' /proc/self/cgroup", 0)
	if got := strings.TrimSpace(res.Stdout.Text); got != "0::/" {
		t.Errorf("the command's cgroup: %q, want 0::/ (its own namespace)", got)
	}
	if e.contain.assumed.Load() || !e.contain.cloned.Load() || e.contain.generation() != 0 {
		t.Errorf("a command in its cgroup namespace did not confirm the containment without a probe: assumed %v, cloned %v, probes %d",
			e.contain.assumed.Load(), e.contain.cloned.Load(), e.contain.generation())
	}
	if d := e.Containment(); !strings.Contains(d, "cgroup v2") {
		t.Errorf("containment: %s", d)
	}
}

// failingLauncher fails the first spawn into a cgroup as a kernel that
// cannot clone into one does (EOPNOTSUPP), then spawns as shellLauncher.
// A fake: as root, the kernel refuses no clone into a cgroup dsh made,
// short of changing the machine's cgroup tree.
type failingLauncher struct{ failed atomic.Bool }

func (f *failingLauncher) launch(l launchSpec) (*launched, error) {
	if l.cgroupFD >= 0 && f.failed.CompareAndSwap(false, true) {
		return nil, &os.SyscallError{Syscall: "clone3", Err: syscall.EOPNOTSUPP}
	}
	return shellLauncher{}.launch(l)
}

// TestAssumedCgroupRetried: a spawn into a cgroup that fails while the
// containment is assumed runs the probe, and the command is spawned once
// more: the caller sees it run. The probe found cgroups work, so they
// stay in use.
func TestAssumedCgroupRetried(t *testing.T) {
	t.Parallel()
	e := assumedExecutor(t)
	e.launcher = &failingLauncher{}
	res := runCmd(t, e, "echo ran", 0)
	if res.Stdout.Text != "ran\n" || exitCode(res) != "0" {
		t.Fatalf("first command: %+v", res)
	}
	if e.contain.generation() != 1 || e.contain.assumed.Load() {
		t.Errorf("probes %d, assumed %v; want one probe, nothing assumed", e.contain.generation(), e.contain.assumed.Load())
	}
	if d := e.Containment(); !strings.HasPrefix(d, "cgroup v2") {
		t.Errorf("containment after a probe that passed: %s", d)
	}
}

// TestAssumedCgroupFailsOver: where the probe fails too (here the
// executor's cgroup is gone), the containment turns to the marker, with
// the marker's limits; once a command was cloned into its cgroup, or
// when the failure is one of the system's limits, it does not: cloning
// works, and a probe that fails then says nothing of it.
func TestAssumedCgroupFailsOver(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: cgroup containment is assumed only as root")
	}
	assumed := func(t *testing.T) *containment {
		c, err := newContainment("")
		if err != nil || !c.assumed.Load() {
			t.Skipf("SKIP-REASON: no cgroup containment assumed here: %v", err)
		}
		t.Cleanup(c.close)
		return c
	}
	t.Run("probe fails", func(t *testing.T) {
		c := assumed(t)
		if err := os.Remove(c.base); err != nil {
			t.Fatal(err)
		}
		var marker bool
		if !c.confirm(0, func() { marker = true }) || !marker || c.cgroupMode() || !strings.HasPrefix(c.describe(), "marker:") {
			t.Errorf("after a failed probe: marker limits %v, %s", marker, c.describe())
		}
		if !c.confirm(0, func() {}) {
			t.Error("a spawn that began before the probe is not tried again")
		}
		if c.confirm(c.generation(), func() { t.Error("probed again") }) {
			t.Error("a spawn that failed after the probe is tried again")
		}
	})
	t.Run("after a clone", func(t *testing.T) {
		c := assumed(t)
		c.spawned(false) // a sandboxed command was cloned into its cgroup
		if err := os.Remove(c.base); err != nil {
			t.Fatal(err)
		}
		if c.confirm(0, func() { t.Error("turned to the marker") }) || !c.cgroupMode() {
			t.Errorf("a failed probe after a clone changed the containment: %s", c.describe())
		}
	})
	t.Run("system limit", func(t *testing.T) {
		if !systemLimit(&os.PathError{Op: "mkdir", Err: syscall.EMFILE}) || systemLimit(&os.PathError{Op: "mkdir", Err: syscall.ENOENT}) {
			t.Error("systemLimit")
		}
	})
}
