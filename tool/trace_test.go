package tool

import (
	"context"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpans: with a tracer each call is a span named for a listed tool,
// and only for one; a step's span is its child; a call suspended on a
// question says so; without a tracer a step makes no span.
func TestSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	r := NewRegistry(WithTracer(tp.Tracer("test")))
	if err := r.Register(echoTool("echo", &jsonschema.Schema{Type: "object"})); err != nil {
		t.Fatal(err)
	}
	suspend := false
	r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		_, span := StartSpan(ctx, "dsh.step", attribute.Bool("x", true))
		span.End()
		if suspend {
			return Decision{Verdict: Suspend, Question: &Question{Message: "ok?"}}
		}
		return next(ctx, call)
	})
	r.Execute(context.Background(), Call{Name: "echo", Args: []byte(`{"text":"a"}`)})
	r.Execute(context.Background(), Call{Name: "made-up", ID: "c1"})
	suspend = true
	r.Execute(context.Background(), Call{Name: "echo", Args: []byte(`{"text":"a"}`)})
	ended := rec.Ended()
	var names []string
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		names = append(names, s.Name())
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	if len(byName["execute_tool echo"]) != 2 || len(byName["execute_tool"]) != 1 || len(byName["dsh.step"]) != 2 {
		t.Fatalf("spans %v", names)
	}
	calls := byName["execute_tool echo"]
	for i, step := range byName["dsh.step"] {
		if step.Parent().SpanID() != calls[i].SpanContext().SpanID() {
			t.Errorf("step %d is not its call's child", i)
		}
	}
	attrs := func(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			m[kv.Key] = kv.Value
		}
		return m
	}
	if a := attrs(byName["execute_tool"][0]); a[AttrToolName].AsString() != "made-up" || a[AttrCallID].AsString() != "c1" {
		t.Errorf("unknown tool's span: %v", a)
	}
	if a := attrs(calls[1]); !a[AttrSuspended].AsBool() {
		t.Errorf("suspended call's span: %v", a)
	}
	if a := attrs(calls[0]); a[AttrSuspended].AsBool() || a[AttrOperation].AsString() != "execute_tool" {
		t.Errorf("call's span: %v", a)
	}
	_, span := StartSpan(context.Background(), "orphan")
	if span.IsRecording() {
		t.Error("a step without a call's span recorded one")
	}
	_ = tp.Shutdown(context.Background())
}
