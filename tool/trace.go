package tool

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// WithTracer makes every call a span of t, named as OpenTelemetry's GenAI
// conventions name a tool's execution ("execute_tool bash"), from the
// call's arrival to its result. The steps and the tool run under it, so
// their spans are its children; the observers see it on their context
// (trace.SpanFromContext) and add what the result says before it ends.
// Without a tracer a call makes no span.
func WithTracer(t trace.Tracer) Option {
	return func(r *Registry) { r.tracer = t }
}

// The attributes of a call's span that the registry sets (GenAI semantic
// conventions).
const (
	AttrOperation = "gen_ai.operation.name"
	AttrToolName  = "gen_ai.tool.name"
	AttrToolType  = "gen_ai.tool.type"
	AttrCallID    = "gen_ai.tool.call.id"
	// AttrSuspended marks the span of a call suspended on a question: it
	// ends there, and the call's repetition is a span of its own.
	AttrSuspended = "dsh.suspended"
)

// OperationExecuteTool is the GenAI operation of a tool call.
const OperationExecuteTool = "execute_tool"

// startSpan starts call's span when the registry has a tracer; end ends
// it. A name the registry does not list is an attribute, never the span's
// name, whose values stay few.
func (r *Registry) startSpan(ctx context.Context, call Call) (_ context.Context, end func(suspended bool)) {
	if r.tracer == nil {
		return ctx, func(bool) {}
	}
	name := OperationExecuteTool
	if _, known := r.Lookup(call.Name); known {
		name += " " + call.Name
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, OperationExecuteTool),
		attribute.String(AttrToolName, call.Name),
		attribute.String(AttrToolType, "function"),
	}
	if call.ID != "" {
		attrs = append(attrs, attribute.String(AttrCallID, call.ID))
	}
	ctx, span := r.tracer.Start(ctx, name, trace.WithTimestamp(call.Started), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, func(suspended bool) {
		if suspended {
			span.SetAttributes(attribute.Bool(AttrSuspended, true))
		}
		span.End()
	}
}

// Scope is the instrumentation scope of dsh's spans.
const Scope = "github.com/dsh-go/dsh"

// StartSpan starts the span of a step of a call (the policy's check, a
// question to the user, a hook) as a child of the call's span on ctx.
// Without a recording span there, it makes nothing and returns a span
// whose methods do nothing.
func StartSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return parent.TracerProvider().Tracer(Scope).Start(ctx, name, trace.WithAttributes(attrs...))
}

// SpanAsk is the span of a question to the user (the policy's, a
// network access's), AttrAskAnswer how it ended: accepted, declined,
// dismissed (timed out or cancelled), unavailable (nobody could be
// asked), suspended (asked between requests), aborted (the call was),
// failed.
const (
	SpanAsk       = "dsh.ask"
	AttrAskAnswer = "dsh.ask.answer"
)

// AnswerName is AttrAskAnswer's value for an asker's answer and error.
func AnswerName(a Answer, err error) string {
	switch {
	case errors.Is(err, ErrCannotAsk):
		return "unavailable"
	case errors.Is(err, ErrSuspend):
		return "suspended"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "aborted"
	case err != nil:
		return "failed"
	case a.Choice == Accepted:
		return "accepted"
	case a.Choice == Declined:
		return "declined"
	}
	return "dismissed"
}
