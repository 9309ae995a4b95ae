package local

import (
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
)

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
	if pid := proctest.ReadPid(t, f); !proctest.Gone(pid) {
		t.Fatalf("the escapee %d outlived the command", pid)
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
	if got, _ := scanMembers(pid, 0, 0, false, false, "", nil, namespaces{}, window{}); !slices.Contains(got, pid) {
		t.Fatalf("before the reap: members %v lack %d", got, pid)
	}
	if got, _ := scanMembers(pid, 0, 1, false, false, "", nil, namespaces{}, window{}); slices.Contains(got, pid) {
		t.Fatalf("reaped at tick 1: %d, started later, counted as a member", pid)
	}
}
