package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
)

// leakMark is put in the environment of every command the tests run, so
// that any process left behind can be found, even one that escaped its
// group, and fail the run.
var leakMark = fmt.Sprintf("DSH_TEST_LEAK_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runHelperProcess()
		return
	}
	code := m.Run()
	if code == 0 {
		if pids := markedProcesses(); len(pids) > 0 {
			fmt.Fprintf(os.Stderr, "processes left behind by the tests: %v\n", pids)
			code = 1
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// markedProcesses lists live (non-zombie) processes carrying leakMark.
func markedProcesses() []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte(leakMark)) {
			continue
		}
		if state, _, ok := procStat(pid); ok && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// testConfig is a config with a short grace and small caps, marked.
func testConfig(t *testing.T) config.Local {
	name, value, _ := strings.Cut(leakMark, "=")
	return config.Local{
		GraceMs:  200,
		SpillDir: t.TempDir(),
		Env:      config.Env{Set: map[string]string{name: value}},
	}
}

// newExecutor makes an executor that is closed, and checked for leftover
// processes, when the test ends.
func newExecutor(t *testing.T, cfg config.Local) *Executor {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// run resolves and runs command with an optional timeout.
func runCmd(t *testing.T, e *Executor, command string, timeoutMs float64) bash.Result {
	t.Helper()
	req := bash.Request{Command: command}
	if timeoutMs > 0 {
		req.TimeoutMs = &timeoutMs
	}
	spec, err := e.Resolve(req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res
}

func start(t *testing.T, e *Executor, command string) bash.Process {
	t.Helper()
	spec, err := e.Resolve(bash.Request{Command: command})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Start(spec)
	if err != nil {
		t.Fatalf("Start(%q): %v", command, err)
	}
	return p
}

func wait(t *testing.T, p bash.Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%q did not finish", p.Command())
	}
}

func exitCode(r bash.Result) string {
	if r.ExitCode == nil {
		return "signal " + r.Signal
	}
	return strconv.Itoa(*r.ExitCode)
}

// readPid reads a pid a command wrote to a file.
func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file %s: %q", path, data)
	}
	return pid
}

// gone reports whether pid no longer runs (a zombie counts as gone: it
// runs nothing, and here PID 1 may never reap it).
func gone(pid int) bool {
	state, _, ok := procStat(pid)
	return !ok || state == 'Z' || state == 'X'
}

// killOnCleanup makes sure a process the test deliberately lets escape is
// ended.
func killOnCleanup(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

func tempFile(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}
