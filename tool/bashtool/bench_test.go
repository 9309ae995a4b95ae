package bashtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// The benchmarks of the bash tool / tasks issue. Run them with
//
//	go test -run '^$' -bench . -benchtime 1x -count 5 ./tool/bashtool/
//
// (each iteration is a whole scenario; -count gives the runs to take
// medians over).

// BenchmarkWaitLatency: a background command prints the time just before
// it exits; task_output with wait returns; the gap is the latency from the
// task's exit to the waiting call's return. It also reports the CPU time
// the process used while a call waited 1 s on a task that did not finish:
// a waiting call must park, not poll.
func BenchmarkWaitLatency(b *testing.B) {
	s := benchStack(b, tasks.Config{})
	sess := session.New("bench", "")
	defer sess.End()
	var gaps []time.Duration
	for b.Loop() {
		for range 20 {
			id := benchStart(b, s, sess, "sleep 0.05; date +%s%N")
			res := s.Execute(context.Background(), tool.Call{Name: "task_output", Session: sess,
				Args: json.RawMessage(fmt.Sprintf(`{"task_id": %q, "wait": true, "timeout_ms": 10000}`, id))})
			returned := time.Now()
			stamp, _, _ := strings.Cut(res.Text(), "\n")
			ns, err := strconv.ParseInt(stamp, 10, 64)
			if err != nil {
				b.Fatalf("output %q", res.Text())
			}
			gaps = append(gaps, returned.Sub(time.Unix(0, ns)))
		}
	}
	slices.Sort(gaps)
	b.ReportMetric(float64(gaps[len(gaps)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(gaps[len(gaps)*9/10].Microseconds())/1000, "p90-ms")

	id := benchStart(b, s, sess, "sleep 30")
	before := cpuTime()
	s.Execute(context.Background(), tool.Call{Name: "task_output", Session: sess,
		Args: json.RawMessage(fmt.Sprintf(`{"task_id": %q, "wait": true, "timeout_ms": 1000}`, id))})
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/1000, "cpu-ms-per-1s-wait")
}

// BenchmarkThousandTasks starts 1,000 background `sleep 30` tasks across 10
// sessions, then ends the sessions. It reports the start rate, the Go heap
// per task, and the time to end them all (every session ended at once).
func BenchmarkThousandTasks(b *testing.B) {
	const sessions, perSession = 10, 100
	s := benchStack(b, tasks.Config{MaxRunningPerSession: perSession})
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		owners := make([]*session.Session, sessions)
		for i := range owners {
			owners[i] = session.New(fmt.Sprintf("s%d", i), "")
		}
		begin := time.Now()
		var wg sync.WaitGroup
		for _, o := range owners {
			wg.Go(func() {
				for range perSession {
					benchStart(b, s, o, "sleep 30")
				}
			})
		}
		wg.Wait()
		started := time.Since(begin)
		runtime.GC()
		runtime.ReadMemStats(&after)

		begin = time.Now()
		for _, o := range owners {
			wg.Go(o.End)
		}
		wg.Wait()
		ended := time.Since(begin)

		n := float64(sessions * perSession)
		b.ReportMetric(n/started.Seconds(), "starts/s")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n/1024, "heap-KiB/task")
		b.ReportMetric(float64(ended.Milliseconds()), "end-all-ms")
	}
}

func benchStack(b *testing.B, tc tasks.Config) *tool.Registry {
	b.Helper()
	// The defaults, grace included: benchmarks measure what users get.
	return newStackWith(b, func(c *config.Local) { c.Grace = 0 }, tc).reg
}

func benchStart(b *testing.B, reg *tool.Registry, s *session.Session, command string) string {
	res := reg.Execute(context.Background(), tool.Call{Name: "bash", Session: s,
		Args: json.RawMessage(fmt.Sprintf(`{"command": %q, "description": "bench", "run_in_background": true}`, command))})
	id, ok := strings.CutPrefix(res.Text(), "started background task ")
	if !ok {
		b.Fatalf("start: %q", res.Text())
	}
	return id
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFinishedTasksMemory: 50 sessions each leave 256 finished
// background tasks unread (the retention cap), a third of which printed
// 100 KB (more than maxOutputBytes: a spill file), a third 20 KB and a
// third one line. It reports the Go heap in use and the resident memory
// they hold, once collected, and after the runtime gave back what it
// does not use (goal: at most 150 MiB for all of them).
func BenchmarkFinishedTasksMemory(b *testing.B) {
	const sessions, perSession, wave = 50, 256, 64
	commands := []string{"head -c 100000 /dev/zero | tr '\\0' x", "head -c 20000 /dev/zero | tr '\\0' y", "echo done"}
	for b.Loop() {
		s := newStackWith(b, func(c *config.Local) { c.Grace = 0 }, tasks.Config{})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rssBefore := selfRSS(b)
		owners := make([]*session.Session, sessions)
		work := make(chan *session.Session, sessions)
		for i := range owners {
			owners[i] = session.New(fmt.Sprintf("s%d", i), "")
			work <- owners[i]
		}
		close(work)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for o := range work {
					for n := 0; n < perSession; n += wave {
						var ids []string
						for i := n; i < min(n+wave, perSession); i++ {
							ids = append(ids, benchStart(b, s.reg, o, commands[i%len(commands)]))
						}
						for _, id := range ids {
							s.awaitFinish(b, id)
						}
					}
				}
			})
		}
		wg.Wait()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-MiB")
		b.ReportMetric(float64(selfRSS(b)-rssBefore)/1024, "rss-MiB")
		debug.FreeOSMemory() // what dsh serve does when its last session ends
		b.ReportMetric(float64(selfRSS(b)-rssBefore)/1024, "rss-freed-MiB")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(sessions*perSession)/1024, "heap-KiB/task")

		for _, o := range owners {
			wg.Go(o.End)
		}
		wg.Wait()
	}
}

// selfRSS is this process's resident set size in KiB.
func selfRSS(b *testing.B) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
