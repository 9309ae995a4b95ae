package bashtool

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tool"
)

// TestNetworkTexts: the question about a host and the refusal line, byte
// for byte (docs/spec.md §11.1).
func TestNetworkTexts(t *testing.T) {
	if got, want := netQuestion("registry.example.com", 443, "npm install\x1b[2J"),
		`Allow network access to registry.example.com:443 for this session? (command: npm install\x1b[2J)`; got != want {
		t.Errorf("question:\n got %q\nwant %q", got, want)
	}
	long := strings.Repeat("y", 2500)
	if got := netQuestion("h.example", 80, long); !strings.HasSuffix(got, strings.Repeat("y", 2000)+"…)") || strings.Count(got, "y") != 2000 {
		t.Errorf("a long command is not cut at 2000 code points: %d y", strings.Count(got, "y"))
	}
	for _, tc := range []struct {
		hosts []string
		want  string
	}{
		{nil, ""},
		{[]string{"a.example"}, "[network: 1 connection refused: a.example]"},
		{[]string{"a.example", "b.example", "a.example"}, "[network: 3 connections refused: a.example, b.example]"},
		{[]string{"1", "2", "3", "4", "5", "6", "7"}, "[network: 7 connections refused: 1, 2, 3, 4, 5 and 2 more]"},
	} {
		n := &bash.NetCall{}
		for _, h := range tc.hosts {
			n.Refuse(h)
		}
		if got := refusedLine(n.Refused()); got != tc.want {
			t.Errorf("refusedLine(%q) = %q, want %q", tc.hosts, got, tc.want)
		}
	}
}

func TestNetCallAnswers(t *testing.T) {
	for _, tc := range []struct {
		answer tool.Answer
		err    error
		want   bash.NetAnswer
	}{
		{tool.Answer{Choice: tool.Accepted}, nil, bash.NetAccepted},
		{tool.Answer{Choice: tool.Declined}, nil, bash.NetDeclined},
		{tool.Answer{}, nil, bash.NetDismissed},
		{tool.Answer{}, tool.ErrCannotAsk, bash.NetCannotAsk},
		{tool.Answer{}, tool.ErrSuspend, bash.NetCannotAsk},
	} {
		var asked string
		n := netCall(tool.Call{Seq: 7, Asker: tool.AskerFunc(func(_ context.Context, q tool.Question) (tool.Answer, error) {
			asked = q.Message
			return tc.answer, tc.err
		})}, "curl x")
		if got := n.Ask(context.Background(), "x.example", 443); got != tc.want {
			t.Errorf("answer %+v, %v: got %v, want %v", tc.answer, tc.err, got, tc.want)
		}
		if asked != netQuestion("x.example", 443, "curl x") || n.ID != "call-7" {
			t.Errorf("asked %q as %q", asked, n.ID)
		}
	}
	if n := netCall(tool.Call{ID: "c"}, "x"); n.Ask != nil || n.ID != "c" {
		t.Error("a call without an asker got an Ask")
	}
}
