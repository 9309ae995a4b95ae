package hooks

import (
	"context"
	"encoding/json"

	"github.com/dsh-go/dsh/tool"
)

// Post is the PostToolUse hooks as a post-execute middleware. They run for
// calls whose tool executed (a non-zero exit, a timeout and a background
// start included, and a call its caller aborted, as interrupted), not for
// refusals or spawn failures. A hook's block or additional context
// becomes a note `[hook] TEXT` after the result; the result itself and its
// isError stay.
func (h *Hooks) Post() tool.PostExecute {
	return func(ctx context.Context, call tool.Call, res tool.Result, next tool.PostNext) tool.PostDecision {
		d := next(ctx, call, res)
		interrupted := ctx.Err() != nil
		if !res.Executed || res.IsError && !interrupted {
			return d
		}
		handlers := h.matching(PostToolUse, call)
		if len(handlers) == 0 {
			return d
		}
		cwd := h.workdir(call)
		p := newPayload(PostToolUse, call, cwd)
		p.ToolResponse = toolResponse(call.Name, res, interrupted)
		data, _ := json.Marshal(p)
		// The caller may be gone (interrupted): the hooks still run, for
		// at most their own timeouts.
		outs := h.runAll(context.WithoutCancel(ctx), handlers, data, h.runDir(cwd), call)
		d.Notes = append(d.Notes, h.postNotes(handlers, outs)...)
		return d
	}
}

// postNotes are the notes of the PostToolUse outcomes, in the handlers'
// order: each block's reason and each additional context.
func (h *Hooks) postNotes(handlers []Handler, outs []outcome) []string {
	var notes []string
	for i, o := range outs {
		hd := handlers[i]
		switch {
		case o.failed != "":
			h.logFailure(hd, o)
			if hd.FailClosed {
				notes = append(notes, note(failure(hd, o.failed)))
			}
		case o.block:
			notes = append(notes, note(o.reason))
		case o.out != nil:
			if o.out.Decision == "block" {
				notes = append(notes, note(orBlocked(o.out.Reason)))
			}
			if s := o.out.specific(PostToolUse); s.context != "" {
				notes = append(notes, note(s.context))
			}
		}
	}
	return notes
}
