// Package executortest is the executor contract of docs/spec.md §1 as
// tests, shared by every executor: the local one runs them against real
// bash processes, the SSH one against a real OpenSSH server. An executor's
// test package hands Run a Harness that makes its executors; the tests
// then speak only the seam (package bash).
//
// What the contract leaves to each executor stays in that executor's
// tests: how Resolve defaults the working directory, the environment
// (scrubbed here, as sshd gives it there), construction errors, start-up
// sweeps.
//
// Every wait is on an event (a FIFO a command writes, a process's done
// channel) or bounded by proctest.Wait; timing bounds take the harness's
// Slack on top of the local executor's.
package executortest

import (
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
	"github.com/dsh-go/dsh/internal/proctest"
)

// Limits are the executor settings the contract tests vary, with the
// config's meaning (0 or nil: the test's default).
type Limits struct {
	Cwd            string
	Timeout        time.Duration
	MaxTimeout     time.Duration
	MaxOutputBytes int64
	KeepHeadBytes  *int64
	MaxSpillBytes  int64
	// Grace is 200 ms unless set.
	Grace time.Duration
	// SpillDir is the base of the spill files; the harness sets it to a
	// directory of the test's when empty, and New reports what it used.
	SpillDir string
}

// Harness is what the tests need of one executor.
type Harness struct {
	// Name prefixes the executor's errors ("bash-local").
	Name string
	// New makes an executor with l, closed (and checked for leftover
	// processes) when t ends, and returns it with its spill base.
	New func(t *testing.T, l Limits) (e bash.Executor, spillDir string)
	// Dir is a new directory that the test and the executor's commands
	// can both use for files and FIFOs.
	Dir func(t *testing.T) string
	// WorkdirError is the error of a command whose workdir dir has
	// problem: "does not exist" or "is not a directory".
	WorkdirError func(dir, problem string) string
	// Slack is how much longer than the local executor this one may take
	// where a test bounds a duration (a network's round trips).
	Slack time.Duration
}

// Run runs every contract test against h, in parallel.
func Run(t *testing.T, h Harness) {
	for _, tc := range contract {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, h)
		})
	}
}

// newExecutor is h.New with the default grace.
func (h Harness) newExecutor(t *testing.T, l Limits) bash.Executor {
	t.Helper()
	if l.Grace == 0 {
		l.Grace = 200 * time.Millisecond
	}
	e, _ := h.New(t, l)
	return e
}

// file is a path in a new shared directory.
func (h Harness) file(t *testing.T, name string) string {
	return filepath.Join(h.Dir(t), name)
}

// RunCmd resolves and runs command with an optional timeout, failing the
// test on an error.
func RunCmd(t *testing.T, e bash.Executor, command string, timeoutMs float64) bash.Result {
	t.Helper()
	req := bash.Request{Command: command}
	if timeoutMs > 0 {
		req.TimeoutMs = &timeoutMs
	}
	spec, err := e.Resolve(req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bash.Run(t.Context(), e, spec)
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res
}

// Start resolves and starts command.
func Start(t *testing.T, e bash.Executor, command string) bash.Process {
	t.Helper()
	spec, err := e.Resolve(bash.Request{Command: command})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start(%q): %v", command, err)
	}
	return p
}

// Wait waits until p is done, at most proctest.Wait.
func Wait(t *testing.T, p bash.Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(proctest.Wait):
		t.Fatalf("%q did not finish", p.Command())
	}
}

// ExitCode is how r ended: its exit code, or "signal SIG…".
func ExitCode(r bash.Result) string {
	if r.ExitCode == nil {
		return "signal " + r.Signal
	}
	return strconv.Itoa(*r.ExitCode)
}

// KillOnCleanup makes sure a process the test deliberately lets escape,
// whose pid a command writes to pidFile, is ended.
func KillOnCleanup(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		if pid, err := proctest.PidInFile(pidFile); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// ReadyFifo makes a FIFO in dir that a command writes to when it reaches
// a point (`echo > fifo`), and returns its path and a function that blocks
// until that write happened: an event, not a guessed sleep.
func ReadyFifo(t *testing.T, dir string) (string, func()) {
	t.Helper()
	path := fifo(t, dir, "ready")
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
		case <-time.After(proctest.Wait):
			// Unblock the reader so it does not outlive the test.
			if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			<-got
			t.Fatalf("the command never reached %s", path)
		}
	}
}

// GateFifo makes a FIFO in dir that a command waits on (`read x < fifo`),
// and returns its path and a function that lets the command go on.
func GateFifo(t *testing.T, dir string) (string, func()) {
	t.Helper()
	path := fifo(t, dir, "gate")
	return path, func() {
		t.Helper()
		if err := os.WriteFile(path, []byte("go\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// fifo makes a FIFO named name in dir that another user may open too
// (a remote command may run as another account).
func fifo(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// ReadUntil reads p until the reads add up to want, failing at once on a
// read that does not extend toward it. The bytes a command wrote reach the
// collector through a goroutine, so a command's signal that it wrote them
// does not mean they can be read yet.
func ReadUntil(t *testing.T, p bash.Process, want string) bash.ReadResult {
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

// SeqLines is what `seq from to` prints.
func SeqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}
