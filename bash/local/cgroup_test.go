//go:build linux

package local

import (
	"fmt"
	"os"
	"os/exec"
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

// canLeaveEnv, set to a cgroup path, makes TestCanLeaveHelper print
// canLeave of it: the test binary run as nobody.
const canLeaveEnv = "DSH_TEST_CAN_LEAVE"

func TestCanLeaveHelper(t *testing.T) {
	if base := os.Getenv(canLeaveEnv); base != "" {
		fmt.Printf("canLeave=%v\n", canLeave(base))
	}
}

// TestCanLeave: the scan for processes outside their cgroup is made only
// where this user could move one there: root, or a user who may write
// the cgroup.procs of a cgroup above the executor's (a delegated
// subtree); not a user without that right.
func TestCanLeave(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: switching to nobody, and making a cgroup to delegate, need root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("SKIP-REASON: no setpriv (util-linux) to run the test binary as nobody")
	}
	mount := cgroupMount(t)
	parent := filepath.Join(mount, fmt.Sprintf("dsh-canleave-test-%d", os.Getpid()))
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Skipf("SKIP-REASON: cannot make a cgroup: %v", err)
	}
	t.Cleanup(func() { _ = os.Remove(parent) })
	base := filepath.Join(parent, "dsh-base") // need not exist: only its ancestors are checked
	if !canLeave(base) {
		t.Error("root cannot leave a cgroup, says canLeave")
	}
	dir, err := os.MkdirTemp("/var/tmp", "dsh-canleave-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "local.test")
	data, err := os.ReadFile(os.Args[0])
	must(t, err)
	must(t, os.WriteFile(bin, data, 0o755))
	asNobody := func() string {
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", bin, "-test.run", "^TestCanLeaveHelper$")
		cmd.Env = append(os.Environ(), canLeaveEnv+"="+base)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := asNobody(); !strings.Contains(out, "canLeave=false") {
		t.Errorf("nobody, with no cgroup delegated: %q", out)
	}
	must(t, os.Chown(filepath.Join(parent, "cgroup.procs"), 65534, 65534))
	if out := asNobody(); !strings.Contains(out, "canLeave=true") {
		t.Errorf("nobody, owning the cgroup.procs above the base: %q", out)
	}
}
