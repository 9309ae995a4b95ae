package acp

import (
	"encoding/json"
	"slices"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-go/dsh/tool"
)

// Entry is one step of a stored session log: a tool call, or (Result set)
// its result. An agent appends one per call and per result, in the order it
// rendered them, and stores the log with the session.
type Entry struct {
	Name   string `json:"name"`
	CallID string `json:"callId"`
	// Args are the raw arguments as the model sent them: a string, since
	// they need not be valid JSON.
	Args   string        `json:"args,omitempty"`
	Result *StoredResult `json:"result,omitempty"`
}

// StoredResult is what a log keeps of a tool result: what a [Presenter]
// uses of it (Content, IsError and Code; not Structured or Notes), so a
// replay renders what the live session did.
type StoredResult struct {
	Content []tool.Content `json:"content"`
	IsError bool           `json:"isError,omitempty"`
	Code    string         `json:"code,omitempty"`
}

// StoreResult returns what a log keeps of res.
func StoreResult(res tool.Result) *StoredResult {
	return &StoredResult{Content: slices.Clone(res.Content), IsError: res.IsError, Code: res.Code}
}

// Result returns the stored result as a [tool.Result].
func (r *StoredResult) Result() tool.Result {
	return tool.Result{Content: r.Content, IsError: r.IsError, Code: r.Code}
}

// Render renders one log entry: [Presenter.Call] or [Presenter.Result].
func (p *Presenter) Render(e Entry) acpsdk.SessionNotification {
	if e.Result == nil {
		return p.Call(e.Name, e.CallID, json.RawMessage(e.Args))
	}
	return p.Result(e.Name, e.CallID, json.RawMessage(e.Args), e.Result.Result())
}

// Replay renders a stored log through a fresh presenter for session s (a
// loaded session: its capability is the client's now), in order. Replaying
// the whole log from its start renders what the live session rendered (with
// the capability it had).
func Replay(views Views, s Session, log []Entry, onError func(error)) []acpsdk.SessionNotification {
	p := NewPresenter(views, s, onError)
	out := make([]acpsdk.SessionNotification, 0, len(log))
	for _, e := range log {
		out = append(out, p.Render(e))
	}
	return out
}
