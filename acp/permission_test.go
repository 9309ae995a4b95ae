package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-go/dsh/acp"
	"github.com/dsh-go/dsh/tool"
)

func TestPermissionRequest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		remember []string
		options  []acpsdk.PermissionOptionId
	}{
		{"no remember", nil, []acpsdk.PermissionOptionId{acp.OptionAllowOnce, acp.OptionRejectOnce}},
		{"remember", []string{"make *"}, []acpsdk.PermissionOptionId{acp.OptionAllowOnce, acp.OptionAllowAlways, acp.OptionRejectOnce}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tool.Question{Message: "Run this command?\n\nmake\n\nin /w\n\nno rule allows `make`", Reason: "no rule allows `make`", Remember: tc.remember}
			req := acp.PermissionRequest("sess-1", "call-7", q)
			var ids []acpsdk.PermissionOptionId
			for _, o := range req.Options {
				ids = append(ids, o.OptionId)
				if o.OptionId == acp.OptionAllowAlways && o.Name != "Allow `make *` for the rest of this session" {
					t.Errorf("allow_always is named %q", o.Name)
				}
			}
			if len(ids) != len(tc.options) {
				t.Fatalf("options %v, want %v", ids, tc.options)
			}
			for i := range ids {
				if ids[i] != tc.options[i] {
					t.Errorf("options %v, want %v", ids, tc.options)
				}
			}
			if req.ToolCall.ToolCallId != "call-7" || req.SessionId != "sess-1" || len(req.ToolCall.Content) != 1 || req.ToolCall.Content[0].Content.Content.Text.Text != q.Message {
				t.Errorf("request %+v", req)
			}
			if s := defSchema(t, "RequestPermissionRequest"); s != nil {
				data, _ := json.Marshal(req)
				var v any
				_ = json.Unmarshal(data, &v)
				if err := s.Validate(v); err != nil {
					t.Errorf("the request does not validate against the ACP schema: %v\n%s", err, data)
				}
			}
		})
	}
}

// A question whose answer holds for the session (a host) has its own
// title and offers no "once".
func TestPermissionRequestForSession(t *testing.T) {
	r := acp.PermissionRequest("s", "c", tool.Question{Message: "Allow network access to h.example:443 for this session? (command: x)",
		Title: "Allow network access?", ForSession: true})
	if *r.ToolCall.Title != "Allow network access?" || len(r.Options) != 2 ||
		r.Options[0].Name != "Allow for this session" || r.Options[1].Name != "Reject for this session" {
		t.Errorf("request %+v", r)
	}
}

func TestPermissionAnswer(t *testing.T) {
	selected := func(id acpsdk.PermissionOptionId) acpsdk.RequestPermissionResponse {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{OptionId: id, Outcome: "selected"}}}
	}
	for _, tc := range []struct {
		resp acpsdk.RequestPermissionResponse
		want tool.Answer
	}{
		{selected(acp.OptionAllowOnce), tool.Answer{Choice: tool.Accepted}},
		{selected(acp.OptionAllowAlways), tool.Answer{Choice: tool.Accepted, Remember: true}},
		{selected(acp.OptionRejectOnce), tool.Answer{Choice: tool.Declined}},
		{selected(acp.OptionRejectAlways), tool.Answer{Choice: tool.Declined}},
		{selected("something-else"), tool.Answer{Choice: tool.Dismissed}},
		{acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, tool.Answer{Choice: tool.Dismissed}},
	} {
		if got := acp.PermissionAnswer(tc.resp); got != tc.want {
			t.Errorf("%+v: %+v, want %+v", tc.resp.Outcome, got, tc.want)
		}
	}
}

type requester func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)

func (f requester) RequestPermission(ctx context.Context, r acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	return f(ctx, r)
}

func TestNewAskerPassesErrorsOn(t *testing.T) {
	boom := errors.New("connection closed")
	a := acp.NewAsker(requester(func(context.Context, acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
		return acpsdk.RequestPermissionResponse{}, boom
	}), "s", "c")
	if _, err := a.Ask(context.Background(), tool.Question{}); !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
}
