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
	var model map[string]json.RawMessage
	_ = call.Decode(&model)
	out := make(map[string]json.RawMessage, len(in))
	for _, n := range bashInputNames {
		if v, ok := in[n[1]]; ok {
			out[n[0]] = v
		} else if v, ok := model[n[0]]; ok && (n[0] == "description" || n[0] == "workdir") {
			out[n[0]] = v
		}
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
