package executortest

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// HeapSampler records the peak of the heap (objects in use, garbage not
// yet collected included) and of the live heap (as of the last GC) above
// their values at start, sampled every millisecond.
type HeapSampler struct {
	stop       chan struct{}
	done       chan struct{}
	start      uint64
	peak, live uint64
}

// StartHeapSampler collects garbage, then starts sampling.
func StartHeapSampler() *HeapSampler {
	runtime.GC()
	s := &HeapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	s.start = samples[0].Value.Uint64()
	startLive := samples[1].Value.Uint64()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			if v := samples[0].Value.Uint64(); v > s.start {
				s.peak = max(s.peak, v-s.start)
			}
			if v := samples[1].Value.Uint64(); v > startLive {
				s.live = max(s.live, v-startLive)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling and returns the peaks, in bytes.
func (s *HeapSampler) Stop() (peak, live uint64) {
	close(s.stop)
	<-s.done
	return s.peak, s.live
}

// Report stops the sampling and reports the peaks as b's metrics, in MiB:
// peak-heap-MiB and peak-live-MiB.
func (s *HeapSampler) Report(b *testing.B) {
	s.Stop()
	b.ReportMetric(float64(s.peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(s.live)/(1<<20), "peak-live-MiB")
}
