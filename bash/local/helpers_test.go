package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
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
	if base := os.Getenv(pidnsHelperEnv); base != "" {
		runPidnsHelper(base)
		return
	}
	os.Exit(proctest.Main(m))
}

// testConfig is a config with a short grace and small caps, marked.
func testConfig(t *testing.T) config.Local {
	return config.Local{
		GraceMs:  200,
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

// killOnCleanup makes sure a process the test deliberately lets escape is
// ended.
func killOnCleanup(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		if pid, err := proctest.PidInFile(pidFile); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// readyFifo makes a FIFO a command writes to when it reaches a point
// (`echo > fifo`), and returns its path and a function that blocks until
// that write happened: an event, not a guessed sleep.
func readyFifo(t *testing.T) (string, func()) {
	t.Helper()
	path := tempFile(t, "ready")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		got := make(chan error, 1)
		go func() {
			f, err := os.Open(path) // blocks until the command opens it to write
			if err == nil {
				_, err = io.ReadAll(f)
				f.Close()
			}
			got <- err
		}()
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			// Unblock the reader so it does not outlive the test.
			if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			<-got
			t.Fatalf("the command never reached %s", path)
		}
	}
}

// gateFifo makes a FIFO a command waits on (`read x < fifo`), and returns
// its path and a function that lets the command go on.
func gateFifo(t *testing.T) (string, func()) {
	t.Helper()
	path := tempFile(t, "gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		if err := os.WriteFile(path, []byte("go\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readUntil reads p until the reads add up to want, failing at once on a
// read that does not extend toward it. The bytes a command wrote reach the
// collector through a goroutine, so a command's signal that it wrote them
// does not mean they can be read yet.
func readUntil(t *testing.T, p bash.Process, want string) bash.ReadResult {
	t.Helper()
	var got string
	var last bash.ReadResult
	proctest.Eventually(t, proctest.Wait, func() error {
		r := p.Read()
		got += r.Delta
		if r.Delta != "" {
			last = r
		}
		last.Lossy = last.Lossy || r.Lossy
		if !strings.HasPrefix(want, got) {
			t.Fatalf("reads gave %q, want %q", got, want)
		}
		if got != want {
			return fmt.Errorf("reads gave %q, want %q", got, want)
		}
		return nil
	})
	return last
}

func tempFile(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}
