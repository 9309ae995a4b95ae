package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/otlp/otlptest"
	"github.com/dsh-go/dsh/internal/telemetry"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// BenchmarkCall is what telemetry adds to one bash call, sending to a
// loopback receiver: its span started and ended, and the observer's
// attributes and log record (the batches' export runs beside, as in dsh).
func BenchmarkCall(b *testing.B) {
	r := otlptest.New(b)
	tel := telemetry.New(config.Otel{Endpoint: r.URL, Metrics: new(false)}, telemetry.Options{Getenv: env(nil)})
	defer tel.Shutdown()
	tracer := tel.Tracer()
	code := 0
	call := tool.Call{Name: "bash", Args: []byte(`{"command":"make test","description":"run the tests"}`), Started: time.Now()}
	res := tool.Result{Structured: bashtool.Structured{ExitCode: &code, Stdout: &bashtool.StreamFacts{TotalBytes: 100}}, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}}
	b.ReportAllocs()
	for b.Loop() {
		ctx, span := tracer.Start(context.Background(), "execute_tool bash")
		tel.Call(ctx, call, res)
		span.End()
	}
}
