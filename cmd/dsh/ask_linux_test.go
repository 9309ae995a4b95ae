package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
)

// openPTY opens a pseudo-terminal: the master end for the test, the
// terminal for dsh.
func openPTY(t *testing.T) (master, term *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// screen collects what dsh writes on the terminal.
type screen struct {
	mu   sync.Mutex
	text bytes.Buffer
	done chan struct{}
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.ReplaceAll(s.text.String(), "\r\n", "\n")
}

// plantDeadCgroup makes, beside the cgroups dsh's executors make, one
// named for a dsh that no longer runs (this process's pid with another
// start time): the next executor to start sweeps it and logs that it did.
// Where no cgroup can be made here, there is nothing to plant.
func plantDeadCgroup(t *testing.T) {
	v2, _ := cgroupMounts(t)
	data, err := os.ReadFile("/proc/self/cgroup")
	if v2 == "" || err != nil {
		return
	}
	rel := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	own := procfs.Owner()
	dead := procfs.Stamp{PidNS: own.PidNS, Pid: own.Pid, Start: own.Start + 1}
	dir := filepath.Join(v2, rel, "dsh-"+dead.String()+"-"+fmt.Sprintf("%08x", time.Now().UnixNano()&0xffffffff))
	if os.Mkdir(dir, 0o755) == nil {
		t.Cleanup(func() { _ = os.Remove(dir) })
	}
}

// TestRunAsksOnTheTerminal: dsh run with a terminal on stdin and stderr
// prints the question once, then `[y/N] `; y or yes (any case) runs the
// command, anything else or the end of input declines (docs/spec.md §9.6). Not parallel with the package's other tests: the
// dead cgroups it plants make any dsh starting meanwhile log a sweep.
func TestRunAsksOnTheTerminal(t *testing.T) {
	cfg := writeFile(t, "dsh.yaml", "permissions: {default: ask, claudeSettings: false}\n")
	for _, tc := range []struct {
		name, input string
		runs        bool
	}{
		{"y", "y\n", true},
		{"YES", "YES\n", true},
		{"n", "n\n", false},
		{"other", "sure\n", false},
		{"eof", "\x04", false}, // ^D at the start of a line: the end of input
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			plantDeadCgroup(t) // so a start-up sweep logs, as it may on any machine
			master, term := openPTY(t)
			ctx, cancel := context.WithTimeout(t.Context(), proctest.Scale(30*time.Second))
			defer cancel()
			cmd := exec.CommandContext(ctx, dshBin, "run", "--config", cfg, "--workdir", dir, "--", "touch asked")
			var stdout bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = term, &stdout, term
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			term.Close() // dsh holds it; the master reads EIO once dsh exits
			scr := &screen{done: make(chan struct{})}
			go func() {
				defer close(scr.done)
				buf := make([]byte, 4096)
				for {
					n, err := master.Read(buf)
					scr.mu.Lock()
					scr.text.Write(buf[:n])
					scr.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			question := "Run this command?\n\ntouch asked\n\nin " + dir + "\n\nno rule allows `touch asked`\n\n[y/N] "
			for !strings.HasSuffix(scr.String(), question) {
				select {
				case <-ctx.Done():
					t.Fatalf("no question on the terminal; it shows %q", scr.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			// Asked once: the prompt does not ask the question again.
			if n := strings.Count(strings.ToLower(scr.String()), "run this command?"); n != 1 {
				t.Errorf("the question shows %d times: %q", n, scr.String())
			}
			if _, err := master.WriteString(tc.input); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			<-scr.done
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(dir, "asked"))
			if ran := statErr == nil; ran != tc.runs {
				t.Errorf("ran %v, want %v; stdout %q, terminal %q", ran, tc.runs, stdout.String(), scr.String())
			}
			want, wantCode := "Error: the user declined to run this command", 1
			if tc.runs {
				want, wantCode = "(no output)", 0
			}
			if stdout.String() != want || code != wantCode {
				t.Errorf("stdout %q, exit %d; want %q, exit %d", stdout.String(), code, want, wantCode)
			}
		})
	}
}
