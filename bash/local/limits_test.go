package local

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
)

// osThreads is how many OS threads this process has.
func osThreads(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestThreadsPerRunningCommand: a running command costs dsh no OS thread
// of its own (its exit is awaited on the poller, not in waitid), so a
// fork storm that shares dsh's process limit finds dsh with few threads
// to lose. 64 running commands once cost 64 threads blocked in waitid.
func TestThreadsPerRunningCommand(t *testing.T) {
	e := newExecutor(t, testConfig(t))
	const n = 64
	warm := start(t, e, "sleep 300") // the runtime's own threads start
	before := osThreads(t)
	procs := []bash.Process{warm}
	for range n {
		procs = append(procs, start(t, e, "sleep 300"))
	}
	during := osThreads(t)
	for _, p := range procs {
		p.Kill()
	}
	for _, p := range procs {
		wait(t, p)
	}
	t.Logf("threads: %d with 1 command running, %d with %d more", before, during, n)
	if grew := during - before; grew >= n/2 {
		t.Errorf("%d running commands cost %d OS threads", n, grew)
	}
}
