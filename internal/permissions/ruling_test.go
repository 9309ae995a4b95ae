package permissions_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// TestRulings: every way the gate decides names its outcome and what
// decided it (the audit log's decision and decidedBy, docs/spec.md §15).
func TestRulings(t *testing.T) {
	e := newEnv(t)
	off := false
	perm := config.Permissions{
		Default: "ask", Allow: []string{"echo *"}, Ask: []string{"git push *"}, Deny: []string{"rm -rf *"},
		ClaudeSettings: &off,
	}
	cannot := &asker{answer: func(context.Context, tool.Question) (tool.Answer, error) { return tool.Answer{}, tool.ErrCannotAsk }}
	for _, tc := range []struct {
		name    string
		command string
		asker   tool.Asker
		want    tool.Ruling
	}{
		{"allow rule", "echo hi", nil, tool.Ruling{Outcome: tool.OutcomeAllow, By: `allow rule "echo *" (dsh config)`}},
		{"allow rule and read-only", "echo hi; ls", nil, tool.Ruling{Outcome: tool.OutcomeAllow, By: `allow rule "echo *" (dsh config); read-only command`}},
		{"deny rule", "rm -rf /tmp/x", nil, tool.Ruling{Outcome: tool.OutcomeDeny, By: `deny rule "rm -rf *" (dsh config)`}},
		{"accepted", "git push origin", answering(tool.Accepted, false), tool.Ruling{Outcome: tool.OutcomeAccepted, By: `ask rule "git push *" (dsh config)`}},
		{"declined", "git push origin", answering(tool.Declined, false), tool.Ruling{Outcome: tool.OutcomeDeclined, By: `ask rule "git push *" (dsh config)`}},
		{"dismissed", "git push origin", answering(tool.Dismissed, false), tool.Ruling{Outcome: tool.OutcomeDismissed, By: `ask rule "git push *" (dsh config)`}},
		{"nobody to ask", "make", cannot, tool.Ruling{Outcome: tool.OutcomeUnavailable, By: "no rule (default: ask)"}},
		{"no asker at all", "make", nil, tool.Ruling{Outcome: tool.OutcomeUnavailable, By: "no rule (default: ask)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := e.stack(t, perm)
			s := session.New("s", e.project)
			defer s.End()
			res := run(context.Background(), st, s, tc.asker, tc.command)
			if res.Ruling != tc.want {
				t.Errorf("ruling %+v, want %+v (result %q)", res.Ruling, tc.want, res.Text())
			}
		})
	}
}

// TestRulingOfFallbackAllow: askFallback: allow runs the command, and the
// log still says that nobody could be asked.
func TestRulingOfFallbackAllow(t *testing.T) {
	e := newEnv(t)
	off := false
	st := e.stack(t, config.Permissions{Default: "ask", AskFallback: "allow", ClaudeSettings: &off})
	s := session.New("s", e.project)
	defer s.End()
	res := run(context.Background(), st, s, nil, "/bin/true")
	want := tool.Ruling{Outcome: tool.OutcomeUnavailable, By: "no rule (default: ask)"}
	if res.Ruling != want || res.IsError {
		t.Errorf("ruling %+v, error %v, want %+v and a run", res.Ruling, res.IsError, want)
	}
}
