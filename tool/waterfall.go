package tool

import (
	"context"
)

// Verdict is a pre-execute decision. Policy fails closed: the zero
// Verdict is Deny, so a middleware that returns a Decision it never filled
// in refuses the call, and a value other than the three below is treated
// as Deny too.
type Verdict int

const (
	// Deny refuses the call: `Error: <reason>`.
	Deny Verdict = iota
	// Allow runs the tool.
	Allow
	// Ask needs a person's approval that the middleware did not obtain
	// itself (a middleware that asks does so through Call.Asker and
	// returns what the answer means): the call is refused with the
	// reason, or with `tool "<name>" requires approval (not yet
	// supported)`.
	Ask
	// Suspend ends the call without running it: the front end asks
	// Question and repeats the call (see ErrSuspend).
	Suspend
)

// Decision is what the pre-execute waterfall decided.
type Decision struct {
	Verdict Verdict
	Reason  string
	// Code classifies a Deny's error result; "" means CodeDenied.
	Code string
	// Notes are added to the result's Notes, whatever it is (a hook's
	// additional context).
	Notes []string
	// Question is what a Suspend asks.
	Question *Question
	// Consents name what the user consented to on the way, beyond running
	// the call (a bash call's running outside the sandbox). With Allow the
	// registry hands them to the tool, which reads them with [Consented];
	// a middleware that obtained one adds it to the decision next
	// returned.
	Consents []string
	// Ruling is how the step that decided did, and why, for logs; the
	// zero Ruling lets the registry say what the verdict says (allow,
	// deny). A step that lets an allow from further on stand but decided
	// it itself (the policy's rule, the user's yes) sets it on the
	// decision next returned.
	Ruling Ruling
}

func (d Decision) reasonOr(fallback string) string {
	if d.Reason != "" {
		return d.Reason
	}
	return fallback
}

// PreNext hands the call to the rest of the waterfall and returns its
// decision; the end of the waterfall allows.
type PreNext func(ctx context.Context, call Call) Decision

// PreExecute is a pre-execute middleware. It may decide at once (allow,
// deny, ask), or call next and return, or change, what the rest decided.
// It may pass next a call with other arguments: the steps after it see
// them, and when the waterfall allows, the tool runs the arguments the
// last step passed on, validated again (docs/spec.md §5).
type PreExecute func(ctx context.Context, call Call, next PreNext) Decision

// PostDecision is what the post-execute waterfall decided about a result.
type PostDecision struct {
	// Block replaces the result with an error result `Error: <Feedback>`.
	Block    bool
	Feedback string
	// By names the step that blocked, for logs (Ruling.By).
	By string
	// Notes, when the result is accepted, are added to the result's
	// Notes, in order.
	Notes []string
}

func (d PostDecision) feedbackOr(fallback string) string {
	if d.Feedback != "" {
		return d.Feedback
	}
	return fallback
}

// PostNext hands the result to the rest of the waterfall; its end accepts
// with no context.
type PostNext func(ctx context.Context, call Call, res Result) PostDecision

// PostExecute is a post-execute middleware: it sees every executed or
// denied call's result and may accept it (with context) or block it.
type PostExecute func(ctx context.Context, call Call, res Result, next PostNext) PostDecision

// UsePre appends mw to the pre-execute waterfall: the first registered is
// the outermost. The returned func removes it.
func (r *Registry) UsePre(mw PreExecute) (remove func()) { return register(r, &r.pre, mw, false) }

// UsePreFirst puts mw before every middleware registered so far.
func (r *Registry) UsePreFirst(mw PreExecute) (remove func()) { return register(r, &r.pre, mw, true) }

// UsePost appends mw to the post-execute waterfall (first registered is
// outermost). The returned func removes it.
func (r *Registry) UsePost(mw PostExecute) (remove func()) { return register(r, &r.post, mw, false) }

// runPre runs the pre-execute chain. A panic anywhere in it becomes err.
// The call its end saw is returned as final: what the tool runs; judged
// is the call the step reached last saw: what a refusal refused.
func (r *Registry) runPre(ctx context.Context, call Call, chain []PreExecute) (d Decision, final, judged Call, err error) {
	final, judged = call, call
	var step func(i int) PreNext
	step = func(i int) PreNext {
		return func(ctx context.Context, call Call) Decision {
			judged = call
			if i == len(chain) {
				final = call
				return Decision{Verdict: Allow}
			}
			return chain[i](ctx, call, step(i+1))
		}
	}
	err = r.contain("pre-execute middleware", func() { d = step(0)(ctx, call) })
	return d, final, judged, err
}

// runPost runs the post-execute chain. A panic anywhere in it becomes err.
func (r *Registry) runPost(ctx context.Context, call Call, res Result, chain []PostExecute) (d PostDecision, err error) {
	var step func(i int) PostNext
	step = func(i int) PostNext {
		return func(ctx context.Context, call Call, res Result) PostDecision {
			if i == len(chain) {
				return PostDecision{}
			}
			return chain[i](ctx, call, res, step(i+1))
		}
	}
	err = r.contain("post-execute middleware", func() { d = step(0)(ctx, call, res) })
	return d, err
}
