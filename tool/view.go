package tool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ViewKind says which card a UI should draw.
type ViewKind string

const (
	// ViewGeneric is a titled card with text blocks.
	ViewGeneric ViewKind = "generic"
	// ViewTerminal is a live terminal: a command, its output, its exit.
	ViewTerminal ViewKind = "terminal"
)

// View is what a presenter makes of a call or a result.
type View struct {
	Kind     ViewKind
	Generic  *GenericView  // when Kind is ViewGeneric
	Terminal *TerminalView // when Kind is ViewTerminal
}

// GenericView is a titled card.
type GenericView struct {
	Title string
	// Kind is the UI's category of the tool ("execute", "read", …); empty
	// means "other".
	Kind     string
	RawInput any
	Content  []Content
}

// TerminalView is a terminal card. On a call it carries the command, its
// description and the cwd the model gave (verbatim; empty when none); on a
// result, the raw output and how the command ended.
type TerminalView struct {
	Command     string
	Description string
	Cwd         string

	Output   string
	ExitCode int    // 0 unless the output's final marker says otherwise
	Signal   string // set when the command was killed by a signal
}

// Fence wraps text in a console code block, trailing newlines dropped: how
// a card without a terminal shows a command's output.
func Fence(text string) string {
	return "```console\n" + strings.TrimRight(text, "\n") + "\n```"
}

// Presenters shape what a UI shows of a tool's calls. They get the
// arguments already validated (decoded, numbers as json.Number) and return
// nil for "no view": the UI then falls back to a generic card of its own.
type Presenters struct {
	Call   func(args map[string]any) *View
	Result func(args map[string]any, res Result) *View
}

// PresentCall returns the view of a call, or nil. The arguments are
// soft-validated: invalid ones give no view. A panicking presenter gives no
// view and an error describing the panic, for the front end to report.
func (r *Registry) PresentCall(name string, args json.RawMessage) (*View, error) {
	def, ok := r.Lookup(name)
	if !ok || def.Presenters.Call == nil {
		return nil, nil
	}
	return r.present(def, args, "call presenter", def.Presenters.Call)
}

// PresentResult returns the view of a result, or nil, like PresentCall.
func (r *Registry) PresentResult(name string, args json.RawMessage, res Result) (*View, error) {
	def, ok := r.Lookup(name)
	if !ok || def.Presenters.Result == nil {
		return nil, nil
	}
	return r.present(def, args, "result presenter", func(m map[string]any) *View {
		return def.Presenters.Result(m, res)
	})
}

// present soft-validates args and runs fn, containing a panic.
func (r *Registry) present(def Definition, args json.RawMessage, what string, fn func(map[string]any) *View) (view *View, err error) {
	m, ok := decodeArgs(def, args)
	if !ok {
		return nil, nil
	}
	if err := r.contain(what, func() { view = fn(m) }); err != nil {
		return nil, fmt.Errorf("tool %q: %s: %w", def.Name, what, err)
	}
	return view, nil
}
