package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/executortest"
)

// The benchmarks of the executor issue. Run them with
//
//	go test -run '^$' -bench . -count 6 ./bash/local/
//
// and compare with benchstat; heap figures are reported as extra metrics
// (MiB above the heap at the start).

// BenchmarkSpawnTrue compares a Run of `true` with the bare spawn it stands
// on. Goal: within 10%. Each iteration does one of each, alternating, so
// the machine's drift (large on a shared VM) hits both alike; ns/op is the
// pair, and the metrics split it.
func BenchmarkSpawnTrue(b *testing.B) {
	for _, mode := range []string{config.ContainCgroup, config.ContainMarker, config.ContainGroup} {
		b.Run(mode, func(b *testing.B) {
			c, err := newContainment(mode)
			if err != nil {
				b.Skipf("%s: %v", mode, err)
			}
			c.close()
			benchSpawnTrue(b, benchExecutor(b, config.Local{Containment: mode}))
		})
	}
}

func benchSpawnTrue(b *testing.B, e *Executor) {
	var bare, run time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		spec, err := e.Resolve(bash.Request{Command: "true"})
		if err != nil {
			b.Fatal(err)
		}
		if r, err := bash.Run(context.Background(), e, spec); err != nil || *r.ExitCode != 0 {
			b.Fatal(r, err)
		}
		bare, run = bare+t1.Sub(t0), run+time.Since(t1)
	}
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "bare-ns/op")
	b.ReportMetric(float64(run.Nanoseconds())/float64(b.N), "Run-ns/op")
	b.ReportMetric(float64(run)/float64(bare), "Run/bare")
}

// BenchmarkThroughput pushes n bytes through Run with the default caps,
// against the floor of the same bytes through a pipe into cat. Goal: wall
// time within 1.5× of the floor; the heap never more than 16 MiB above its
// start, whatever n.
func BenchmarkThroughput(b *testing.B) {
	for _, n := range []int64{1 << 20, 100 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("floor/%dMiB", n>>20), func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				cmd := exec.Command("bash", "-c", fmt.Sprintf("head -c %d /dev/zero | cat > /dev/null", n))
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("Run/%dMiB", n>>20), func(b *testing.B) {
			e := benchExecutor(b, config.Local{})
			spec, _ := e.Resolve(bash.Request{Command: fmt.Sprintf("head -c %d /dev/zero", n)})
			heap := executortest.StartHeapSampler()
			for b.Loop() {
				r, err := bash.Run(context.Background(), e, spec)
				if err != nil || r.Stdout.TotalBytes != n {
					b.Fatal(r, err)
				}
				b.StopTimer()
				_ = os.Remove(r.Stdout.SpillPath)
				b.StartTimer()
			}
			b.SetBytes(n)
			heap.Report(b)
		})
	}
}

// BenchmarkKeepHead1GiB measures what keeping a head costs (docs/spec.md
// §3.4a): 1 GiB through Run with the default keepHeadBytes against
// keepHeadBytes: 0 (a tail only, the behaviour before the head). Goal:
// throughput within 5% and the same heap bound. Each iteration runs both,
// in alternating order, so a shared machine's drift hits both alike; the
// metrics are each mode's time per run, their ratio and each mode's peak
// heap above its start.
func BenchmarkKeepHead1GiB(b *testing.B) {
	const n = 1 << 30
	zero := int64(0)
	modes := []*Executor{
		benchExecutor(b, config.Local{KeepHeadBytes: &zero}),
		benchExecutor(b, config.Local{}),
	}
	var took [2]time.Duration
	var peak [2]uint64
	i := 0
	for b.Loop() {
		for k := range 2 {
			m := (i + k) % 2
			d, p := runOnce(b, modes[m], n)
			took[m] += d
			peak[m] = max(peak[m], p)
		}
		i++
	}
	b.SetBytes(2 * n)
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N), "tail-ns/op")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N), "head-ns/op")
	b.ReportMetric(float64(took[1])/float64(took[0]), "head/tail")
	b.ReportMetric(float64(peak[0])/(1<<20), "tail-peak-heap-MiB")
	b.ReportMetric(float64(peak[1])/(1<<20), "head-peak-heap-MiB")
}

// runOnce runs a command writing n zero bytes on e and returns the time
// Run took and the heap's peak above its start meanwhile.
func runOnce(b *testing.B, e *Executor, n int64) (time.Duration, uint64) {
	spec, err := e.Resolve(bash.Request{Command: fmt.Sprintf("head -c %d /dev/zero", n)})
	if err != nil {
		b.Fatal(err)
	}
	heap := executortest.StartHeapSampler()
	t0 := time.Now()
	r, err := bash.Run(context.Background(), e, spec)
	d := time.Since(t0)
	peak, _ := heap.Stop()
	if err != nil || r.Stdout.TotalBytes != n || !r.Stdout.Truncated {
		b.Fatal(r, err)
	}
	b.StopTimer()
	_ = os.Remove(r.Stdout.SpillPath)
	b.StartTimer()
	return d, peak
}

// BenchmarkBackground200 starts 200 background processes that each write
// 10 MiB, reads every one to the end while they run, and reports the heap
// growth. Goal: below 2 × 200 × maxOutputBytes + 16 MiB (41.6 MiB with the
// default 64 000).
func BenchmarkBackground200(b *testing.B) {
	const procs, size = 200, 10 << 20
	e := benchExecutor(b, config.Local{})
	spec, _ := e.Resolve(bash.Request{Command: fmt.Sprintf("head -c %d /dev/zero", size)})
	heap := executortest.StartHeapSampler()
	for b.Loop() {
		var wg sync.WaitGroup
		for range procs {
			p, err := e.Start(context.Background(), spec)
			if err != nil {
				b.Fatal(err)
			}
			wg.Go(func() {
				tick := time.NewTicker(10 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-p.Done():
						r := p.Read()
						_ = os.Remove(r.StdoutSpill)
						return
					case <-tick.C:
						p.Read()
					}
				}
			})
		}
		wg.Wait()
	}
	heap.Report(b)
}

func benchExecutor(b *testing.B, cfg config.Local) *Executor {
	b.Helper()
	cfg.SpillDir = b.TempDir()
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	return e
}
