package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Asking the user. A pre-execute middleware that needs a person's approval
// (the command policy, a hook) asks through the [Asker] the front end put
// on the call: MCP elicitation, an ACP permission request, a terminal
// prompt. The middleware decides what the answer means; the front end only
// asks, so neither knows the other.

// Question is what is put to the user.
type Question struct {
	// Message is the whole text shown (for a bash call: the command, where
	// it runs, and Reason).
	Message string
	// Reason says why the approval is needed.
	Reason string
	// Remember, when not empty, offers to allow these rules for the rest
	// of the session (and the front end shows them); empty: not offered.
	Remember []string
	// Title, when set, is the question's title where the front end shows
	// one ("Run this command?" otherwise); ForSession says that the
	// answer, yes or no, holds for the rest of the session (a question
	// about a host), so a front end offers no "once".
	Title      string
	ForSession bool
	// Resume is what the steps before the question settled, set when the
	// call is suspended (Suspend): the front end hands it back with the
	// repeated call (Call.Resume), so that the answer applies to what was
	// asked about and the steps do not run twice.
	Resume *Resume
}

// Resume is what the pre-execute steps settled before a question: the
// arguments they passed on (hooks may have rewritten them) and their
// advice.
type Resume struct {
	Args   json.RawMessage `json:"args"`
	Advice Advice          `json:"advice"`
	// Notes are the steps' notes for the result (a hook's context).
	Notes []string `json:"notes,omitempty"`
	// Seq is the call's number, which the repeated call keeps.
	Seq uint64 `json:"seq"`
	// Nonce makes the resume usable once: the front end keeps the nonces
	// it gave until they are used or given up.
	Nonce string `json:"nonce"`
}

// RememberTitle is the label of the choice that remembers (exact,
// docs/spec.md §9.6): "Allow `npm test *, git push *` for the rest of this
// session".
func (q Question) RememberTitle() string {
	return "Allow `" + strings.Join(q.Remember, ", ") + "` for the rest of this session"
}

// Choice is the user's answer.
type Choice int

const (
	// Dismissed: the question was cancelled, closed or timed out; the
	// zero Choice, so an answer never filled in runs nothing.
	Dismissed Choice = iota
	// Declined: the user said no.
	Declined
	// Accepted: the user said yes.
	Accepted
)

// Answer is the user's choice and whether to remember it.
type Answer struct {
	Choice Choice
	// Remember: with Accepted, allow Question.Remember for the rest of the
	// session.
	Remember bool
}

// Asker asks the user. Ask blocks until the user answers, ctx is done
// (an error, ctx's), or it knows it cannot ask ([ErrCannotAsk]). An asker
// that cannot block returns [ErrSuspend] (see [Suspend]).
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// AskerFunc is an Asker of a function.
type AskerFunc func(ctx context.Context, q Question) (Answer, error)

// Ask calls f.
func (f AskerFunc) Ask(ctx context.Context, q Question) (Answer, error) { return f(ctx, q) }

var (
	// ErrCannotAsk: this client cannot ask its user (no elicitation, no
	// terminal); the middleware applies its fallback.
	ErrCannotAsk = errors.New("this client cannot ask the user")
	// ErrSuspend: the front end asks between two requests (MCP's input
	// requests): the middleware returns a [Suspend] decision carrying the
	// question, the registry ends the call with Result.Question, and the
	// front end repeats the call with an Asker that gives the answer.
	ErrSuspend = errors.New("the question is asked after this call returns")
)

// Consent. A tool that must not do something without the user's say (the
// bash tool running a command outside the sandbox, docs/spec.md §11) does
// not trust that some middleware asked: it looks for the consent the
// waterfall's decision carried ([Decision.Consents]). A stack where nobody
// asked, or a middleware that allowed the call without asking, hands it
// none, so the tool refuses rather than act on a consent never given.

type consentsKey struct{}

// withConsents returns ctx carrying consents (ctx itself when there are
// none).
func withConsents(ctx context.Context, consents []string) context.Context {
	if len(consents) == 0 {
		return ctx
	}
	return context.WithValue(ctx, consentsKey{}, consents)
}

// Consented reports whether the pre-execute waterfall allowed the running
// call with the user's consent to what.
func Consented(ctx context.Context, what string) bool {
	c, _ := ctx.Value(consentsKey{}).([]string)
	return slices.Contains(c, what)
}

// Advice is what the steps before the one that decides (hooks) said about
// a call ([Call.Advice]): that it may run without asking, or that the
// user must be asked (Ask is then the reason). The deciding step weighs it
// against its own rules (docs/spec.md §10): advice never overrides a
// refusal. It travels on the call, not in its context, so that the order
// it depends on (hooks before the policy) shows where the steps are
// installed.
type Advice struct {
	Allow bool   `json:"allow,omitempty"`
	Ask   string `json:"ask,omitempty"`
	// By names the step whose advice counts (the first that asked, else
	// the last that allowed), for the ruling of the step that decides.
	By string `json:"by,omitempty"`
}

// maxShown is how much of a command a question shows, in code points.
const maxShown = 2000

// ShownCommand is a command as a question shows it: cut after 2000 code
// points (with "…"), its hidden characters made visible ([Visible]).
func ShownCommand(command string) string {
	if r := []rune(command); len(r) > maxShown {
		command = string(r[:maxShown]) + "…"
	}
	return Visible(command)
}

// Visible shows the characters that would let a command look like another
// one where the question is displayed — a carriage return that moves back
// over the line, escape sequences, bidirectional overrides — as escapes
// (\r, \x1b, \u202e); newlines and tabs stay. The user approves what runs,
// not what a terminal makes of it.
func Visible(s string) string {
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
