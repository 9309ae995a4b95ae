package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
)

// TestSigkilledDshIsSweptNextStart: dsh dies by SIGKILL while a background
// task runs. The task's shell dies with it (parent-death signal); what it
// started, in and out of its group, is killed by the next dsh's start-up
// sweep. In every containment: on Linux the sweep finds them by their
// DSH_RUN_ID whatever the mode (on macOS, which has no parent-death signal
// and does not show another process's environment, neither happens).
func TestSigkilledDshIsSweptNextStart(t *testing.T) {
	for _, mode := range []string{"cgroup", "marker", "group"} {
		t.Run(mode, func(t *testing.T) {
			// Unsandboxed: the test reads the pids its commands write in
			// its directory (TestSigkilledSandboxedDshIsSweptNextStart
			// is the sandbox's).
			config := writeFile(t, "dsh.yaml", "local: {containment: "+mode+", sandbox: {mode: off}}\n")
			if out := dsh(t, nil, "doctor", "--config", config); out.code != 0 {
				t.Skipf("containment %s unavailable: %s", mode, out.stderr)
			}
			dir := t.TempDir()
			cmd := exec.Command(dshBin, "mcp", "--config", config)
			transport := &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(t.Context(), transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			script := "echo $$ > " + dir + "/shell; sleep 300 & echo $! > " + dir + "/child; " +
				"setsid sleep 300 & echo $! > " + dir + "/escaped; wait"
			res := sdkCall(t, cs, "bash", map[string]any{"command": script, "description": "start", "run_in_background": true})
			if got := sdkText(t, res); !strings.HasPrefix(got, "started background task ") {
				t.Fatalf("start: %q", got)
			}
			pid := func(name string) int { return proctest.ReadPid(t, filepath.Join(dir, name)) }
			shell, child, escaped := pid("shell"), pid("child"), pid("escaped")

			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			proctest.AwaitGone(t, cmd.Process.Pid) // dsh
			_ = cs.Close()                         // reaps dsh
			// The task's shell dies by the parent-death signal.
			proctest.AwaitGone(t, shell)
			var before []int
			for _, p := range []int{child, escaped} {
				if !proctest.Gone(p) {
					before = append(before, p)
				}
			}
			t.Logf("left running after SIGKILL: %v", before)

			out := dsh(t, nil, "doctor", "--config", config)
			if out.code != 0 {
				t.Fatalf("doctor: %+v", out)
			}
			for _, p := range []int{child, escaped} {
				// A process of the killed dsh: the next start killed it.
				proctest.AwaitGone(t, p)
			}
			// The sweep logs what it killed; another test process starting
			// an executor at the same moment may sweep first, so this is
			// shown, not asserted.
			if len(before) > 0 && !strings.Contains(out.swept, "killed processes left by a dsh that no longer runs") {
				t.Logf("%v were swept by another process: %s", before, out.swept)
			}
		})
	}
}

// TestSigkilledSandboxedDshIsSweptNextStart: the same with a sandbox, on
// each backend: no process of the task outlives the next start. With
// bwrap the sandbox's pid 1 dies with dsh and its pid namespace with it;
// with landlock only the shell has the parent-death signal and the next
// start's sweep kills the rest. A sandboxed command's pids are its pid
// namespace's with bwrap, so the task's processes are found by their
// command line.
func TestSigkilledSandboxedDshIsSweptNextStart(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			config := sandboxConfig(t, "    mode: workspace-write\n    backend: "+backend+"\n")
			if out := dsh(t, nil, "doctor", "--config", config); out.code != 0 {
				t.Skipf("SKIP-REASON: no %s sandbox here: %s", backend, out.stderr)
			}
			cmd := exec.Command(dshBin, "mcp", "--config", config, "--workdir", t.TempDir())
			transport := &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(t.Context(), transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			// A duration of its own names this test's sleeps.
			arg := fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
			script := "sleep " + arg + " & setsid sleep " + arg + " & echo started; wait"
			res := sdkCall(t, cs, "bash", map[string]any{"command": script, "description": "start", "run_in_background": true})
			if got := sdkText(t, res); !strings.HasPrefix(got, "started background task ") {
				t.Fatalf("start: %q", got)
			}
			var sleeps []int
			proctest.Eventually(t, proctest.Wait, func() error {
				if sleeps = running("sleep", arg); len(sleeps) != 2 {
					return fmt.Errorf("%d of the task's 2 sleeps running", len(sleeps))
				}
				return nil
			})
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			proctest.AwaitGone(t, cmd.Process.Pid)
			_ = cs.Close()
			t.Logf("left running after SIGKILL: %v", running("sleep", arg))
			if out := dsh(t, nil, "doctor", "--config", config); out.code != 0 {
				t.Fatalf("doctor: %+v", out)
			}
			proctest.AwaitGone(t, sleeps...)
		})
	}
}

// running lists the live processes whose command line is argv.
func running(argv ...string) []int {
	want := []byte(strings.Join(argv, "\x00") + "\x00")
	var out []int
	pids, _ := procfs.Pids()
	for _, pid := range pids {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if st, ok := procfs.ReadStat(pid); err == nil && ok && !st.Dead() && bytes.Equal(cmdline, want) {
			out = append(out, pid)
		}
	}
	return out
}
