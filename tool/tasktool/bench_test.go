package tasktool_test

import (
	"slices"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
)

// BenchmarkTaskOutputWaitLatency measures, through the registry, the time
// from a task's producer sending its outcome to a parked task_output
// {wait: true} call returning its text.
func BenchmarkTaskOutputWaitLatency(b *testing.B) {
	r := newRig(b, config.Tasks{})
	a := session.New("a", "")
	defer a.End()
	lat := make([]time.Duration, 0, b.N)
	returned := make(chan time.Time)
	for b.Loop() {
		p := &producer{stream: true}
		snap, err := r.svc.Start(tasks.Spec{Kind: "bench", Label: "x", Owner: a, Run: p.run})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			res := r.call(a, "task_output", `{"task_id":"`+snap.ID+`","wait":true}`)
			if res.IsError {
				b.Error(res.Text())
			}
			returned <- time.Now()
		}()
		time.Sleep(time.Millisecond) // let the call park in its wait (set-up, not timed)
		t0 := time.Now()
		p.finish(tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0"})
		lat = append(lat, (<-returned).Sub(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "µs-median")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "µs-p99")
}
