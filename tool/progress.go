package tool

import "context"

// Progress receives a running call's progress: a number that only grows
// and a short message. A front end puts one in the call's context (MCP,
// when the request carries a progress token); tools that can report
// progress look for it with [ProgressFrom].
type Progress func(progress float64, message string)

type progressKey struct{}

// WithProgress returns ctx carrying p.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the Progress in ctx, or nil.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}
