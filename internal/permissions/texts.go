package permissions

import (
	"fmt"
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

// maxShown is how much of a command the question shows, in code points.
const maxShown = 2000

// question is what the user is asked about a bash call (exact, docs/spec.md
// §9.6): the command, where it runs, and why. A call that leaves the
// sandbox says so after where it runs, gives that as its reason (the
// answer covers the policy's own ask too) and offers no remember.
// A hook's ask (hookAsk, "hook: REASON") gives the reason and offers no
// remember, unless the call leaves the sandbox.
func question(command, workdir string, res policy.Result, unsandboxed bool, hookAsk string) tool.Question {
	shown := command
	if r := []rune(command); len(r) > maxShown {
		shown = string(r[:maxShown]) + "…"
	}
	q := tool.Question{Reason: reasonUnsandboxed}
	workdir = visible(workdir)
	switch {
	case unsandboxed:
		workdir += whereUnsandboxed
	case hookAsk != "":
		q.Reason = visible(hookAsk)
	default:
		q.Reason, q.Remember = visible(res.Reason()), res.Remember
	}
	q.Message = "Run this command?\n\n" + visible(shown) + "\n\nin " + workdir + "\n\n" + q.Reason
	return q
}

// visible shows the characters that would let a command look like another
// one where the question is displayed — a carriage return that moves back
// over the line, escape sequences, bidirectional overrides — as escapes
// (\r, \x1b, \u202e); newlines and tabs stay. The user approves what runs,
// not what a terminal makes of it.
func visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hidden(r):
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// hidden reports whether r changes how the text around it is displayed
// rather than showing itself.
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	}
	return false
}

// otherQuestion is what the user is asked about a call of another tool
// than bash that a hook asked about: the tool and its arguments, and the
// hook's reason.
func otherQuestion(call tool.Call, reason string) tool.Question {
	args := string(call.Args)
	if args == "" {
		args = "{}"
	}
	reason = visible(reason)
	return tool.Question{Message: "Allow this call?\n\n" + call.Name + " " + visible(args) + "\n\n" + reason, Reason: reason}
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
