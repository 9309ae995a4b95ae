package tool

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/internal/safe"
)

// Registry holds tool definitions and the waterfalls. It is safe for
// concurrent use: tools and middleware may come and go while calls run; a
// call uses the definitions and middleware as they were when it started.
type Registry struct {
	log   *slog.Logger
	seq   atomic.Uint64
	mu    sync.RWMutex
	tools map[string]Definition
	order []string // registration order, for listing
	// pre, post and observers are replaced, never changed in place
	// (register), so a call may read what it took after the lock.
	pre       []entry[PreExecute]
	post      []entry[PostExecute]
	observers []entry[Observer]
	nextID    uint64
	tracer    trace.Tracer // WithTracer; nil: no spans
}

// entry is a registered middleware or observer, with the id its removal
// finds it by.
type entry[T any] struct {
	id uint64
	v  T
}

// register adds v to *list, at the front when first, and returns the func
// that removes it. Both make a new slice: a call running reads the one it
// took without the lock.
func register[T any](r *Registry, list *[]entry[T], v T, first bool) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	e := entry[T]{id: r.nextID, v: v}
	if first {
		*list = slices.Insert(slices.Clone(*list), 0, e)
	} else {
		*list = append(slices.Clip(*list), e)
	}
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		*list = slices.DeleteFunc(slices.Clone(*list), func(x entry[T]) bool { return x.id == e.id })
	}
}

// values is what list holds, in order.
func values[T any](list []entry[T]) []T {
	out := make([]T, len(list))
	for i, e := range list {
		out[i] = e.v
	}
	return out
}

// NewRegistry returns an empty registry.
func NewRegistry(opts ...Option) *Registry {
	r := &Registry{tools: make(map[string]Definition), log: slog.Default()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Option configures a Registry.
type Option func(*Registry)

// WithLogger logs the panics of tools, middleware and presenters to l
// instead of slog's default logger.
func WithLogger(l *slog.Logger) Option {
	return func(r *Registry) {
		if l != nil {
			r.log = l
		}
	}
}

// Register adds def. It fails for a missing name or Execute, a name already
// registered, or a parameter schema that is not an object schema or uses
// keywords the validator does not check.
func (r *Registry) Register(def Definition) error {
	if def.Name == "" {
		return errors.New("tool: a definition needs a name")
	}
	if def.Execute == nil {
		return fmt.Errorf("tool %q: no Execute function", def.Name)
	}
	if def.Parameters == nil || def.Parameters.Type != "object" {
		return fmt.Errorf("tool %q: parameters must be an object schema", def.Name)
	}
	if err := checkSupported(def.Parameters, "parameters"); err != nil {
		return fmt.Errorf("tool %q: %w", def.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[def.Name]; dup {
		return fmt.Errorf("tool %q is already registered", def.Name)
	}
	r.tools[def.Name] = def
	r.order = append(r.order, def.Name)
	return nil
}

// Remove removes the named tool and reports whether it was registered.
// Calls already running finish.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return false
	}
	delete(r.tools, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
	return true
}

// Lookup returns the named definition.
func (r *Registry) Lookup(name string) (Definition, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	def, ok := r.tools[name]
	return def, ok
}

// List returns what a model is shown of each tool, in registration order.
// The schemas are the registry's own: callers must not modify them.
func (r *Registry) List() []Schema {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Schema, 0, len(r.order))
	for _, name := range r.order {
		d := r.tools[name]
		out = append(out, Schema{Name: d.Name, Description: d.Description, Parameters: d.Parameters, OutputSchema: d.OutputSchema, Annotations: d.Annotations})
	}
	return out
}

// Execute runs a call through validation, the waterfalls and the tool. It
// always returns a result; failures are error results. The result's Ruling
// says how the call was decided, and the observers see it before Execute
// returns (unless the call was suspended).
func (r *Registry) Execute(ctx context.Context, call Call) Result {
	arrived(&call)
	ctx, end := r.startSpan(ctx, call)
	res := r.execute(ctx, call)
	if res.Question == nil {
		r.observe(ctx, call, res)
	}
	end(res.Question != nil)
	return res
}

func (r *Registry) execute(ctx context.Context, call Call) Result {
	r.mu.RLock()
	def, ok := r.tools[call.Name]
	pre, post := values(r.pre), values(r.post)
	r.mu.RUnlock()

	if !ok {
		return refused(ErrorResult(CodeUnknownTool, fmt.Sprintf("unknown tool %q", call.Name)), Ruling{Outcome: OutcomeInvalid})
	}
	if _, err := def.validate(call.Args); err != nil {
		return refused(errorResult(err, CodeInvalidArgs), Ruling{Outcome: OutcomeInvalid})
	}

	call.Seq, call.Advice = r.seq.Add(1), Advice{}
	if call.Resume != nil && call.Resume.Seq != 0 {
		call.Seq = call.Resume.Seq // the same call, repeated after a question
	}
	var res Result
	decision, final, judged, err := r.runPre(ctx, call, pre)
	switch {
	case err != nil:
		res = errorResult(err, CodePanic)
	case decision.Verdict == Deny:
		res = ErrorResult(cmp.Or(decision.Code, CodeDenied), decision.reasonOr(fmt.Sprintf("tool %q was denied", call.Name)))
	case decision.Verdict == Ask:
		res = ErrorResult(CodeApprovalRequired, decision.reasonOr(fmt.Sprintf("tool %q requires approval (not yet supported)", call.Name)))
	case decision.Verdict == Allow:
		res = r.runFinal(withConsents(ctx, decision.Consents), def, call, final)
		call = final
		if res.Code == CodeInvalidArgs {
			// The final arguments, or the tool's own checks, refused them.
			decision.Ruling = Ruling{Outcome: OutcomeInvalid}
		}
	case decision.Verdict == Suspend && decision.Question != nil:
		// Nothing ran and nothing was decided yet: post-execute has
		// nothing to see.
		return Result{Question: decision.Question}
	default: // a verdict this registry does not know: fail closed
		res = ErrorResult(CodeDenied, fmt.Sprintf("tool %q was denied: unknown verdict %d", call.Name, decision.Verdict))
	}

	if err != nil {
		decision.Ruling = Ruling{Outcome: OutcomeDeny, By: "pre-execute middleware panicked"}
	}
	if !res.Executed && !bytes.Equal(judged.Args, call.Args) {
		// Refused after a step replaced the arguments: the log shows
		// the ones refused (and the call's, as sent).
		res.Args = judged.Args
	}
	if len(decision.Notes) > 0 {
		res.Notes = append(slices.Clone(res.Notes), decision.Notes...)
	}
	res.Ruling = decision.ruling()
	after, err := r.runPost(ctx, call, res, post)
	switch {
	case err != nil:
		return carry(errorResult(err, CodePanic), res, Ruling{Outcome: OutcomeBlocked, By: "post-execute middleware panicked"})
	case after.Block:
		blocked := ErrorResult(CodeBlocked, after.feedbackOr(fmt.Sprintf("the result of tool %q was blocked", call.Name)))
		return carry(blocked, res, Ruling{Outcome: OutcomeBlocked, By: after.By})
	case len(after.Notes) > 0:
		res.Notes = append(slices.Clone(res.Notes), after.Notes...)
	}
	return res
}

// refused is res, a call stopped before the waterfalls, with its ruling.
func refused(res Result, r Ruling) Result {
	res.Ruling = r
	return res
}

// carry is the error result that replaces ran after post-execute: what
// ran (its arguments, that it executed, its facts) stays known to the
// observers, not to the model.
func carry(res, ran Result, r Ruling) Result {
	res.Executed, res.Args, res.Structured, res.Ruling = ran.Executed, ran.Args, ran.Structured, r
	return res
}

// runFinal runs the arguments the waterfall settled on: validated again
// when a step replaced them, and reported in the result.
func (r *Registry) runFinal(ctx context.Context, def Definition, call, final Call) Result {
	if bytes.Equal(final.Args, call.Args) {
		return r.runTool(ctx, def, call)
	}
	if _, err := def.validate(final.Args); err != nil {
		return errorResult(err, CodeInvalidArgs)
	}
	res := r.runTool(ctx, def, final)
	res.Args = final.Args
	return res
}

// runTool executes def, turning an error or a panic into an error result.
func (r *Registry) runTool(ctx context.Context, def Definition, call Call) Result {
	var (
		res Result
		err error
	)
	if perr := safe.Call(r.log, "tool", func() { res, err = def.Execute(ctx, call) }, "tool", call.Name); perr != nil {
		res = ErrorResult(CodePanic, perr.Error())
	} else if err != nil {
		res = errorResult(err, CodeFailed)
	}
	res.Executed = true
	return res
}

// errorResult renders err, with the code of a *Error in its chain (and the
// whole chain's text, so wrapping context is kept).
func errorResult(err error, code string) Result {
	var te *Error
	if errors.As(err, &te) && te != nil && te.Code != "" {
		code = te.Code
	}
	return ErrorResult(code, err.Error())
}

// contain runs fn, turning a panic into an error with code PANIC (logged
// with its stack by safe.Call).
func (r *Registry) contain(what string, fn func()) error {
	if err := safe.Call(r.log, what, fn); err != nil {
		return &Error{Code: CodePanic, Message: err.Error()}
	}
	return nil
}

// decodeArgs soft-validates args for presenters.
func decodeArgs(def Definition, args json.RawMessage) (map[string]any, bool) {
	m, err := Validate(def.Parameters, args)
	return m, err == nil
}
