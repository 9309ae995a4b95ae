package hooks

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// Error codes of the hooks' error results.
const (
	CodeBlocked      = tool.CodeBlocked
	CodeInvalidInput = tool.CodeInvalidArgs
)

// Pre is the PreToolUse hooks as a pre-execute middleware. The matching
// hooks run in parallel and the call waits for all of them; their
// decisions combine deny > ask > allow > none. A deny blocks the call
// (`Error: blocked by hook: REASON`); the last updatedInput in the order
// of docs/spec.md §10 replaces the input, which is validated again; allow
// and ask go to the policy as the call's Advice.
func (h *Hooks) Pre(reg *tool.Registry) tool.PreExecute {
	return func(ctx context.Context, call tool.Call, next tool.PreNext) tool.Decision {
		if r := call.Resume; r != nil {
			// A repeated call after a question: the hooks ran the first
			// time, and what they said is what the user answered about.
			call.Args, call.Advice = r.Args, r.Advice
			d := next(ctx, call)
			d.Notes = append(d.Notes, r.Notes...)
			return d
		}
		handlers := h.matching(PreToolUse, call)
		if len(handlers) == 0 {
			return next(ctx, call)
		}
		cwd := h.workdir(call)
		p, _ := json.Marshal(newPayload(PreToolUse, call, cwd))
		outs := h.runAll(ctx, handlers, p, h.runDir(cwd), call)
		if ctx.Err() != nil {
			// Cancelled while the hooks ran: nothing runs, and no
			// PostToolUse follows a call that never started.
			return tool.Decision{Verdict: tool.Deny, Code: tool.CodeFailed, Reason: bashtool.Aborted, Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: byCancelled}}
		}
		v := h.combine(handlers, outs)
		if v.block {
			return tool.Decision{Verdict: tool.Deny, Code: CodeBlocked, Reason: textBlocked(v.reason), Ruling: tool.Ruling{Outcome: tool.OutcomeBlocked, By: v.blockBy}}
		}
		if v.updated != nil {
			args, err := updatedArgs(call, v.updated)
			if err == nil {
				_, err = validate(reg, call.Name, args)
			}
			if err != nil {
				return tool.Decision{Verdict: tool.Deny, Code: CodeInvalidInput, Reason: textInvalidInput(err), Ruling: tool.Ruling{Outcome: tool.OutcomeInvalid, By: v.updatedBy}}
			}
			call.Args = args
		}
		call.Advice = v.advice
		d := next(ctx, call)
		if d.Question != nil && d.Question.Resume != nil {
			d.Question.Resume.Notes = v.notes // for the repeated call
		}
		d.Notes = append(d.Notes, v.notes...)
		return d
	}
}

// matching are the handlers of event that apply to call, in order.
func (h *Hooks) matching(event string, call tool.Call) []Handler {
	command := ""
	if call.Name == bashtool.Name {
		args, _ := bashtool.DecodeArgs(call.Args)
		command = args.Command
	}
	var out []Handler
	for _, hd := range h.handlers.Get(call.Session) {
		if hd.Event == event && hd.applies(call.Name, command) {
			out = append(out, hd)
		}
	}
	return out
}

// runAll runs the handlers in parallel and returns their outcomes in the
// handlers' order.
func (h *Hooks) runAll(ctx context.Context, handlers []Handler, payload []byte, cwd string, call tool.Call) []outcome {
	outs := make([]outcome, len(handlers))
	var wg sync.WaitGroup
	for i, hd := range handlers {
		wg.Go(func() { outs[i] = h.run(ctx, hd, payload, cwd, call.Session) })
	}
	wg.Wait()
	return outs
}

// runDir is where hook commands run: the call's working directory, or,
// when that is on another machine (executor ssh), dsh's default one.
func (h *Hooks) runDir(cwd string) string {
	if h.opts.RemoteSessions {
		return h.opts.DefaultCwd
	}
	return cwd
}

// workdir is the call's resolved working directory (the payload's cwd).
func (h *Hooks) workdir(call tool.Call) string {
	args, _ := bashtool.DecodeArgs(call.Args)
	if wd := args.ResolveWorkdir(call.Session); wd != "" {
		return wd
	}
	return h.opts.DefaultCwd
}

// verdict is what the PreToolUse hooks of a call said together.
type verdict struct {
	block   bool
	reason  string
	advice  tool.Advice
	updated json.RawMessage
	notes   []string
	// blockBy and updatedBy name the hooks whose block and input count,
	// for the call's ruling.
	blockBy, updatedBy string
}

// combine weighs the outcomes in the handlers' order: the first block's
// reason, the first ask's reason, the last updatedInput; a failure is
// logged, and blocks when its hook fails closed.
func (h *Hooks) combine(handlers []Handler, outs []outcome) verdict {
	var v verdict
	for i, o := range outs {
		hd := handlers[i]
		by := hd.by()
		if o.failed != "" {
			h.logFailure(hd, o)
			if hd.FailClosed {
				v.blockWith(failure(hd, o.failed), by)
			}
			continue
		}
		if o.block {
			v.blockWith(o.reason, by)
		}
		v.read(o.out, by)
	}
	return v
}

func (v *verdict) blockWith(reason, by string) {
	if !v.block {
		v.block, v.reason, v.blockBy = true, reason, by
	}
}

// read takes the JSON of one hook, by.
func (v *verdict) read(out *output, by string) {
	if out == nil {
		return
	}
	if out.Continue != nil && !*out.Continue {
		v.blockWith(orBlocked(out.StopReason), by)
	}
	switch out.Decision {
	case "block":
		v.blockWith(orBlocked(out.Reason), by)
	case "approve":
		v.allowBy(by)
	}
	s := out.specific(PreToolUse)
	switch s.decision {
	case "deny":
		v.blockWith(orBlocked(s.reason), by)
	case "ask":
		if v.advice.Ask == "" {
			v.advice.Ask, v.advice.By = "hook: "+orText(s.reason, "a hook asked"), by
		}
	case "allow":
		v.allowBy(by)
	}
	if s.updated != nil && string(s.updated) != "null" {
		v.updated, v.updatedBy = s.updated, by
	}
	if s.context != "" {
		v.notes = append(v.notes, note(s.context))
	}
}

func orBlocked(reason string) string { return orText(reason, "blocked by hook") }

func orText(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// allowBy records a hook's allow; the hook that asked, if one did, stays
// the one the advice names.
func (v *verdict) allowBy(by string) {
	v.advice.Allow = true
	if v.advice.Ask == "" {
		v.advice.By = by
	}
}
