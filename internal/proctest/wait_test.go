package proctest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// failer records a failure instead of ending the test, so that the
// helpers' failures can be checked.
type failer struct {
	testing.TB
	failed string
}

func (f *failer) Helper() {}

func (f *failer) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f) // a Fatalf does not return
}

// fails runs fn with a failer and returns what it failed with, "" if it
// did not.
func fails(t *testing.T, fn func(tb testing.TB)) (msg string) {
	f := &failer{TB: t}
	defer func() {
		if r := recover(); r != nil && r != any(f) {
			panic(r)
		}
		msg = f.failed
	}()
	fn(f)
	return ""
}

func TestWithinAndEventually(t *testing.T) {
	n := 0
	if !Within(time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Within stopped after %d calls", n)
	}
	if Within(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("Within reported a condition that never held")
	}
	if msg := fails(t, func(tb testing.TB) {
		Eventually(tb, 30*time.Millisecond, func() error { return errors.New("never") })
	}); msg == "" {
		t.Fatal("Eventually did not fail on a condition that never held")
	}
}

func TestAwaitFileAndReadPid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pid")
	cmd := exec.Command("sh", "-c", "sleep 0.05; echo 4242 > "+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if got := ReadPid(t, path); got != 4242 {
		t.Fatalf("ReadPid = %d", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg := fails(t, func(tb testing.TB) { ReadPid(tb, bad) }); !strings.Contains(msg, "not a pid") {
		t.Fatalf("ReadPid of pid 1 failed with %q", msg)
	}
	if _, err := PidInFile(filepath.Join(dir, "none")); err == nil {
		t.Fatal("PidInFile of a missing file")
	}
}

func TestAwaitGone(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if left := Survivors(30*time.Millisecond, pid); len(left) != 1 || left[0] != pid {
		t.Fatalf("Survivors = %v, want [%d]", left, pid)
	}
	_ = cmd.Process.Kill()
	AwaitGone(t, pid) // a zombie is gone
	_ = cmd.Wait()
}
