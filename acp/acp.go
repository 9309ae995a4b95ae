// Package acp renders dsh's tool calls for the Agent Client Protocol: a Go
// ACP agent hands each tool call and its result to a per-session
// [Presenter] and sends the [acpsdk.SessionNotification] it gets back as a
// session/update (SPEC.md §7).
//
// The views come from the tools' presenters through [Views] (a
// [tool.Registry] is one). A terminal view becomes a terminal card when the
// client advertised clientCapabilities._meta.terminal_output = true (Zed
// draws the command's output as a live terminal): the call carries a
// terminal content block and _meta.terminal_info, the result
// _meta.terminal_output and _meta.terminal_exit and no content (content
// would replace the terminal). Without the capability the result is a
// fenced console block. Anything else is a generic card.
//
// The capability is snapshotted when the presenter is made: make one per
// session when the session is created or loaded. The presenter is a pure
// function of what it was given, so replaying a stored log ([Entry],
// [Replay]) through a fresh presenter renders what the live session
// rendered.
//
// The SDK's types (github.com/coder/acp-go-sdk) carry every field used here,
// _meta included, so the payloads are built from them.
//
// Decisions where SPEC.md is silent:
//   - A result is paired with its call once: the call's state is dropped when
//     its result is rendered, so a second result for the same call id, like
//     a result for an id never announced, gets the generic fallback (the
//     result's text blocks). A client never gets terminal _meta for a
//     terminal it has not seen or that has already exited.
//   - terminal_info.cwd is absolute or absent: the model's relative workdir
//     is resolved against the session cwd, and left out when there is none.
//   - Empty text blocks are left out of generic content, and a generic view
//     kind that ACP does not know is sent as "other".
//   - A result's status is "failed" for an error result, else "completed"
//     (a command that exited non-zero completed; its card shows the code).
package acp

import (
	"encoding/json"
	"path/filepath"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-go/dsh/tool"
)

// Views is where a presenter finds a tool's views. [tool.Registry] is one;
// it looks tools up live, so to replay a log whose tools are no longer
// registered, pass a Views that still knows them.
type Views interface {
	PresentCall(name string, args json.RawMessage) (*tool.View, error)
	PresentResult(name string, args json.RawMessage, res tool.Result) (*tool.View, error)
}

// Session is what a presenter needs to know of its ACP session.
type Session struct {
	ID acpsdk.SessionId
	// Cwd is the session's working directory (absolute), or "".
	Cwd string
	// Capabilities are the client's, from its initialize request.
	Capabilities acpsdk.ClientCapabilities
}

// TerminalOutput reports whether a client advertised terminal cards:
// clientCapabilities._meta.terminal_output === true.
func TerminalOutput(c acpsdk.ClientCapabilities) bool {
	v, ok := c.Meta["terminal_output"].(bool)
	return ok && v
}

// Presenter renders one session's tool calls. It is safe for concurrent use.
type Presenter struct {
	views    Views
	id       acpsdk.SessionId
	cwd      string
	terminal bool
	onError  func(error)

	mu    sync.Mutex
	calls map[string]bool // call id → rendered as a terminal, until its result
}

// NewPresenter returns a presenter for session s, with the capability
// snapshotted now. onError, if not nil, receives presenter panics (the
// card falls back to generic).
func NewPresenter(views Views, s Session, onError func(error)) *Presenter {
	return &Presenter{
		views:    views,
		id:       s.ID,
		cwd:      s.Cwd,
		terminal: TerminalOutput(s.Capabilities),
		onError:  onError,
		calls:    make(map[string]bool),
	}
}

// Call renders a tool call: a tool_call update, status in_progress.
func (p *Presenter) Call(name, callID string, args json.RawMessage) acpsdk.SessionNotification {
	view := p.view(p.views.PresentCall(name, args))
	var u acpsdk.SessionUpdateToolCall
	switch {
	case view != nil && view.Kind == tool.ViewTerminal && view.Terminal != nil:
		u = p.terminalCall(callID, view.Terminal)
	case view != nil && view.Kind == tool.ViewGeneric && view.Generic != nil:
		g := view.Generic
		u = acpsdk.SessionUpdateToolCall{Title: g.Title, Kind: kind(g.Kind), RawInput: g.RawInput, Content: textBlocks(g.Content)}
	default:
		u = acpsdk.SessionUpdateToolCall{Title: name, Kind: acpsdk.ToolKindOther, RawInput: rawInput(args)}
	}
	u.SessionUpdate = "tool_call"
	u.ToolCallId = acpsdk.ToolCallId(callID)
	u.Status = acpsdk.ToolCallStatusInProgress
	p.mu.Lock()
	p.calls[callID] = view != nil && view.Kind == tool.ViewTerminal && view.Terminal != nil
	p.mu.Unlock()
	return p.notification(acpsdk.SessionUpdate{ToolCall: &u})
}

func (p *Presenter) terminalCall(callID string, t *tool.TerminalView) acpsdk.SessionUpdateToolCall {
	u := acpsdk.SessionUpdateToolCall{Title: t.Command, Kind: acpsdk.ToolKindExecute, RawInput: t.Command}
	if t.Description != "" {
		u.Content = append(u.Content, acpsdk.ToolContent(acpsdk.TextBlock(t.Description)))
	}
	if p.terminal {
		u.Content = append(u.Content, acpsdk.ToolTerminalRef(callID))
		info := map[string]any{"terminal_id": callID}
		if cwd := p.terminalCwd(t.Cwd); cwd != "" {
			info["cwd"] = cwd
		}
		u.Meta = map[string]any{"terminal_info": info}
	}
	return u
}

// terminalCwd resolves the model's workdir against the session cwd.
func (p *Presenter) terminalCwd(cwd string) string {
	switch {
	case filepath.IsAbs(cwd):
		return filepath.Clean(cwd)
	case p.cwd == "":
		return ""
	default:
		return filepath.Join(p.cwd, cwd)
	}
}

// Result renders a call's result: a tool_call_update with status completed,
// or failed for an error result.
func (p *Presenter) Result(name, callID string, args json.RawMessage, res tool.Result) acpsdk.SessionNotification {
	p.mu.Lock()
	wasTerminal, known := p.calls[callID]
	delete(p.calls, callID)
	p.mu.Unlock()

	status := acpsdk.ToolCallStatusCompleted
	if res.IsError {
		status = acpsdk.ToolCallStatusFailed
	}
	u := acpsdk.SessionToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallId: acpsdk.ToolCallId(callID), Status: &status}
	var view *tool.View
	if known {
		view = p.view(p.views.PresentResult(name, args, res))
	}
	switch {
	case view != nil && view.Kind == tool.ViewTerminal && view.Terminal != nil && wasTerminal:
		t := view.Terminal
		if p.terminal {
			exit := map[string]any{"terminal_id": callID}
			if t.Signal != "" {
				exit["signal"] = t.Signal
			} else {
				exit["exit_code"] = t.ExitCode
			}
			u.Meta = map[string]any{
				"terminal_output": map[string]any{"terminal_id": callID, "data": t.Output},
				"terminal_exit":   exit,
			}
		} else {
			u.Content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(tool.Fence(t.Output)))}
		}
	case view != nil && view.Kind == tool.ViewGeneric && view.Generic != nil:
		u.Content = textBlocks(view.Generic.Content)
	default:
		u.Content = textBlocks(res.Content)
	}
	return p.notification(acpsdk.SessionUpdate{ToolCallUpdate: &u})
}

// view reports a presenter's panic and passes its view on.
func (p *Presenter) view(v *tool.View, err error) *tool.View {
	if err != nil && p.onError != nil {
		p.onError(err)
	}
	return v
}

func (p *Presenter) notification(u acpsdk.SessionUpdate) acpsdk.SessionNotification {
	return acpsdk.SessionNotification{SessionId: p.id, Update: u}
}

// textBlocks turns text content into ACP content, leaving out empty blocks;
// nil when nothing is left, so the key is omitted.
func textBlocks(content []tool.Content) []acpsdk.ToolCallContent {
	var out []acpsdk.ToolCallContent
	for _, c := range content {
		if c.Text != "" {
			out = append(out, acpsdk.ToolContent(acpsdk.TextBlock(c.Text)))
		}
	}
	return out
}

// rawInput is the generic fallback's rawInput: the parsed arguments, the
// raw string when they are not JSON, {} when there are none.
func rawInput(args json.RawMessage) any {
	if len(args) == 0 {
		return map[string]any{}
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return string(args)
	}
	if v == nil {
		return map[string]any{}
	}
	return v
}

// kind maps a view's kind to ACP's; unknown or empty kinds are "other".
func kind(k string) acpsdk.ToolKind {
	switch tk := acpsdk.ToolKind(k); tk {
	case acpsdk.ToolKindRead, acpsdk.ToolKindEdit, acpsdk.ToolKindDelete, acpsdk.ToolKindMove,
		acpsdk.ToolKindSearch, acpsdk.ToolKindExecute, acpsdk.ToolKindThink, acpsdk.ToolKindFetch,
		acpsdk.ToolKindSwitchMode:
		return tk
	}
	return acpsdk.ToolKindOther
}
