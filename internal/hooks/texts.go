package hooks

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/internal/sanitize"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// The model-facing texts of hooks (exact, docs/spec.md §10), after
// "Error: " for the errors.

// A hook's words reach the model as command output does: without escape
// sequences and control characters, with bidi controls and zero-width
// characters shown as escapes (docs/spec.md §3.4).
func textBlocked(reason string) string { return "blocked by hook: " + sanitize.Text(reason) }

func textInvalidInput(err error) string { return "a hook returned invalid input: " + err.Error() }

// note is one PostToolUse reason or additional context, a text block of
// its own after the result.
func note(text string) string { return marker.HookOpen + sanitize.Text(text) }

// logFailure logs a hook that failed: its command, why, the first line of
// its stderr.
func (h *Hooks) logFailure(hd Handler, o outcome) {
	h.failures[eventIndex(hd.Event)].Add(1)
	h.log.Warn("hooks: a hook failed", "event", hd.Event, "command", hd.Command, "why", o.failed, "stderr", o.stderr, "source", hd.Source)
}

// inputNames pairs the bash tool's argument names with their names in a
// hook's tool_input and updatedInput (bashInput's).
var inputNames = [][2]string{
	{"command", "command"}, {"description", "description"}, {"timeoutMs", "timeout"},
	{"run_in_background", "run_in_background"}, {"workdir", "workdir"},
	{"dangerouslyDisableSandbox", "dangerouslyDisableSandbox"},
}

// updatedArgs are the arguments a hook's updatedInput makes of call's.
// For the bash tool, Claude Code's names map back to dsh's (timeout is
// timeoutMs); description and workdir keep the model's values when the
// hook leaves them out, every other key it leaves out is dropped.
func updatedArgs(call tool.Call, updated json.RawMessage) (json.RawMessage, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(updated, &in); err != nil || in == nil {
		return nil, errors.New(`"updatedInput" must be an object`)
	}
	if call.Name != bashtool.Name {
		return updated, nil
	}
	model, _ := bashtool.DecodeArgs(call.Args)
	out := make(map[string]json.RawMessage, len(in))
	for _, n := range inputNames {
		if v, ok := in[n[1]]; ok {
			out[n[0]] = v
		}
	}
	// What the hook leaves out of these two keeps the model's value.
	if _, ok := out["description"]; !ok {
		out["description"], _ = json.Marshal(model.Description)
	}
	if _, ok := out["workdir"]; !ok && model.Workdir != nil {
		out["workdir"], _ = json.Marshal(*model.Workdir)
	}
	return json.Marshal(out)
}

// validate checks args against the named tool's schema.
func validate(reg *tool.Registry, name string, args json.RawMessage) (map[string]any, error) {
	def, ok := reg.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", name)
	}
	return tool.Validate(def.Parameters, args)
}

// by names a handler in a call's ruling: `hook: COMMAND (SOURCE)`.
func (hd Handler) by() string { return "hook: " + hd.Command + " (" + hd.Source + ")" }

// byCancelled is the ruling's By of a call cancelled while its hooks ran.
const byCancelled = "cancelled while the hooks ran"

// Failures counts the hooks of event (PreToolUse, PostToolUse) that failed
// (a non-zero exit other than 2, a timeout, a signal, output that is not
// JSON) since h was made, for metrics.
func (h *Hooks) Failures(event string) uint64 { return h.failures[eventIndex(event)].Load() }

func eventIndex(event string) int {
	if event == PostToolUse {
		return 1
	}
	return 0
}
