package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
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
	res, err := bash.Run(t.Context(), e, spec)
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
					proctest.AwaitGone(t, proctest.ReadPid(t, p))
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
			proctest.AwaitFile(t, f+"2")
			p.Kill()
			wait(t, p)
			check(f) // a killed background process
		})
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
			keptPids := []int{proctest.ReadPid(t, kept), proctest.ReadPid(t, kept+"2")}
			for _, pid := range keptPids {
				killOnCleanup(t, kept)
				if proctest.Gone(pid) {
					t.Fatalf("pid %d was not kept", pid)
				}
			}

			f := tempFile(t, "timeout")
			if res := runCmd(t, e, "setsid sleep 300 & echo $! > "+f+"; sleep 60", 2000); !res.TimedOut {
				t.Fatalf("timeout: %+v", res)
			}
			proctest.AwaitGone(t, proctest.ReadPid(t, f))
			f = tempFile(t, "bg")
			p := start(t, e, "setsid sleep 300 & echo $! > "+f)
			wait(t, p)
			proctest.AwaitGone(t, proctest.ReadPid(t, f))
			// A yielded command is a background one from then on: what
			// it leaves ends with it (docs/spec.md §12).
			f = tempFile(t, "yielded")
			spec, _ := e.Resolve(bash.Request{Command: "setsid sleep 300 >/dev/null 2>&1 & echo $! > " + f + "; sleep 0.3"})
			yield := make(chan struct{})
			close(yield)
			if _, p, err := e.RunOrYield(context.Background(), spec, yield); err != nil || p == nil {
				t.Fatalf("RunOrYield: %v, %v", p, err)
			} else {
				wait(t, p)
			}
			proctest.AwaitGone(t, proctest.ReadPid(t, f))

			for _, pid := range keptPids {
				if proctest.Gone(pid) {
					t.Fatalf("kept pid %d ended before Close", pid)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			for _, pid := range keptPids {
				if !proctest.Gone(pid) {
					t.Errorf("kept pid %d outlived Close", pid)
				}
			}
		})
	}
}

// TestForkStormIsKilled: a TERM-ignoring escapee that forks without pause
// while the kill runs leaves nothing carrying the command's run id.
func TestForkStormIsKilled(t *testing.T) {
	t.Parallel()
	// Group mode too: the storm's bash is the shell's child, and its
	// sleeps are the bash's (the parent chain).
	for _, mode := range append(modes(t), config.ContainGroup) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			cfg.Containment = mode
			e := newExecutor(t, cfg)
			f := tempFile(t, "id")
			p := start(t, e, `echo $`+RunIDEnv+` > `+f+`; setsid bash -c 'trap "" TERM; while :; do sleep 300 & done' & sleep 300`)
			id := proctest.AwaitFile(t, f)
			proctest.Eventually(t, proctest.Wait, func() error {
				if n := len(marked(id)); n < 5 {
					return fmt.Errorf("%d processes carry the run id: the storm is not going yet", n)
				}
				return nil
			})
			p.Kill()
			wait(t, p)
			var left []int
			if !proctest.Within(proctest.Wait, func() bool { left = marked(id); return len(left) == 0 }) {
				for _, pid := range left {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Fatalf("%d processes of the command outlived its kill: %v", len(left), left)
			}
		})
	}
}

// marked lists the live processes carrying run id id.
func marked(id string) []int {
	var pids []int
	all, _ := procfs.Pids()
	for _, pid := range all {
		if v, ok := procfs.Getenv(pid, RunIDEnv); ok && v == id && !proctest.Gone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
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
	if !pollExit([]int{cmd.Process.Pid}, time.Now().Add(proctest.Scale(5*time.Second))) {
		t.Fatal("pollExit missed the exit (a zombie has exited)")
	}
}
