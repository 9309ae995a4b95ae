package local

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/executortest"
	"github.com/dsh-go/dsh/internal/proctest"
)

// leakMark is put in the environment of every command the tests run, so
// that any process left behind can be found, even one that escaped its
// group, and fail the run (proctest.Main).
var leakMark = proctest.Name + "=" + proctest.Value

func TestMain(m *testing.M) {
	sandbox.HelperMain() // the landlock helper of the sandbox tests
	if os.Getenv(helperEnv) != "" {
		runHelperProcess()
		return
	}
	if platformHelper() {
		return
	}
	os.Exit(proctest.Main(m))
}

// testConfig is a config with a short grace and small caps, marked.
func testConfig(t testing.TB) config.Local {
	return config.Local{
		Grace:    200 * time.Millisecond,
		SpillDir: t.TempDir(),
		Env:      config.Env{Set: proctest.Set()},
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

// runCmd resolves and runs command with an optional timeout.
func runCmd(t *testing.T, e *Executor, command string, timeoutMs float64) bash.Result {
	t.Helper()
	return executortest.RunCmd(t, e, command, timeoutMs)
}

func start(t *testing.T, e *Executor, command string) bash.Process {
	t.Helper()
	return executortest.Start(t, e, command)
}

func wait(t *testing.T, p bash.Process) {
	t.Helper()
	executortest.Wait(t, p)
}

func exitCode(r bash.Result) string { return executortest.ExitCode(r) }

// killOnCleanup makes sure a process the test deliberately lets escape is
// ended.
func killOnCleanup(t *testing.T, pidFile string) { executortest.KillOnCleanup(t, pidFile) }

func tempFile(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}

// TestContract runs the executor contract (docs/spec.md §1) that every
// executor shares against the local executor: with the containment auto
// picks here, and with containment: group, the one macOS uses, so that
// the code macOS runs is tested here too.
func TestContract(t *testing.T) {
	for _, mode := range []string{config.ContainAuto, config.ContainGroup} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			contract(t, mode)
		})
	}
}

func contract(t *testing.T, mode string) {
	executortest.Run(t, executortest.Harness{
		Name: Name,
		New: func(t *testing.T, l executortest.Limits) (bash.Executor, string) {
			cfg := testConfig(t)
			cfg.Containment = mode
			cfg.Cwd, cfg.Timeout, cfg.MaxTimeout = l.Cwd, l.Timeout, l.MaxTimeout
			cfg.MaxOutputBytes, cfg.KeepHeadBytes, cfg.MaxSpillBytes = l.MaxOutputBytes, l.KeepHeadBytes, l.MaxSpillBytes
			if l.Grace != 0 {
				cfg.Grace = l.Grace
			}
			if l.SpillDir != "" {
				cfg.SpillDir = l.SpillDir
			}
			return newExecutor(t, cfg), cfg.SpillDir
		},
		Dir: func(t *testing.T) string { return t.TempDir() },
		WorkdirError: func(dir, problem string) string {
			return fmt.Sprintf("%s: workdir %q %s", Name, dir, problem)
		},
	})
}
