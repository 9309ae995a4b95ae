package metrics_test

import (
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/metrics"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// BenchmarkCall is the metrics' cost per call: counting a `bash true`
// call (its share of the 3% budget; see BenchmarkOpsOverhead in cmd/dsh).
//
//	go test -run '^$' -bench . -count 6 ./internal/metrics/
func BenchmarkCall(b *testing.B) {
	m := metrics.New([]string{"bash", "task_output", "task_list", "task_kill"}, metrics.Sources{})
	code := 0
	call := tool.Call{Name: "bash", Started: time.Now()}
	res := tool.Result{Executed: true, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow},
		Structured: bashtool.Structured{ExitCode: &code, Stdout: &bashtool.StreamFacts{}, Stderr: &bashtool.StreamFacts{}}}
	for b.Loop() {
		m.Call(b.Context(), call, res)
	}
}
