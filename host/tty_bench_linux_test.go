package host_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkTaskInput is a task_input round trip (docs/spec.md §4.2a, goal
// ≤ 2 ms median): "x" and Enter typed into `cat` under a terminal, through
// the registry of the default stack, returning once the output shows it
// (waitFor; the line discipline's echo comes first).
//
//	go test -run '^$' -bench TaskInput -count 6 ./host/
func BenchmarkTaskInput(b *testing.B) {
	r := newTTYRig(b, "")
	id := r.start("cat")
	for b.Loop() {
		res := r.typed(id, "x", []string{"Enter"}, "x")
		if res.IsError || !strings.Contains(res.Text(), "x") {
			b.Fatalf("round trip: %s", res.Text())
		}
	}
}

// BenchmarkTTYOutputRSS is what a tty task printing 100 MB costs dsh's
// memory (goal ≤ 8 MiB above the baseline): the resident size's high-water
// mark after the task, against the same just before it. The collector
// keeps a bounded tail and the screen a bounded emulator; the rest goes to
// the spill file.
//
//	go test -run '^$' -bench TTYOutputRSS -benchtime 1x -count 5 ./host/
func BenchmarkTTYOutputRSS(b *testing.B) {
	r := newTTYRig(b, "")
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		resetHWM(b)
		before := rss(b, "VmRSS")
		id := r.start("head -c 100000000 /dev/zero | tr '\\0' 'x' | fold -w 100; echo done")
		res := r.call("task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": (5 * time.Minute).Milliseconds()})
		if !strings.HasSuffix(res.Text(), "[status: completed, exit code: 0]") {
			b.Fatalf("task: %s", res.Text()[max(0, len(res.Text())-300):])
		}
		b.ReportMetric(float64(rss(b, "VmHWM")-before)/(1<<20), "MiB-above-baseline")
	}
}

// rss reads a size in kB from /proc/self/status, in bytes.
func rss(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetHWM resets the resident high-water mark (clear_refs 5).
func resetHWM(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("SKIP-REASON: cannot reset the high-water mark: %v", err)
	}
}
