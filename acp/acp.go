// Package acp renders dsh's tool calls for the Agent Client Protocol: a Go
// ACP agent hands each tool call and its result to a per-session
// [Presenter] and sends the [acpsdk.SessionNotification] it gets back as a
// session/update (docs/spec.md §7).
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
// session when the session is created or loaded. Besides the session (id,
// cwd, capability), a presenter keeps one bit per call, from its call to
// its result: whether the call was rendered as a terminal. Everything else
// in a payload comes from the tool name, call id and arguments, the
// result's Content, IsError and Code, and the views the tools' presenters
// make of them. So replaying a session's whole stored log ([Entry],
// [Replay]) in order through a fresh presenter for the same session renders
// the payloads the live session rendered.
//
// The SDK's types (github.com/coder/acp-go-sdk) carry every field used here,
// _meta included, so the payloads are built from them. Mind how the SDK
// (v0.13.0) encodes them: SessionUpdate.MarshalJSON marshals the update's
// variant, unmarshals that into a map[string]any, sets "sessionUpdate" and
// marshals the map again. On the wire the update's keys therefore come out
// sorted, and every number in it passes through float64: an integer in
// rawInput beyond 2^53 may lose digits there, though the fallback's
// RawInput in the notification keeps them (a [json.Number]).
//
// A long bash call does not yield to the background in an ACP agent unless
// the agent allows it (docs/spec.md §12): it calls
// tool.AllowYield(ctx, arrived) on the call's context before
// [tool.Registry.Execute]. A yielded result is a generic card.
//
// Decisions where docs/spec.md is silent:
//   - A result is paired with its call once: the call's state is dropped when
//     its result is rendered, so a second result for the same call id, like
//     a result for an id never announced (or forgotten, [Presenter.Forget]),
//     gets the generic fallback (the result's text blocks). A client never
//     gets terminal _meta for a terminal it has not seen or that has already
//     exited.
//   - terminal_info.cwd is absolute or absent: an absolute workdir is sent
//     verbatim (the bash tool runs it as given), a relative one is joined to
//     the session cwd, no workdir is the session cwd; a session cwd that is
//     empty or relative counts as none, and then a relative or missing
//     workdir leaves cwd out.
//   - A blank title (empty or white space) is the tool name; a terminal
//     card's rawInput stays the command.
//   - A generic view whose rawInput cannot be marshalled as JSON gets the
//     generic fallback, and the error goes to the error hook.
//   - The fallback's rawInput keeps numbers as written ([json.Number]), and
//     arguments of only white space count as none ({}).
//   - Empty text blocks are left out of generic content, and a generic view
//     kind that ACP does not know is sent as "other".
//   - A result's status is "failed" for an error result, else "completed"
//     (a command that exited non-zero completed; its card shows the code).
package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-go/dsh/internal/safe"
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
	// Cwd is the session's working directory (absolute), or "". A relative
	// one counts as none.
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
//
// A presenter keeps a call's state (whether it became a terminal) from
// [Presenter.Call] until [Presenter.Result] for the same call id, so a call
// must be rendered before its result. The state of a call that will never
// get a result (a cancelled turn that renders none) stays until
// [Presenter.Forget] drops it, or for the presenter's life.
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
// snapshotted now. onError, if not nil, receives presenter panics and
// rawInputs that cannot be marshalled (the card falls back to generic).
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
	terminal := false
	switch {
	case view != nil && view.Kind == tool.ViewTerminal && view.Terminal != nil:
		u, terminal = p.terminalCall(callID, view.Terminal), true
	case view != nil && view.Kind == tool.ViewGeneric && view.Generic != nil && p.marshals(name, view.Generic.RawInput):
		g := view.Generic
		u = acpsdk.SessionUpdateToolCall{Title: g.Title, Kind: kind(g.Kind), RawInput: g.RawInput, Content: textBlocks(g.Content)}
	default:
		u = acpsdk.SessionUpdateToolCall{Title: name, Kind: acpsdk.ToolKindOther, RawInput: rawInput(args)}
	}
	if blank(u.Title) {
		u.Title = name
	}
	u.SessionUpdate = "tool_call"
	u.ToolCallId = acpsdk.ToolCallId(callID)
	u.Status = acpsdk.ToolCallStatusInProgress
	p.mu.Lock()
	p.calls[callID] = terminal
	p.mu.Unlock()
	return p.notification(acpsdk.SessionUpdate{ToolCall: &u})
}

// Forget drops the state of a call that will never get a result (a
// cancelled turn), so it does not stay for the presenter's life. A result
// for callID after Forget is rendered as for an unknown call id. Forget is
// not part of a stored log: forget only calls that get no result.
func (p *Presenter) Forget(callID string) {
	p.mu.Lock()
	delete(p.calls, callID)
	p.mu.Unlock()
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

// terminalCwd is the terminal's cwd: an absolute workdir verbatim (the
// bash tool runs it as given), a relative one joined to the session cwd,
// none the session cwd; "" when that leaves no absolute path.
func (p *Presenter) terminalCwd(workdir string) string {
	switch {
	case filepath.IsAbs(workdir):
		return workdir
	case !filepath.IsAbs(p.cwd):
		return ""
	case workdir == "":
		return p.cwd
	default:
		return filepath.Join(p.cwd, workdir)
	}
}

// Result renders a call's result: a tool_call_update with status completed,
// or failed for an error result. The tool's result presenter sees only the
// result's Content, IsError and Code (what a [StoredResult] keeps), so a
// replayed log renders the same.
func (p *Presenter) Result(name, callID string, args json.RawMessage, res tool.Result) acpsdk.SessionNotification {
	res = tool.Result{Content: res.Content, IsError: res.IsError, Code: res.Code}
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
	p.report(err)
	return v
}

func (p *Presenter) report(err error) {
	if err != nil && p.onError != nil {
		p.onError(err)
	}
}

// marshals reports whether a view's rawInput marshals as JSON (the
// update would not otherwise), reporting the error when it does not.
func (p *Presenter) marshals(name string, v any) bool {
	var err error
	// The error hook is where this package reports: nothing goes to a log.
	if perr := safe.Call(quiet, "acp: marshalling rawInput", func() { _, err = json.Marshal(v) }, "tool", name); perr != nil {
		err = fmt.Errorf("panic: %w", perr)
	}
	if err != nil {
		p.report(fmt.Errorf("tool %q: call view: rawInput cannot be marshalled: %w", name, err))
		return false
	}
	return true
}

func (p *Presenter) notification(u acpsdk.SessionUpdate) acpsdk.SessionNotification {
	return acpsdk.SessionNotification{SessionId: p.id, Update: u}
}

// quiet is the logger of contained panics, which go to the error hook.
var quiet = slog.New(slog.DiscardHandler)

// blank reports whether a title is empty or only white space.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

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

// rawInput is the generic fallback's rawInput: the parsed arguments
// (numbers as written), the raw string when they are not JSON, {} when
// there are none (empty, only white space, or null).
func rawInput(args json.RawMessage) any {
	if len(bytes.Trim(args, " \t\r\n")) == 0 {
		return map[string]any{}
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(args)
	}
	if _, err := dec.Token(); err != io.EOF {
		return string(args) // trailing data
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
