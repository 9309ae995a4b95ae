package permissions

import (
	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/tool"
)

// The model-facing texts of an ask's outcome (exact, docs/spec.md §9.4),
// after "Error: ".
const (
	textDeclined  = "the user declined to run this command"
	textDismissed = "the user dismissed the approval request; the command did not run"
)

// textNoAsker is the text when nobody can be asked and askFallback is deny.
func textNoAsker(reason string) string {
	return "this command needs the user's approval (" + reason + "), and this client cannot ask for it. " +
		"Ask the user to run it, or to allow it in dsh's permissions config."
}

// maxShown is how much of a command the question shows, in code points.
const maxShown = 2000

// question is what the user is asked about a bash call (exact, docs/spec.md
// §9.6): the command, where it runs, and why.
func question(command, workdir string, res policy.Result) tool.Question {
	shown := command
	if r := []rune(command); len(r) > maxShown {
		shown = string(r[:maxShown]) + "…"
	}
	reason := res.Reason()
	return tool.Question{
		Message:  "Run this command?\n\n" + shown + "\n\nin " + workdir + "\n\n" + reason,
		Reason:   reason,
		Remember: res.Remember,
	}
}
