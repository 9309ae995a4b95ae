package acp

import (
	"encoding/json"

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
	Args   string       `json:"args,omitempty"`
	Result *tool.Result `json:"result,omitempty"`
}

// Render renders one log entry: [Presenter.Call] or [Presenter.Result].
func (p *Presenter) Render(e Entry) acpsdk.SessionNotification {
	if e.Result == nil {
		return p.Call(e.Name, e.CallID, json.RawMessage(e.Args))
	}
	return p.Result(e.Name, e.CallID, json.RawMessage(e.Args), *e.Result)
}

// Replay renders a stored log through a fresh presenter for session s (a
// loaded session: its capability is the client's now), in order.
func Replay(views Views, s Session, log []Entry, onError func(error)) []acpsdk.SessionNotification {
	p := NewPresenter(views, s, onError)
	out := make([]acpsdk.SessionNotification, 0, len(log))
	for _, e := range log {
		out = append(out, p.Render(e))
	}
	return out
}
