package hooks

import (
	"encoding/json"
	"strconv"

	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// output is the JSON a hook may print (docs/spec.md §10).
type output struct {
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stopReason"`
	// Decision and Reason are the legacy fields: approve | block.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific *struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// specific returns the hook-specific output when it is for event: output
// for another event is ignored.
func (o *output) specific(event string) (s struct {
	decision, reason, context string
	updated                   json.RawMessage
}) {
	if o == nil || o.Specific == nil || o.Specific.HookEventName != "" && o.Specific.HookEventName != event {
		return s
	}
	s.decision, s.reason, s.context = o.Specific.PermissionDecision, o.Specific.PermissionDecisionReason, o.Specific.AdditionalContext
	s.updated = o.Specific.UpdatedInput
	return s
}

// payload is the JSON a hook reads on its stdin (docs/spec.md §10).
type payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	ToolResponse   any             `json:"tool_response,omitempty"`
}

// newPayload is the payload of event for call, run in cwd.
func newPayload(event string, call tool.Call, cwd string) payload {
	return payload{
		SessionID:      sessionID(call.Session),
		Cwd:            cwd,
		PermissionMode: "default",
		HookEventName:  event,
		ToolName:       toolName(call.Name),
		ToolInput:      toolInput(call),
		ToolUseID:      "dsh-" + sessionID(call.Session) + "-" + strconv.FormatUint(call.Seq, 10),
	}
}

// bashInput is the bash tool's tool_input: its arguments as the model
// sent them, under Claude Code's names (timeoutMs is timeout); a key the
// model did not send is left out.
type bashInput struct {
	Command                   string          `json:"command"`
	Description               string          `json:"description"`
	Timeout                   *json.Number    `json:"timeout,omitempty"`
	RunInBackground           json.RawMessage `json:"run_in_background,omitempty"`
	Workdir                   *string         `json:"workdir,omitempty"`
	DangerouslyDisableSandbox json.RawMessage `json:"dangerouslyDisableSandbox,omitempty"`
}

// toolInput is a call's tool_input: the bash tool's arguments under
// Claude Code's names, as the model sent them; another tool's as they are.
func toolInput(call tool.Call) json.RawMessage {
	if call.Name != bashtool.Name {
		if len(call.Args) == 0 {
			return json.RawMessage("{}")
		}
		return call.Args
	}
	a, _ := bashtool.DecodeArgs(call.Args) // validated already
	data, _ := json.Marshal(bashInput{Command: a.Command, Description: a.Description, Timeout: a.TimeoutMs,
		RunInBackground: a.RunInBackground, Workdir: a.Workdir, DangerouslyDisableSandbox: a.DangerouslyDisableSandbox})
	return data
}

// bashResponse is the bash tool's tool_response.
type bashResponse struct {
	Stdout      string  `json:"stdout"`
	Stderr      string  `json:"stderr"`
	Interrupted bool    `json:"interrupted"`
	IsImage     bool    `json:"isImage"`
	ExitCode    *int    `json:"exitCode"`
	Signal      *string `json:"signal"`
	TimedOut    bool    `json:"timedOut"`
	Text        string  `json:"text"`
}

// otherResponse is another tool's tool_response.
type otherResponse struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
}

// toolResponse is the tool_response of a result; interrupted: the call
// was aborted by its caller.
func toolResponse(name string, res tool.Result, interrupted bool) any {
	if name != bashtool.Name {
		return otherResponse{Text: res.Text(), IsError: res.IsError}
	}
	r := bashResponse{Interrupted: interrupted, Text: res.Text()}
	st, ok := res.Structured.(bashtool.Structured)
	if !ok || st.TaskID != "" {
		return r // an error, an abort, a background start or a yield: no exit facts
	}
	r.Stdout, r.Stderr, r.ExitCode, r.TimedOut = st.StdoutText, st.StderrText, st.ExitCode, st.TimedOut
	if st.Signal != "" {
		r.Signal = &st.Signal
	}
	return r
}
