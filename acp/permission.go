package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-go/dsh/tool"
)

// Asking the user (docs/spec.md §9.6): an agent puts [NewAsker] on each
// tool call it executes, and a question of the command policy becomes a
// session/request_permission for that call, with the options allow_once,
// allow_always (only when remembering is offered: the suggested rules, for
// the rest of the session) and reject_once. A cancelled request (the
// client cancelled the prompt turn) dismisses the question.

// The ids of the permission options.
const (
	OptionAllowOnce   acpsdk.PermissionOptionId = "allow_once"
	OptionAllowAlways acpsdk.PermissionOptionId = "allow_always"
	OptionRejectOnce  acpsdk.PermissionOptionId = "reject_once"
	// OptionRejectAlways: a question whose answer holds for the session
	// (tool.Question.ForSession).
	OptionRejectAlways acpsdk.PermissionOptionId = "reject_always"
)

// PermissionRequester sends session/request_permission; an
// *acpsdk.AgentSideConnection is one.
type PermissionRequester interface {
	RequestPermission(ctx context.Context, params acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error)
}

// NewAsker is the asker of one tool call of session: it asks the client
// through conn.
func NewAsker(conn PermissionRequester, session acpsdk.SessionId, callID string) tool.Asker {
	return tool.AskerFunc(func(ctx context.Context, q tool.Question) (tool.Answer, error) {
		resp, err := conn.RequestPermission(ctx, PermissionRequest(session, callID, q))
		if err != nil {
			return tool.Answer{}, err
		}
		return PermissionAnswer(resp), nil
	})
}

// PermissionRequest is the session/request_permission of question q about
// the tool call callID: the question's text as the call's content, and the
// options.
func PermissionRequest(session acpsdk.SessionId, callID string, q tool.Question) acpsdk.RequestPermissionRequest {
	title := "Run this command?"
	if q.Title != "" {
		title = q.Title
	}
	options := []acpsdk.PermissionOption{{OptionId: OptionAllowOnce, Kind: acpsdk.PermissionOptionKindAllowOnce, Name: "Allow once"}}
	if q.ForSession {
		options = []acpsdk.PermissionOption{
			{OptionId: OptionAllowAlways, Kind: acpsdk.PermissionOptionKindAllowAlways, Name: "Allow for this session"},
			{OptionId: OptionRejectAlways, Kind: acpsdk.PermissionOptionKindRejectAlways, Name: "Reject for this session"},
		}
		return permissionRequest(session, callID, title, options, q)
	}
	if len(q.Remember) > 0 {
		options = append(options, acpsdk.PermissionOption{
			OptionId: OptionAllowAlways, Kind: acpsdk.PermissionOptionKindAllowAlways, Name: q.RememberTitle(),
		})
	}
	options = append(options, acpsdk.PermissionOption{OptionId: OptionRejectOnce, Kind: acpsdk.PermissionOptionKindRejectOnce, Name: "Reject"})
	return permissionRequest(session, callID, title, options, q)
}

func permissionRequest(session acpsdk.SessionId, callID, title string, options []acpsdk.PermissionOption, q tool.Question) acpsdk.RequestPermissionRequest {
	return acpsdk.RequestPermissionRequest{
		SessionId: session,
		Options:   options,
		ToolCall: acpsdk.ToolCallUpdate{
			ToolCallId: acpsdk.ToolCallId(callID),
			Title:      &title,
			Content:    []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(q.Message))},
		},
	}
}

// PermissionAnswer is what the client's response means.
func PermissionAnswer(resp acpsdk.RequestPermissionResponse) tool.Answer {
	sel := resp.Outcome.Selected
	if sel == nil {
		return tool.Answer{Choice: tool.Dismissed}
	}
	switch sel.OptionId {
	case OptionAllowOnce:
		return tool.Answer{Choice: tool.Accepted}
	case OptionAllowAlways:
		return tool.Answer{Choice: tool.Accepted, Remember: true}
	case OptionRejectOnce, OptionRejectAlways:
		return tool.Answer{Choice: tool.Declined}
	}
	return tool.Answer{Choice: tool.Dismissed}
}
