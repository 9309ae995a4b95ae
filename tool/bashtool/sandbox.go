package bashtool

// The sandbox as the model meets it (docs/spec.md §11): one sentence of
// the description, the escape with the user's consent, and the hint line
// on failures that look like the sandbox's.

import (
	"context"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/tool"
)

// The exact texts of the escape (docs/spec.md §11).
const (
	escapeReason   = "runs outside the sandbox"
	escapeDisabled = "denied by policy: running outside the sandbox is disabled (allowUnsandboxed: false)"
)

// noAsker is the text for an ask nobody can answer (docs/spec.md §11).
func noAsker(reason string) string {
	return "this command needs the user's approval (" + reason + "), and this client cannot ask for it. " +
		"Ask the user to run it, or to allow it in dsh's permissions config."
}

// sandboxSentence names the sandbox's mode for the description, "" with
// none.
func sandboxSentence(sb config.Sandbox) string {
	if !sb.On() {
		return ""
	}
	writes := "can write only in the workspace, the configured writable roots and /tmp"
	if sb.Mode == config.SandboxReadOnly {
		writes = "can write nothing but /tmp"
	}
	net := ", and have no network access"
	if sb.Network {
		net = ""
	}
	return " Commands run in a " + sb.Mode + " sandbox: they " + writes + net + "."
}

// hintPhrases are what failing commands print when the sandbox stopped
// them.
var hintPhrases = []string{"Read-only file system", "Permission denied", "Operation not permitted",
	"Network is unreachable", "Could not resolve host", "Temporary failure in name resolution"}

// hintLine is the line itself (exact).
func hintLine(sb config.Sandbox) string {
	var b strings.Builder
	b.WriteString("[sandbox: ")
	if sb.Mode == config.SandboxReadOnly {
		b.WriteString("all writes")
	} else {
		b.WriteString("writes outside the workspace")
	}
	if !sb.Network {
		b.WriteString(" and network access")
	}
	b.WriteString(" are blocked")
	if sb.Unsandboxed() {
		b.WriteString("; if the sandbox caused this, retry with dangerouslyDisableSandbox: true to ask the user")
	}
	b.WriteString("]")
	return b.String()
}

// hint is the hint line for a sandboxed command that failed (non-zero
// exit or a signal) with a phrase of hintPhrases in its kept text, else
// "".
func (t *Tool) hint(req bash.Request, code *int, signal string, streams ...bash.Output) string {
	if !t.sandbox.On() || req.Unsandboxed {
		return ""
	}
	if signal == "" && (code == nil || *code == 0) {
		return ""
	}
	for _, o := range streams {
		for _, p := range hintPhrases {
			if strings.Contains(o.Head, p) || strings.Contains(o.Text, p) {
				return hintLine(t.sandbox)
			}
		}
	}
	return ""
}

// withHint puts a hint line after a task's final read.
func withHint(text, hint string) string {
	if hint == "" {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + hint
}

// isDone reports whether a background process has finished.
func isDone(p bash.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// leaveSandbox decides a call that asks to run outside the sandbox: with
// allowUnsandboxed: false it is denied; else it needs the user's consent,
// and with nobody to ask it is refused, whatever askFallback says.
func (t *Tool) leaveSandbox(_ context.Context, _ tool.Call, req *bash.Request) error {
	if !t.sandbox.Unsandboxed() {
		return &tool.Error{Code: tool.CodeDenied, Message: escapeDisabled}
	}
	return &tool.Error{Code: tool.CodeApprovalRequired, Message: noAsker(escapeReason)}
}
