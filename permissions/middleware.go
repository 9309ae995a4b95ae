package permissions

import (
	"context"
	"errors"
	"slices"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
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
		if call.Name != bashtool.Name {
			if ask := tool.AdviceFrom(ctx).Ask; ask != "" {
				// A hook asked about another tool: the policy has no rules
				// for it, the user decides.
				c := check{g: g, st: g.state(call.Session), call: call}
				return c.askOther(ctx, next, ask)
			}
			return next(ctx, call)
		}
		var args struct {
			Command string `json:"command"`
			Workdir string `json:"workdir"`
			// Any JSON value: only the boolean true asks to leave (the
			// property is not in the schema when leaving is disabled).
			Unsandboxed any `json:"dangerouslyDisableSandbox"`
		}
		if err := call.Decode(&args); err != nil {
			return tool.Decision{Verdict: tool.Deny, Reason: err.Error()} // the registry validated: cannot happen
		}
		escape := g.sandbox.On() && args.Unsandboxed == true
		advice := tool.AdviceFrom(ctx)
		switch {
		case escape && !g.sandbox.Unsandboxed():
			return tool.Decision{Verdict: tool.Deny, Reason: textEscapeDisabled}
		case g.noPolicy && !escape && advice.Ask == "":
			return next(ctx, call)
		}
		st := g.state(call.Session)
		if st.managed != "" {
			return tool.Decision{Verdict: tool.Deny, Reason: errManaged(st.managed)}
		}
		c := check{g: g, st: st, call: call, command: args.Command, workdir: args.Workdir, escape: escape, advice: advice}
		return c.decide(ctx, next)
	}
}

// check is one bash call on its way through the gate.
type check struct {
	g       *Gate
	st      *sessionState
	call    tool.Call
	command string
	workdir string
	// escape: the call asks to run outside the sandbox, which the config
	// allows: it is always asked about.
	escape bool
	// advice is what the PreToolUse hooks said (docs/spec.md §10).
	advice tool.Advice
}

// decide applies the policy, asking when it says ask, a hook asked, or
// the call leaves the sandbox.
func (c check) decide(ctx context.Context, next tool.PreNext) tool.Decision {
	res := c.st.check(c.command)
	switch {
	case res.Decision == policy.Deny:
		return tool.Decision{Verdict: tool.Deny, Reason: res.DenyText()}
	case c.needsAsk(res):
		return c.ask(ctx, next)
	default:
		return next(ctx, c.call)
	}
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
		return aborted()
	}
	res := c.st.check(c.command)
	if res.Decision == policy.Deny || !c.needsAsk(res) {
		<-c.st.asking
		return c.decide(ctx, next)
	}
	q := question(c.command, c.resolvedWorkdir(), res, c.escape, c.advice.Ask)
	answer, err := c.askUser(ctx, q)
	if err == nil && answer.Choice == tool.Accepted && answer.Remember && len(q.Remember) > 0 {
		// Before the next question of the session is decided.
		c.st.remember(rememberRules(q.Remember))
	}
	<-c.st.asking
	switch {
	case errors.Is(err, tool.ErrSuspend):
		q.Resume = &tool.Resume{Args: c.call.Args, Advice: c.advice, Seq: c.call.Seq}
		return tool.Decision{Verdict: tool.Suspend, Question: &q}
	case errors.Is(err, tool.ErrCannotAsk):
		return c.fallback(ctx, next, q.Reason)
	case ctx.Err() != nil:
		return aborted()
	case err != nil:
		c.g.log.Warn("permissions: asking the user failed", "err", err)
		return dismissed()
	}
	switch answer.Choice {
	case tool.Accepted:
		return c.run(ctx, next)
	case tool.Declined:
		return tool.Decision{Verdict: tool.Deny, Code: CodeDeclined, Reason: textDeclined}
	default:
		return dismissed()
	}
}

// askOther asks the user about a call of another tool a hook asked about:
// no policy, no remember, the same one-question-at-a-time and outcomes.
func (c check) askOther(ctx context.Context, next tool.PreNext, reason string) tool.Decision {
	select {
	case c.st.asking <- struct{}{}:
	case <-ctx.Done():
		return aborted()
	}
	q := otherQuestion(c.call, reason)
	answer, err := c.askUser(ctx, q)
	<-c.st.asking
	switch {
	case errors.Is(err, tool.ErrSuspend):
		q.Resume = &tool.Resume{Args: c.call.Args, Advice: tool.Advice{Ask: reason}, Seq: c.call.Seq}
		return tool.Decision{Verdict: tool.Suspend, Question: &q}
	case errors.Is(err, tool.ErrCannotAsk):
		return c.fallback(ctx, next, q.Reason)
	case ctx.Err() != nil:
		return aborted()
	case err != nil:
		c.g.log.Warn("permissions: asking the user failed", "err", err)
		return dismissed()
	case answer.Choice == tool.Accepted:
		return next(ctx, c.call)
	case answer.Choice == tool.Declined:
		return tool.Decision{Verdict: tool.Deny, Code: CodeDeclined, Reason: textDeclined}
	}
	return dismissed()
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

// askUser asks through the call's asker, for at most askTimeoutMs.
func (c check) askUser(ctx context.Context, q tool.Question) (tool.Answer, error) {
	if c.call.Asker == nil {
		return tool.Answer{}, tool.ErrCannotAsk
	}
	actx, cancel := context.WithTimeout(ctx, config.Millis(c.g.cfg.AskTimeoutMs))
	defer cancel()
	answer, err := c.call.Asker.Ask(actx, q)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		return tool.Answer{Choice: tool.Dismissed}, nil // askTimeoutMs passed
	}
	return answer, err
}

// fallback is askFallback: nobody can be asked. A call that leaves the
// sandbox is refused whatever askFallback says (docs/spec.md §11).
func (c check) fallback(ctx context.Context, next tool.PreNext, reason string) tool.Decision {
	if c.g.cfg.AskFallback == string(policy.Allow) && !c.escape {
		return next(ctx, c.call)
	}
	return tool.Decision{Verdict: tool.Deny, Code: CodeNoAsker, Reason: textNoAsker(reason)}
}

// resolvedWorkdir is where the command would run.
func (c check) resolvedWorkdir() string {
	if wd := bashtool.Workdir(c.workdir, c.call.Session); wd != "" {
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

func aborted() tool.Decision {
	return tool.Decision{Verdict: tool.Deny, Code: tool.CodeFailed, Reason: bashtool.Aborted}
}

func dismissed() tool.Decision {
	return tool.Decision{Verdict: tool.Deny, Code: CodeDismissed, Reason: textDismissed}
}
