package bashtool

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/dsh-go/dsh/session"
)

// Args are the bash tool's arguments as the model sends them (its schema,
// [Parameters]), decoded once by [DecodeArgs] for the tool and for the
// steps before and after it (the command policy, the hooks, the audit
// log), so that none of them can read a call another way. A key the model
// did not send leaves its field nil or empty; keys outside the schema are
// not read.
type Args struct {
	Command     string `json:"command"`
	Description string `json:"description"`
	// TimeoutMs is the timeout as sent, in milliseconds; the tool refuses
	// one that is not a positive finite number.
	TimeoutMs *json.Number `json:"timeoutMs,omitempty"`
	// Workdir is the working directory as sent; nil when not sent. See
	// [Args.ResolveWorkdir].
	Workdir *string `json:"workdir,omitempty"`
	// RunInBackground and DangerouslyDisableSandbox are the JSON values as
	// sent, nil when not sent. Any value: when background execution or
	// leaving the sandbox is disabled the property is not in the schema,
	// so the registry has not checked its type; only the boolean true
	// asks ([Args.Background], [Args.LeavesSandbox]).
	RunInBackground           json.RawMessage `json:"run_in_background,omitempty"`
	DangerouslyDisableSandbox json.RawMessage `json:"dangerouslyDisableSandbox,omitempty"`
	// TTY, Cols and Rows ask for a terminal of that size (docs/spec.md
	// §4.2a); only the boolean true asks ([Args.WantsTTY]).
	TTY  json.RawMessage `json:"tty,omitempty"`
	Cols *json.Number    `json:"cols,omitempty"`
	Rows *json.Number    `json:"rows,omitempty"`
}

// DecodeArgs decodes raw, a bash call's arguments; empty raw is no
// arguments. The registry validated them before any step sees them, so it
// fails only for a call that was not validated (the audit log records
// those too); it then returns every field that has the right type.
func DecodeArgs(raw json.RawMessage) (Args, error) {
	// timeoutMs is read raw: json.Unmarshal stops at a string that is not
	// a number literal for a json.Number, leaving the fields after it.
	var w struct {
		Args
		TimeoutMs json.RawMessage `json:"timeoutMs"`
	}
	if len(raw) == 0 {
		return w.Args, nil
	}
	err := json.Unmarshal(raw, &w)
	a := w.Args
	switch t := w.TimeoutMs; {
	case len(t) == 0 || string(t) == "null":
	case t[0] == '-' || t[0] >= '0' && t[0] <= '9':
		n := json.Number(t)
		a.TimeoutMs = &n
	case err == nil:
		err = fmt.Errorf("timeoutMs: %s is not a number", t)
	}
	return a, err
}

// Background reports whether the call asks to run in the background.
func (a Args) Background() bool { return string(a.RunInBackground) == "true" }

// LeavesSandbox reports whether the call asks to run outside the sandbox
// (docs/spec.md §11); whether it may is the config's and the user's say.
func (a Args) LeavesSandbox() bool { return string(a.DangerouslyDisableSandbox) == "true" }

// ResolveWorkdir is the working directory the command runs in: the
// model's workdir resolved against s's cwd (docs/spec.md §3.3); "" when
// neither gives one, for the executor's default.
func (a Args) ResolveWorkdir(s *session.Session) string {
	cwd := ""
	if s != nil {
		cwd = s.Cwd()
	}
	switch {
	case a.Workdir == nil || *a.Workdir == "":
		return cwd // "" lets the executor apply its default
	case filepath.IsAbs(*a.Workdir) || cwd == "":
		return *a.Workdir
	default:
		return filepath.Join(cwd, *a.Workdir)
	}
}
