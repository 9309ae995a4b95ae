package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
)

// TestCgroupPerCommand: the command runs in a cgroup of its own, removed
// when the command is done; the executor's goes at Close.
func TestCgroupPerCommand(t *testing.T) {
	t.Parallel()
	e := cgroupExecutor(t)
	if !strings.Contains(e.Containment(), "cgroup v2") {
		t.Errorf("Containment() = %q", e.Containment())
	}
	// Seen from inside, the command's cgroup is the root of its cgroup
	// namespace; this process sees where it is.
	pidFile := tempFile(t, "pid")
	p := start(t, e, "grep ^0:: /proc/self/cgroup; echo $$ > "+pidFile+"; exec sleep 300")
	pid := proctest.ReadPid(t, pidFile)
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	_, rel, _ := strings.Cut(string(data), "0::")
	rel = strings.TrimSpace(rel)
	dir := filepath.Join(cgroupMount(t), rel)
	base := e.contain.base
	if filepath.Dir(dir) != base {
		t.Fatalf("the command ran in %q (%s), want a child of %s", rel, dir, base)
	}
	p.Kill()
	wait(t, p)
	if inside := p.Read().Delta; e.contain.cgroupNS && inside != "0::/\n" {
		t.Errorf("inside its cgroup namespace the command sees %q, want 0::/", inside)
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
	e := cgroupExecutor(t)
	f := tempFile(t, "sub")
	// The command's cgroup is the one below the executor's (inside its
	// cgroup namespace, /proc/self/cgroup says only "/").
	res := runCmd(t, e, `CG=$(echo `+e.contain.base+`/*/); mkdir $CG/sub && `+
		`setsid sh -c 'echo $$ > $0/sub/cgroup.procs && echo $$ > `+f+` && exec sleep 300' $CG & until [ -s `+f+` ]; do sleep 0.01; done`, 0)
	if exitCode(res) != "0" {
		t.Fatalf("%+v", res)
	}
	proctest.AwaitGone(t, proctest.ReadPid(t, f))
	base := e.contain.base
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("cgroups left under %s after Close: %v", base, err)
	}
}

// cgroupExecutor is an executor with containment: cgroup; the test is
// skipped where no cgroup can be made.
func cgroupExecutor(t *testing.T) *Executor {
	t.Helper()
	cfg := testConfig(t)
	cfg.Containment = config.ContainCgroup
	e, err := New(cfg)
	if err != nil {
		t.Skipf("no cgroup containment here: %v", err)
	}
	return e
}
