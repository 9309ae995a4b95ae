package tool

import (
	"context"
	"time"

	"github.com/dsh-go/dsh/internal/safe"
)

// Outcome says how a call was decided, in the words of the audit log's
// `decision` (exact, docs/spec.md §15). It names no tool and no front end:
// a step that decides reports one, and logs read it instead of guessing
// from error texts.
type Outcome string

// The outcomes (exact).
const (
	// OutcomeAllow: the call ran without asking anyone.
	OutcomeAllow Outcome = "allow"
	// OutcomeAccepted, OutcomeDeclined, OutcomeDismissed: the user was
	// asked and said yes, said no, or gave no answer (cancelled, timed
	// out, the call aborted meanwhile).
	OutcomeAccepted  Outcome = "ask:accepted"
	OutcomeDeclined  Outcome = "ask:declined"
	OutcomeDismissed Outcome = "ask:dismissed"
	// OutcomeUnavailable: the user had to be asked and nobody could be;
	// the fallback decided (the call ran when it allows).
	OutcomeUnavailable Outcome = "ask:unavailable"
	// OutcomeDeny: a rule or a step refused the call.
	OutcomeDeny Outcome = "deny"
	// OutcomeBlocked: a hook blocked the call, or a post-execute step its
	// result.
	OutcomeBlocked Outcome = "blocked"
	// OutcomeInvalid: the arguments were refused (the schema, the tool's
	// own checks, a rewritten input).
	OutcomeInvalid Outcome = "invalid"
)

// Ruling is how a call was decided and what decided it. The step that
// decides puts it on its [Decision] (and a post-execute step that blocks
// names itself in [PostDecision.By]); the registry completes it and
// reports it on [Result.Ruling].
type Ruling struct {
	Outcome Outcome
	// By names what decided, for a person reading a log: `deny rule "rm
	// -rf *" (dsh config)`, `hook: .claude/hooks/guard.sh`; "" when
	// nothing in particular did (the end of the waterfall allowed).
	By string
}

// Or returns r when it has an outcome, else fallback.
func (r Ruling) Or(fallback Ruling) Ruling {
	if r.Outcome != "" {
		return r
	}
	return fallback
}

// ruling is what the registry reports for a call the waterfall decided:
// the deciding step's ruling, else what the verdict says.
func (d Decision) ruling() Ruling {
	switch d.Verdict {
	case Allow:
		return d.Ruling.Or(Ruling{Outcome: OutcomeAllow})
	case Ask:
		return d.Ruling.Or(Ruling{Outcome: OutcomeUnavailable})
	}
	return d.Ruling.Or(Ruling{Outcome: OutcomeDeny})
}

// Observer sees every call the registry ends: call as it came (its Args
// the ones sent, Started when it arrived) and the result the caller gets
// (its Args the final ones when a step replaced them, its Ruling). A
// suspended call is not seen: it ends later, when it is repeated.
// Observers run on the caller's goroutine before Execute returns, so they
// must be quick (the audit log, metrics); a panic is contained and logged.
type Observer func(ctx context.Context, call Call, res Result)

// Observe adds o; the returned func removes it.
func (r *Registry) Observe(o Observer) (remove func()) { return register(r, &r.observers, o, false) }

// observe hands the ended call to the observers registered now.
func (r *Registry) observe(ctx context.Context, call Call, res Result) {
	r.mu.RLock()
	obs := r.observers
	r.mu.RUnlock()
	for _, o := range obs {
		_ = safe.Call(r.log, "call observer", func() { o.v(ctx, call, res) }, "tool", call.Name)
	}
}

// arrived stamps the call's arrival when the front end did not.
func arrived(call *Call) {
	if call.Started.IsZero() {
		call.Started = time.Now()
	}
}
