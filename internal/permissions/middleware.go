package permissions

import (
	"context"
	"errors"
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// Error codes of the gate's error results (the texts are exact).
const (
	CodeDeclined  = "DECLINED"
	CodeDismissed = "DISMISSED"
	CodeNoAsker   = "APPROVAL_UNAVAILABLE"
)

// Middleware is the gate as a pre-execute middleware of the registry. It
// decides bash calls (foreground and background alike) and lets every
// other tool through. A call that asks to leave the sandbox
// (dangerouslyDisableSandbox: true while a sandbox is on, docs/spec.md
// §11) is refused when the config does not allow it, and otherwise always
// asked about: the policy's deny still denies, and the user's yes is
// handed to the bash tool as [bashtool.ConsentUnsandboxed], without which
// it runs nothing outside the sandbox.
func (g *Gate) Middleware() tool.PreExecute {
	return func(ctx context.Context, call tool.Call, next tool.PreNext) tool.Decision {
		if call.Name == tasktool.InputName {
			return g.typed(ctx, call, next)
		}
		if call.Name != bashtool.Name {
			if ask := call.Advice.Ask; ask != "" {
				// A hook asked about another tool: the policy has no rules
				// for it, the user decides.
				c := check{g: g, st: g.state(call.Session), call: call}
				return c.askOther(ctx, next, ask)
			}
			return next(ctx, call)
		}
		advice := call.Advice
		st := g.state(call.Session)
		if st.unruled && advice.Ask == "" && !g.sandbox.On() {
			// Nothing can be decided: not even the arguments are read.
			return next(ctx, call)
		}
		args, err := bashtool.DecodeArgs(call.Args)
		if err != nil {
			return tool.Decision{Verdict: tool.Deny, Reason: err.Error()} // the registry validated: cannot happen
		}
		escape := g.sandbox.On() && args.LeavesSandbox()
		switch {
		case escape && !g.sandbox.Unsandboxed():
			return tool.Decision{Verdict: tool.Deny, Reason: textEscapeDisabled, Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: byEscapeDisabled}}
		case st.unruled && !escape && advice.Ask == "":
			return next(ctx, call)
		case st.managed != "":
			return tool.Decision{Verdict: tool.Deny, Reason: errManaged(st.managed), Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: errManaged(st.managed)}}
		}
		c := check{g: g, st: st, call: call, args: args, escape: escape, advice: advice}
		return c.decide(ctx, next)
	}
}

// check is one bash call on its way through the gate.
type check struct {
	g    *Gate
	st   *sessionState
	call tool.Call
	args bashtool.Args // the call's, decoded
	// escape: the call asks to run outside the sandbox, which the config
	// allows: it is always asked about.
	escape bool
	// advice is what the PreToolUse hooks said (docs/spec.md §10).
	advice tool.Advice
}

// decide applies the policy, asking when it says ask, a hook asked, or
// the call leaves the sandbox.
func (c check) decide(ctx context.Context, next tool.PreNext) tool.Decision {
	res := c.policy(ctx)
	switch {
	case res.Decision == policy.Deny:
		return tool.Decision{Verdict: tool.Deny, Reason: res.DenyText(), Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: decidedBy(res)}}
	case c.needsAsk(res):
		return c.ask(ctx, next)
	case res.Decision == policy.Ask:
		// A hook's allow settled the policy's ask.
		return ruled(next(ctx, c.call), tool.OutcomeAllow, c.advice.By)
	default:
		return ruled(next(ctx, c.call), tool.OutcomeAllow, decidedBy(res))
	}
}

// ruled is d, an allow from further on, as decided here: with outcome and
// what decided. A refusal from further on keeps its own ruling.
func ruled(d tool.Decision, outcome tool.Outcome, by string) tool.Decision {
	if d.Verdict == tool.Allow {
		d.Ruling = d.Ruling.Or(tool.Ruling{Outcome: outcome, By: by})
	}
	return d
}

// policy is the policy's decision on the command, in a span of its own
// under the call's.
func (c check) policy(ctx context.Context) policy.Result {
	_, span := tool.StartSpan(ctx, SpanPolicy)
	res := c.st.check(c.args.Command)
	if span.IsRecording() {
		span.SetAttributes(attribute.String(AttrDecision, string(res.Decision)), attribute.String(AttrDecidedBy, decidedBy(res)))
		span.End()
	}
	return res
}

// needsAsk reports whether a call the policy does not deny is asked about.
// A hook's allow settles only an ask because no rule allows the command
// under default: ask — the asks that offer remembering — never an ask
// rule, a may-match or opaque ask, or leaving the sandbox.
func (c check) needsAsk(res policy.Result) bool {
	switch {
	case c.escape || c.advice.Ask != "":
		return true
	case res.Decision == policy.Ask:
		return !c.advice.Allow || len(res.Remember) == 0
	}
	return false
}

// ask puts the question to the user, one ask per session at a time. The
// policy is consulted again once this call's turn comes: a rule remembered
// while it waited may decide it (though not a call that leaves the
// sandbox, unless it is now denied).
func (c check) ask(ctx context.Context, next tool.PreNext) tool.Decision {
	select {
	case c.st.asking <- struct{}{}:
	case <-ctx.Done():
		return c.aborted(c.askedBy(c.policy(ctx)))
	}
	res := c.policy(ctx)
	if res.Decision == policy.Deny || !c.needsAsk(res) {
		<-c.st.asking
		return c.decide(ctx, next)
	}
	by := c.askedBy(res)
	q := question(c.args.Command, c.resolvedWorkdir(), res, c.escape, c.advice.Ask)
	answer, err := c.askUser(ctx, q)
	if err == nil && answer.Choice == tool.Accepted && answer.Remember && len(q.Remember) > 0 {
		// Before the next question of the session is decided.
		c.st.remember(rememberRules(q.Remember))
	}
	<-c.st.asking
	return c.answered(ctx, next, q, answer, err, c.advice, by, func() tool.Decision { return c.run(ctx, next) })
}

// askedBy names what made the call asked about: leaving the sandbox, a
// hook, or the policy's rule.
func (c check) askedBy(res policy.Result) string {
	switch {
	case c.escape:
		return reasonUnsandboxed
	case c.advice.Ask != "":
		return c.advice.By
	}
	return decidedBy(res)
}

// askOther asks the user about a call of another tool a hook asked about:
// no policy, no remember, the same one-question-at-a-time and outcomes.
func (c check) askOther(ctx context.Context, next tool.PreNext, reason string) tool.Decision {
	by := c.call.Advice.By
	select {
	case c.st.asking <- struct{}{}:
	case <-ctx.Done():
		return c.aborted(by)
	}
	q := otherQuestion(c.call, reason)
	answer, err := c.askUser(ctx, q)
	<-c.st.asking
	return c.answered(ctx, next, q, answer, err, tool.Advice{Ask: reason, By: by}, by, func() tool.Decision { return next(ctx, c.call) })
}

// answered turns the user's answer to q (or why there was none) into the
// call's decision: an accepted call goes on through accepted; a front end
// that asks between two requests gets a Suspend whose resume carries
// advice; one that cannot ask gets the fallback.
func (c check) answered(ctx context.Context, next tool.PreNext, q tool.Question, answer tool.Answer, err error, advice tool.Advice, by string, accepted func() tool.Decision) tool.Decision {
	switch {
	case errors.Is(err, tool.ErrSuspend):
		q.Resume = &tool.Resume{Args: c.call.Args, Advice: advice, Seq: c.call.Seq}
		return tool.Decision{Verdict: tool.Suspend, Question: &q}
	case errors.Is(err, tool.ErrCannotAsk):
		return c.fallback(ctx, next, q.Reason, by)
	case ctx.Err() != nil:
		return c.aborted(by)
	case err != nil:
		c.g.log.Warn("permissions: asking the user failed", "err", err)
		return dismissed(by)
	case answer.Choice == tool.Accepted:
		return ruled(accepted(), tool.OutcomeAccepted, by)
	case answer.Choice == tool.Declined:
		return declined(by)
	}
	return dismissed(by)
}

// run hands the call the user accepted to the rest of the waterfall; one
// that leaves the sandbox carries the user's consent to the tool when the
// rest allows it.
func (c check) run(ctx context.Context, next tool.PreNext) tool.Decision {
	d := next(ctx, c.call)
	if c.escape && d.Verdict == tool.Allow {
		d.Consents = append(slices.Clip(d.Consents), bashtool.ConsentUnsandboxed)
	}
	return d
}

// askUser asks through the call's asker, for at most askTimeoutMs, in a
// span of its own under the call's.
func (c check) askUser(ctx context.Context, q tool.Question) (answer tool.Answer, err error) {
	actx, span := tool.StartSpan(ctx, tool.SpanAsk)
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.String(tool.AttrAskAnswer, tool.AnswerName(answer, err)))
			span.End()
		}
	}()
	if c.call.Asker == nil {
		return tool.Answer{}, tool.ErrCannotAsk
	}
	actx, cancel := context.WithTimeout(actx, c.g.cfg.AskTimeout)
	defer cancel()
	answer, err = c.call.Asker.Ask(actx, q)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		return tool.Answer{Choice: tool.Dismissed}, nil // askTimeoutMs passed
	}
	return answer, err
}

// fallback is askFallback: nobody can be asked. A call that leaves the
// sandbox is refused whatever askFallback says (docs/spec.md §11).
// Either way the outcome is ask:unavailable, by what asked.
func (c check) fallback(ctx context.Context, next tool.PreNext, reason, by string) tool.Decision {
	if c.g.cfg.AskFallback == string(policy.Allow) && !c.escape {
		return ruled(next(ctx, c.call), tool.OutcomeUnavailable, by)
	}
	return tool.Decision{Verdict: tool.Deny, Code: CodeNoAsker, Reason: textNoAsker(reason), Ruling: tool.Ruling{Outcome: tool.OutcomeUnavailable, By: by}}
}

// resolvedWorkdir is where the command would run.
func (c check) resolvedWorkdir() string {
	if wd := c.args.ResolveWorkdir(c.call.Session); wd != "" {
		return wd
	}
	return c.g.defaultCwd
}

// rememberRules parses the suggested rules a user accepted to remember.
func rememberRules(texts []string) []policy.Rule {
	var out []policy.Rule
	for _, t := range texts {
		if r, err := policy.ParseRule(policy.KindAllow, t, sourceRemembered); err == nil {
			out = append(out, r)
		}
	}
	return out
}

const sourceRemembered = "remembered in this session"

// aborted: the call was cancelled while it waited to ask or for the
// answer; the question went unanswered.
func (check) aborted(by string) tool.Decision {
	return tool.Decision{Verdict: tool.Deny, Code: tool.CodeFailed, Reason: bashtool.Aborted, Ruling: tool.Ruling{Outcome: tool.OutcomeDismissed, By: by}}
}

func dismissed(by string) tool.Decision {
	return tool.Decision{Verdict: tool.Deny, Code: CodeDismissed, Reason: textDismissed, Ruling: tool.Ruling{Outcome: tool.OutcomeDismissed, By: by}}
}

func declined(by string) tool.Decision {
	return tool.Decision{Verdict: tool.Deny, Code: CodeDeclined, Reason: textDeclined, Ruling: tool.Ruling{Outcome: tool.OutcomeDeclined, By: by}}
}
