package permissions

import (
	"slices"
	"strings"

	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/tool"
)

// The model-facing texts of an ask's outcome (exact, docs/spec.md §9.4),
// after "Error: ".
const (
	textDeclined  = "the user declined to run this command"
	textDismissed = "the user dismissed the approval request; the command did not run"
)

// The texts of a call that asks to leave the sandbox (exact, docs/spec.md
// §11, §9.6): the reason of its question, what the message adds after the
// workdir, and the refusal when the config does not allow it.
const (
	reasonUnsandboxed  = "runs outside the sandbox"
	whereUnsandboxed   = ", outside the sandbox"
	textEscapeDisabled = "denied by policy: running outside the sandbox is disabled (allowUnsandboxed: false)"
)

// textNoAsker is the text when nobody can be asked and askFallback is deny
// (or the call leaves the sandbox, whatever askFallback says).
func textNoAsker(reason string) string {
	return "this command needs the user's approval (" + reason + "), and this client cannot ask for it. " +
		"Ask the user to run it, or to allow it in dsh's permissions config."
}

// question is what the user is asked about a bash call (exact, docs/spec.md
// §9.6): the command, where it runs, and why. A call that leaves the
// sandbox says so after where it runs, gives that as its reason (the
// answer covers the policy's own ask too) and offers no remember.
// A hook's ask (hookAsk, "hook: REASON") gives the reason and offers no
// remember, unless the call leaves the sandbox.
func question(command, workdir string, res policy.Result, unsandboxed bool, hookAsk string) tool.Question {
	q := tool.Question{Reason: reasonUnsandboxed}
	workdir = tool.Visible(workdir)
	switch {
	case unsandboxed:
		workdir += whereUnsandboxed
	case hookAsk != "":
		q.Reason = tool.Visible(hookAsk)
	default:
		q.Reason, q.Remember = tool.Visible(res.Reason()), res.Remember
	}
	q.Message = "Run this command?\n\n" + tool.ShownCommand(command) + "\n\nin " + workdir + "\n\n" + q.Reason
	return q
}

// otherQuestion is what the user is asked about a call of another tool
// than bash that a hook asked about: the tool and its arguments, and the
// hook's reason.
func otherQuestion(call tool.Call, reason string) tool.Question {
	args := string(call.Args)
	if args == "" {
		args = "{}"
	}
	reason = tool.Visible(reason)
	return tool.Question{Message: "Allow this call?\n\n" + call.Name + " " + tool.Visible(args) + "\n\n" + reason, Reason: reason}
}

// byEscapeDisabled is what refused a call that asks to leave the sandbox
// when the config does not allow it (tool.Ruling.By).
const byEscapeDisabled = "allowUnsandboxed: false"

// decidedBy names what decided res, for logs (tool.Ruling.By): the
// deciding part's rule and its source (`deny rule "rm -rf *" (dsh
// config)`), `opaque: …`, or `no rule (default: ask)`; for an allow, the
// distinct reasons of its parts, joined by "; " (`allow rule "git
// status" (dsh config); read-only command`).
func decidedBy(res policy.Result) string {
	if res.Deciding >= 0 && res.Deciding < len(res.Parts) {
		p := res.Parts[res.Deciding]
		if p.Decision == "" && p.Opaque == "" {
			return "no rule (default: " + string(res.Decision) + ")"
		}
		return p.Why()
	}
	var whys []string
	for _, p := range res.Parts {
		if w := p.Why(); !slices.Contains(whys, w) {
			whys = append(whys, w)
		}
	}
	return strings.Join(whys, "; ")
}
