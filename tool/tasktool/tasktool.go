// Package tasktool gives the model its handles on background tasks: the
// tools task_output, task_list and task_kill over a [tasks.Service], the
// tool:tasks prompt section, and the finish notices that tell a session
// that one of its tasks ended (docs/spec.md §4.2, §4.3).
//
// host.Standard registers [Definitions] and [Section] and calls [Start]:
// from then on the service accepts new tasks (it is attached) and the
// notices are posted, until the stop function Start returns is called.
//
// Texts the model reads (exact; docs/spec.md):
//
//	task_output  <read text or "(no new output)">\n[still running after <N> ms]?\n[status: <status>, <detail>]
//	             (the still-running line when a wait ran out before the task ended)
//	task_list    <id> [<kind>] <status> — <label>     one line per task, or "(no background tasks)";
//	             <kind> is "bash, tty 80x24" for a task with a terminal
//	task_input   <new output or "(no new output)">\n[waitFor: no match after <N> ms]?\n[status: …]
//	task_kill    requested cancellation of task <id>
//	             task <id> had already finished [status: …]
//	notice       background task <id> (<kind>: <label>) finished [status: …]. Read its output with task_output.
//
// Decisions where docs/spec.md is silent:
//   - Labels are full commands: multi-line, possibly huge. Lists and notices
//     show [ShortLabel]: whitespace runs (newlines included) collapsed to one
//     space, the ends trimmed, at most 120 characters, the last being "…"
//     when it was cut. The task keeps its full label (task_output's
//     structured snapshot carries it).
//   - task_id is trimmed of surrounding whitespace before use; a blank one is
//     refused, quoting what the model sent.
//   - task_output waits only with wait: true; timeout_ms is then clamped to
//     maxWaitTimeoutMs (silently, like the executor's timeouts), and a value
//     that is not positive is the runtime's exact error. timeout_ms without
//     wait is ignored.
//   - A notice is posted to the owner's inbox when an owned task settles
//     unreported (see package tasks for what reports a task); unowned tasks
//     have nobody to tell. A notice for a session that has ended is dropped
//     and logged at info level, on the service's logger
//     ([tasks.Service.Logger]). Notices are keyed by task id: one still
//     waiting for delivery when the model reads or kills the finished task
//     is withdrawn, since it would only repeat what the model just saw.
//   - Presenters: generic cards titled "Read <id>", "List background tasks"
//     and "Kill <id>", of kinds read, read and other. A task_output result
//     is shown as a console block (it is program output); the other results
//     as their text.
//   - Error codes: TASK_UNKNOWN, TASK_FORBIDDEN, TASK_WAIT_ABORTED,
//     TASK_KILL_FAILED, TASK_NO_TERMINAL, TASK_FINISHED, and INVALID_ARGS
//     for a blank id, a bad timeout, a bad pattern, a key or input too long.
//   - waitFor and screen (docs/spec.md §4.2a): the timeout keeps the task
//     tools' name, timeout_ms; with waitFor it defaults to 5 s, capped by
//     maxWaitTimeoutMs. A wait parks on the task's next output or its end
//     (tasks.Service.Changed), never on a fixed delay; the new output it
//     reads is kept across reads and matched as the model reads it
//     (escape sequences removed, redacted). A wait that ends unmatched, at
//     the timeout or the task's end, says so in its no-match line.
//   - task_input types text then keys, as one write, and without waitFor
//     returns once the output has been quiet for 300 ms (at most 5 s, or
//     timeout_ms if shorter). Its card is "Type into <id>", of kind
//     execute; a task_output with screen: true is a terminal card titled
//     "Screen of <id>" whose output is the screen.
//   - A screen read does not consume output and does not mark a finished
//     task reported.
package tasktool

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// prefix names the task tools in their config errors and log lines
// ("tool-tasks: …", docs/spec.md §4.2).
const prefix = "tool-tasks"

// Start attaches the task tools to svc (it accepts new tasks) and posts
// the finish notices; the returned func stops both. Call it once the
// tools are registered, and stop before closing svc.
func Start(svc *tasks.Service) (stop func()) {
	detach := svc.AttachTools()
	stopNotices := svc.OnFinish(notifier(svc))
	return func() {
		stopNotices()
		detach()
	}
}

// Definitions returns task_output, task_list and task_kill over svc. cfg
// should be valid (see [config.Tasks.Validate]); its zero values take the
// defaults.
func Definitions(svc *tasks.Service, cfg config.Tasks) []tool.Definition {
	cfg = cfg.WithDefaults()
	// The default wait never exceeds the cap, even with a cfg not validated.
	def := min(cfg.WaitTimeout, cfg.MaxWaitTimeout)
	return []tool.Definition{
		outputDefinition(svc, def, cfg.MaxWaitTimeout),
		listDefinition(svc), killDefinition(svc),
		inputDefinition(svc, min(waitForDefault, cfg.MaxWaitTimeout), cfg.MaxWaitTimeout),
	}
}

// Error codes of the task tools' error results.
const (
	CodeUnknownTask = "TASK_UNKNOWN"
	CodeForbidden   = "TASK_FORBIDDEN"
	CodeWaitAborted = "TASK_WAIT_ABORTED"
	CodeKillFailed  = "TASK_KILL_FAILED"
	CodeNoTerminal  = "TASK_NO_TERMINAL"
	CodeFinished    = "TASK_FINISHED"
)

// idProperty is the task_id parameter of task_output and task_kill.
func idProperty() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string"}
}

// taskID decodes and checks the task_id argument.
func taskID(call tool.Call) (string, error) {
	var args struct {
		TaskID string `json:"task_id"`
	}
	if err := call.Decode(&args); err != nil {
		return "", err
	}
	id := strings.TrimSpace(args.TaskID)
	if id == "" {
		return "", blankIDError(args.TaskID)
	}
	return id, nil
}

// blankIDError is the exact error for a blank task_id; raw is what the
// model sent.
func blankIDError(raw string) error {
	quoted, _ := json.Marshal(raw)
	return &tool.Error{Code: tool.CodeInvalidArgs, Message: "invalid task_id: expected a non-empty string, got " + string(quoted)}
}

// toolError gives a runtime error its code; the text stays exact.
func toolError(err error) error {
	code := tool.CodeFailed
	switch {
	case errors.Is(err, tasks.ErrUnknown):
		code = CodeUnknownTask
	case errors.Is(err, tasks.ErrForbidden):
		code = CodeForbidden
	case errors.Is(err, tasks.ErrInvalidTimeout):
		code = tool.CodeInvalidArgs
	case errors.Is(err, tasks.ErrWaitAborted):
		code = CodeWaitAborted
	case errors.Is(err, tasks.ErrNoTerminal):
		code = CodeNoTerminal
	case errors.Is(err, tasks.ErrFinished):
		code = CodeFinished
	}
	return &tool.Error{Code: code, Message: err.Error()}
}
