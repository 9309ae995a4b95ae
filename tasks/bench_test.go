package tasks

import (
	"context"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWaitLatency measures the time from a producer sending its outcome
// to Wait returning, for a wait that was parked before the finish. It
// reports the median and the 99th percentile.
func BenchmarkWaitLatency(b *testing.B) {
	svc := New(Config{})
	defer svc.Close()
	defer svc.AttachTools()()
	lat := make([]time.Duration, 0, b.N)
	returned := make(chan time.Time)
	for b.Loop() {
		f := newFake(false)
		snap, err := svc.Start(Spec{Kind: "bench", Label: "x", Run: f.run})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			if _, err := svc.Wait(context.Background(), nil, snap.ID, time.Minute); err != nil {
				b.Error(err)
			}
			returned <- time.Now()
		}()
		parked(svc, snap.ID)
		t0 := time.Now()
		f.finish(Outcome{Status: Completed})
		lat = append(lat, (<-returned).Sub(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "µs-median")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "µs-p99")
}

// parked returns once a wait on id is registered and its goroutine has had
// the chance to block (benchmark set-up only; not timed).
func parked(svc *Service, id string) {
	for {
		svc.mu.Lock()
		n := svc.tasks[id].waiters
		svc.mu.Unlock()
		if n > 0 {
			break
		}
		runtime.Gosched()
	}
	time.Sleep(100 * time.Microsecond)
}

// BenchmarkWaitIdleCPU measures the CPU time (user + system) the whole
// process uses while one Wait sits out a 1 s timeout on a task that does not
// finish, next to a plain 1 s sleep as the baseline of an idle process: a
// parked waiter costs what the sleep costs, a polling one would show.
func BenchmarkWaitIdleCPU(b *testing.B) {
	svc := New(Config{})
	defer svc.Close()
	defer svc.AttachTools()()
	f := newFake(false)
	snap, err := svc.Start(Spec{Kind: "bench", Label: "x", Run: f.run})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		idle func()
	}{
		{"wait", func() {
			if _, err := svc.Wait(context.Background(), nil, snap.ID, time.Second); err != nil {
				b.Fatal(err)
			}
		}},
		{"sleep-baseline", func() { time.Sleep(time.Second) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				before := cpuTime(b)
				bc.idle()
				cpu += cpuTime(b) - before
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/1s")
		})
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
