package proctest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/procfs"
)

// Wait bounds the waits of AwaitFile, ReadPid and AwaitGone: generous, for
// a loaded machine running the tests under -race, and stretched by
// Slowdown for a machine more loaded still. It bounds a wait for an event;
// it is not a timing assertion.
var Wait = Scale(10 * time.Second)

// pollEvery is how often the waits look again. A process outside the test
// (a command writing a file, a process exiting) cannot signal the test
// otherwise.
const pollEvery = 10 * time.Millisecond

// Within polls cond until it holds or d has passed, and reports whether it
// held. It is for a goroutine that may not fail the test itself.
func Within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// Eventually polls cond until it returns nil, and fails the test with the
// last error cond returned if it has not within d.
func Eventually(t testing.TB, d time.Duration, cond func() error) {
	t.Helper()
	var err error
	if !Within(d, func() bool { err = cond(); return err == nil }) {
		t.Fatalf("not within %v: %v", d, err)
	}
}

// AwaitFile waits until path holds a whole line, as a command writes one
// with echo, and returns the file's content without the surrounding white
// space.
func AwaitFile(t testing.TB, path string) string {
	t.Helper()
	var content string
	Eventually(t, Wait, func() error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if content = string(data); !strings.HasSuffix(content, "\n") {
			return fmt.Errorf("%s holds %q, no whole line yet", path, content)
		}
		return nil
	})
	return strings.TrimSpace(content)
}

// ReadPid waits until a command wrote a pid to path (AwaitFile) and returns
// it; anything but a pid above 1 there fails the test.
func ReadPid(t testing.TB, path string) int {
	t.Helper()
	s := AwaitFile(t, path)
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %s holds %q, not a pid", path, s)
	}
	return pid
}

// PidInFile reads the pid a command wrote to path, without waiting: for a
// cleanup that kills what a failed test may have left.
func PidInFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("pid file %s holds %q, not a pid", path, data)
	}
	return pid, nil
}

// Gone reports whether pid no longer runs. A zombie counts as gone: it
// runs nothing, and one orphaned to an init that reaps lazily (or never,
// in some containers) is dead all the same.
func Gone(pid int) bool {
	st, ok := procfs.ReadStat(pid)
	return !ok || st.Dead()
}

// Survivors waits until every pid is gone or d has passed, and returns
// those that still run.
func Survivors(d time.Duration, pids ...int) []int {
	var left []int
	Within(d, func() bool {
		left = left[:0]
		for _, pid := range pids {
			if !Gone(pid) {
				left = append(left, pid)
			}
		}
		return len(left) == 0
	})
	return left
}

// AwaitGone waits until every pid is gone. If some still run after Wait,
// it fails the test with them, and kills them so that the failed test
// leaves nothing running.
func AwaitGone(t testing.TB, pids ...int) {
	t.Helper()
	left := Survivors(Wait, pids...)
	if len(left) == 0 {
		return
	}
	for _, pid := range left {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Fatalf("processes still running after %v: %v", Wait, left)
}
