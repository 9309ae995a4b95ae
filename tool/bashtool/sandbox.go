package bashtool

// The sandbox as the model meets it (docs/spec.md §11): one sentence of
// the description, the escape with the user's consent, and the hint line
// on failures that look like the sandbox's.

import (
	"context"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/tool"
)

// ConsentUnsandboxed is the user's consent to run a call outside the
// sandbox, which the permissions gate asks for and hands on
// ([tool.Decision.Consents]); without it the tool runs nothing outside
// the sandbox.
const ConsentUnsandboxed = "bash: run outside the sandbox"

// errNoConsent refuses a call that asks to leave the sandbox when nobody
// asked the user: a stack without the permissions gate (host.Standard
// installs it with every sandbox), or a middleware before it that allowed
// the call without asking.
var errNoConsent = &tool.Error{Code: tool.CodeApprovalRequired,
	Message: "running outside the sandbox needs the user's approval, and nothing asked for it"}

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
	switch {
	case sb.Network.HostNetwork():
		net = ""
	case sb.Network.Filter() != nil:
		net = ", and reach only the hosts the user allows"
	}
	return " Commands run in a " + sb.Mode + " sandbox: they " + writes + net + "."
}

// notSandboxedSentence ends the description where the sandbox is on by
// default but no backend works (exact, docs/spec.md §11).
const notSandboxedSentence = " Commands are not sandboxed here."

// notSandboxed is notSandboxedSentence when no backend works here, else "".
func (t *Tool) notSandboxed() string {
	if t.noSandboxHere {
		return notSandboxedSentence
	}
	return ""
}

// hintPhrases are what failing commands print when the sandbox stopped
// them.
var hintPhrases = []string{"Read-only file system", "Permission denied", "Operation not permitted",
	"Network is unreachable", "Could not resolve host", "Temporary failure in name resolution"}

// hintLine is the line itself (exact).
func hintLine(sb config.Sandbox) string {
	var b strings.Builder
	b.WriteString(marker.SandboxOpen)
	if sb.Mode == config.SandboxReadOnly {
		b.WriteString("all writes")
	} else {
		b.WriteString("writes outside the workspace")
	}
	if sb.Network.Filter() == nil && !sb.Network.HostNetwork() {
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

// leaveSandbox lets a call that asks to run outside the sandbox do so when
// the sandbox allows it and the user consented (docs/spec.md §11); the
// permissions gate has asked and refused with the exact texts before.
func (t *Tool) leaveSandbox(ctx context.Context, req *bash.Request) error {
	if !t.sandbox.Unsandboxed() || !tool.Consented(ctx, ConsentUnsandboxed) {
		return errNoConsent
	}
	req.Unsandboxed = true
	return nil
}
