package main

// A fork storm in one command must not take dsh down (issue 15, item 3):
// where dsh and its commands share a process limit, RLIMIT_NPROC or a
// pids cgroup, the commands reach their limit first and dsh keeps
// serving. RLIMIT_NPROC binds only users other than root, so dsh runs as
// a user of its own here (RLIMIT_NPROC counts all of a user's processes
// on the machine: nobody's would count other tests' processes too).

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/internal/proctest"
)

// stormUID is the user dsh runs as: one no other process uses.
const stormUID = 64172

// stormLimit is the process limit dsh shares with its commands.
const stormLimit = 200

func TestForkStormLeavesDshServing(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: running dsh as a user of its own, and making a pids cgroup, need root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("SKIP-REASON: no setpriv (util-linux) to run dsh as another user")
	}
	asUser := []string{setpriv, fmt.Sprintf("--reuid=%d", stormUID), fmt.Sprintf("--regid=%d", stormUID), "--clear-groups", "--inh-caps=-all"}
	dsh := filepath.Join(copies(t), "dsh")
	t.Run("ulimit", func(t *testing.T) {
		// bash's ulimit -u sets RLIMIT_NPROC for dsh; setpriv keeps it.
		stormRun(t, append([]string{"bash", "-c", fmt.Sprintf(`ulimit -u %d && exec "$@"`, stormLimit), "bash"}, asUser...), dsh)
	})
	t.Run("pids-cgroup", func(t *testing.T) {
		cg := pidsCgroup(t)
		stormRun(t, append([]string{"bash", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg}, asUser...), dsh)
	})
}

// stormRun starts dsh mcp with prefix, runs a bounded fork storm in the
// background and, once its forks fail, checks that a call still runs,
// then that killing the storm leaves none of its processes.
func stormRun(t *testing.T, prefix []string, dsh string) {
	work, err := os.MkdirTemp("/var/tmp", "dsh-storm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chown(work, stormUID, stormUID); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prefix[0], append(append(prefix[1:], dsh, "mcp", "--workdir", work), "--config", writeStormConfig(t))...)
	cmd, c, stderr := startMCPWith(t, cmd)
	t.Cleanup(func() { killUser(stormUID) })
	call := func(name string, args map[string]any) string {
		return callText(t, c.send("tools/call", map[string]any{"name": name, "arguments": args}, false))
	}
	// 400 sleeps: twice the limit.
	storm := "for i in $(seq 400); do sleep 300 & done; wait"
	if got := call("bash", map[string]any{"command": storm, "description": "fork storm", "run_in_background": true}); got != "started background task bash-1" {
		t.Fatalf("storm start: %q", got)
	}
	proctest.Eventually(t, proctest.Wait, func() error {
		out := call("task_output", map[string]any{"task_id": "bash-1"})
		if !strings.Contains(out, "fork: ") {
			return fmt.Errorf("the storm's forks do not fail yet: %d processes of its user; %q", len(userPids(stormUID)), out)
		}
		return nil
	})
	t.Logf("the storm reached its limit at %d processes of dsh's user", len(userPids(stormUID)))
	if got := call("bash", map[string]any{"command": "echo served", "description": "during the storm"}); got != "served\n" {
		t.Fatalf("during the storm a call got %q; dsh's stderr:\n%s", got, stderr.String())
	}
	if got := call("task_kill", map[string]any{"task_id": "bash-1"}); got != "requested cancellation of task bash-1" {
		t.Fatalf("task_kill: %q", got)
	}
	proctest.Eventually(t, proctest.Wait, func() error {
		if left := userPids(stormUID); len(left) != 1 || left[0] != cmd.Process.Pid {
			return fmt.Errorf("processes of dsh's user after the kill: %d (dsh is %d)", len(left), cmd.Process.Pid)
		}
		return nil
	})
	if got := call("bash", map[string]any{"command": "echo again", "description": "after the storm"}); got != "again\n" {
		t.Errorf("after the storm a call got %q", got)
	}
}

// writeStormConfig is a config with a short grace, readable by dsh's user,
// unsandboxed: the storm's processes are counted as dsh's user's.
func writeStormConfig(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "dsh.yaml")
	if err := os.WriteFile(f, []byte("local:\n  graceMs: 200\n  sandbox: {mode: off}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(filepath.Dir(f), 0o755)
	for d := filepath.Dir(filepath.Dir(f)); d != "/"; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			_ = os.Chmod(d, st.Mode().Perm()|0o011)
		}
	}
	return f
}

// pidsCgroup makes a cgroup whose pids.max is stormLimit: in the v2
// hierarchy where its root offers the pids controller, else in a v1 pids
// hierarchy. It is removed at the end.
func pidsCgroup(t *testing.T) string {
	t.Helper()
	rnd := make([]byte, 4)
	_, _ = rand.Read(rnd)
	name := "dsh-storm-test-" + hex.EncodeToString(rnd)
	v2, v1 := cgroupMounts(t)
	var dir string
	switch {
	case v2 != "" && hasField(filepath.Join(v2, "cgroup.controllers"), "pids"):
		_ = os.WriteFile(filepath.Join(v2, "cgroup.subtree_control"), []byte("+pids"), 0)
		dir = filepath.Join(v2, name)
	case v1 != "":
		dir = filepath.Join(v1, name)
	default:
		t.Skip("SKIP-REASON: no pids controller, v2 or v1, to make a pids cgroup with")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("SKIP-REASON: cannot make a pids cgroup: %v", err)
	}
	t.Cleanup(func() {
		killUser(stormUID)
		proctest.Eventually(t, proctest.Wait, func() error { return os.Remove(dir) })
	})
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(stormLimit)), 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("pids cgroup %s, pids.max %d", dir, stormLimit)
	return dir
}

// cgroupMounts are the cgroup2 mount and the v1 pids mount, "" for none.
func cgroupMounts(t *testing.T) (v2, v1 string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, _ := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 || fields[3] != "/" {
			continue
		}
		switch {
		case tail[0] == "cgroup2":
			v2 = fields[4]
		case tail[0] == "cgroup" && strings.Contains(","+tail[2]+",", ",pids,"):
			v1 = fields[4]
		}
	}
	return v2, v1
}

// hasField reports whether file holds word among its words.
func hasField(file, word string) bool {
	data, _ := os.ReadFile(file)
	for _, w := range strings.Fields(string(data)) {
		if w == word {
			return true
		}
	}
	return false
}

// userPids lists the processes whose real uid is uid.
func userPids(uid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 && f[0] == strconv.Itoa(uid) {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// killUser kills what a failed test left running as uid.
func killUser(uid int) {
	for _, pid := range userPids(uid) {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
}
