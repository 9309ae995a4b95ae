// Package proctest finds processes a test run left behind: those carrying
// the run's environment mark (put it into the executors' env with Set, so
// even a process that left its group is found) and live direct children
// of the test process. Zombies do not count: they are dead, and on some
// machines nothing reaps orphans.
//
// It also has the tests' waits for what processes outside the test do,
// which the test can only poll for: a file written (AwaitFile, ReadPid),
// processes gone (AwaitGone, Survivors), any condition (Eventually,
// Within), each bounded by a deadline. Scale stretches such bounds by the
// factor DSH_TEST_SLOWDOWN gives, for a loaded machine.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/internal/procfs"
)

// Name and Value are the mark: one environment variable unique to this run.
var (
	Name  = "DSH_TEST_LEAK_MARK"
	Value = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
)

// Set is the mark as an env.set map for config.Local.
func Set() map[string]string { return map[string]string{Name: Value} }

// Left lists live processes carrying the mark or whose parent is this
// process.
func Left() []int {
	var pids []int
	mark := []byte(Name + "=" + Value + "\x00")
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, ok := procfs.ReadStat(pid)
		if !ok || st.Dead() {
			continue
		}
		if st.PPid == self {
			pids = append(pids, pid)
			continue
		}
		if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(env, mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Main runs the tests, then fails the run if processes or goroutines are
// left: use it as TestMain's body, os.Exit(proctest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	// A process killed a moment ago may still be on its way out.
	deadline := time.Now().Add(Scale(2 * time.Second))
	pids := Left()
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		pids = Left()
	}
	if len(pids) > 0 {
		fmt.Fprintf(os.Stderr, "processes left behind by the tests: %v\n", pids)
		return 1
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
		return 1
	}
	return 0
}
