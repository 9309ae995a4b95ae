// Package tasktool gives the model its handles on background tasks: the
// tools task_output, task_list and task_kill over a [tasks.Service], the
// tool:tasks prompt section, and the finish notices that tell a session
// that one of its tasks ended (SPEC.md §4.2, §4.3).
//
// [host.TaskTools] wires it all into a host once the task runtime, the tool
// registry and the prompt are provided; while it is applied the service
// accepts new tasks (it is attached, [Start]), and it posts the notices.
//
// Texts the model reads (exact; SPEC.md):
//
//	task_output  <read text or "(no new output)">\n[status: <status>, <detail>]
//	task_list    <id> [<kind>] <status> — <label>     one line per task, or "(no background tasks)"
//	task_kill    requested cancellation of task <id>
//	             task <id> had already finished [status: …]
//	notice       background task <id> (<kind>: <label>) finished [status: …]. Read its output with task_output.
//
// Decisions where SPEC.md is silent:
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
//     and logged at info level. Notices are keyed by task id: one still
//     waiting for delivery when the model reads or kills the finished task
//     is withdrawn, since it would only repeat what the model just saw.
//   - Presenters: generic cards titled "Read <id>", "List background tasks"
//     and "Kill <id>", of kinds read, read and other. A task_output result
//     is shown as a console block (it is program output); the other results
//     as their text.
//   - Error codes: TASK_UNKNOWN, TASK_FORBIDDEN, TASK_WAIT_ABORTED,
//     TASK_KILL_FAILED, and INVALID_ARGS for a blank id or a bad timeout.
package tasktool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// Defaults of Config.
const (
	DefaultWaitTimeoutMs    = 30000
	DefaultMaxWaitTimeoutMs = 600000
)

// Config is the tool-tasks section of the configuration. Zero values take
// the defaults.
type Config struct {
	// WaitTimeoutMs is how long task_output waits when the model gives no
	// timeout_ms. Default 30000.
	WaitTimeoutMs float64 `yaml:"waitTimeoutMs,omitempty"`
	// MaxWaitTimeoutMs caps every wait. Default 600000.
	MaxWaitTimeoutMs float64 `yaml:"maxWaitTimeoutMs,omitempty"`
}

// WithDefaults returns c with its zero values set to the defaults.
func (c Config) WithDefaults() Config {
	if c.WaitTimeoutMs == 0 {
		c.WaitTimeoutMs = DefaultWaitTimeoutMs
	}
	if c.MaxWaitTimeoutMs == 0 {
		c.MaxWaitTimeoutMs = DefaultMaxWaitTimeoutMs
	}
	return c
}

// Validate refuses a negative, NaN or infinite value
// ("tool-tasks: <key> must be a positive finite number") and a default wait
// longer than the cap, after defaulting (exact:
// "tool-tasks: waitTimeoutMs (<d>) exceeds maxWaitTimeoutMs (<c>)", numbers
// as JSON writes them: 30000, 1.5).
func (c Config) Validate() error {
	for _, kv := range []struct {
		key string
		v   float64
	}{{"waitTimeoutMs", c.WaitTimeoutMs}, {"maxWaitTimeoutMs", c.MaxWaitTimeoutMs}} {
		if kv.v != 0 && !(kv.v > 0 && !math.IsInf(kv.v, 1)) {
			return fmt.Errorf("tool-tasks: %s must be a positive finite number", kv.key)
		}
	}
	d := c.WithDefaults()
	if d.WaitTimeoutMs > d.MaxWaitTimeoutMs {
		return fmt.Errorf("tool-tasks: waitTimeoutMs (%s) exceeds maxWaitTimeoutMs (%s)",
			number(d.WaitTimeoutMs), number(d.MaxWaitTimeoutMs))
	}
	return nil
}

// number renders a finite v as JSON does.
func number(v float64) string {
	b, err := json.Marshal(v)
	if err != nil {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return string(b)
}

// Error codes of the task tools' error results.
const (
	CodeUnknownTask = "TASK_UNKNOWN"
	CodeForbidden   = "TASK_FORBIDDEN"
	CodeWaitAborted = "TASK_WAIT_ABORTED"
	CodeKillFailed  = "TASK_KILL_FAILED"
)

// The prompt section's name and place.
const (
	SectionName  = "tool:tasks"
	SectionOrder = 106
)

// Texts and limits of the renderings.
const (
	noTasksText      = "(no background tasks)"
	noNewOutputText  = "(no new output)"
	noticeReadOutput = ". Read its output with task_output."
	maxLabelRunes    = 120
	labelEllipsis    = "…"
	listTitle        = "List background tasks"
	readTitlePrefix  = "Read "
	killTitlePrefix  = "Kill "
)

// SectionText is the tool:tasks prompt section.
const SectionText = `Background tasks: keep track of the task ids you start. You are told when a task finishes, so do not poll task_output or sleep while waiting. Collect the output of the tasks you need with task_output (wait: true only when you cannot go on without the result), and task_kill the ones that stopped mattering before your final answer.`

// StatusLine renders "[status: <status>, <detail>]", or "[status: <status>]"
// when there is no detail (exact).
func StatusLine(s tasks.Snapshot) string {
	if s.Detail == "" {
		return "[status: " + string(s.Status) + "]"
	}
	return "[status: " + string(s.Status) + ", " + s.Detail + "]"
}

// Notice is the finish notice of s for its owner (exact, one line):
// "background task <id> (<kind>: <label>) finished <status line>. Read its
// output with task_output.", with the label shortened by ShortLabel.
func Notice(s tasks.Snapshot) string {
	return "background task " + s.ID + " (" + s.Kind + ": " + ShortLabel(s.Label) + ") finished " +
		StatusLine(s) + noticeReadOutput
}

// ShortLabel renders a label on one bounded line: whitespace runs (line
// breaks included) become one space, the ends are trimmed, and a label
// longer than 120 characters is cut to 119 and ends in "…". It reads no more
// of a huge label than it shows.
func ShortLabel(label string) string {
	out := make([]rune, 0, 32)
	pendingSpace := false
	for _, r := range label {
		if unicode.IsSpace(r) {
			pendingSpace = len(out) > 0
			continue
		}
		if pendingSpace {
			out = append(out, ' ')
			pendingSpace = false
		}
		out = append(out, r)
		if len(out) > maxLabelRunes {
			kept := strings.TrimRight(string(out[:maxLabelRunes-1]), " ")
			return kept + labelEllipsis
		}
	}
	return string(out)
}

// listLine renders one task of task_list.
func listLine(s tasks.Snapshot) string {
	return s.ID + " [" + s.Kind + "] " + string(s.Status) + " — " + ShortLabel(s.Label)
}

// outputText renders task_output's text.
func outputText(text string, s tasks.Snapshot) string {
	if text == "" {
		text = noNewOutputText
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + StatusLine(s)
}

func killText(res tasks.KillResult, s tasks.Snapshot) string {
	if res == tasks.KillAlreadyTerminal {
		return "task " + s.ID + " had already finished " + StatusLine(s)
	}
	return "requested cancellation of task " + s.ID
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
	}
	return &tool.Error{Code: code, Message: err.Error()}
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

// Definitions returns task_output, task_list and task_kill over svc. cfg
// should be valid (see Validate); its zero values take the defaults.
func Definitions(svc *tasks.Service, cfg Config) []tool.Definition {
	cfg = cfg.WithDefaults()
	defaultMs, maxMs := math.Min(cfg.WaitTimeoutMs, cfg.MaxWaitTimeoutMs), cfg.MaxWaitTimeoutMs
	idProperty := &jsonschema.Schema{Type: "string", Description: "The id of the task, e.g. bash-1."}

	output := tool.Definition{
		Name: "task_output",
		Description: fmt.Sprintf("Read a background task's new output (what arrived since your last read) and its status. "+
			"wait: true blocks until the task finishes or timeout_ms passes (default %s, at most %s); use it only when you are blocked on the result.",
			number(defaultMs), number(maxMs)),
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"task_id":    idProperty,
				"wait":       {Type: "boolean", Description: "Wait for the task to finish first."},
				"timeout_ms": {Type: "number", Description: "How long to wait, in milliseconds."},
			},
			PropertyOrder: []string{"task_id", "wait", "timeout_ms"},
			Required:      []string{"task_id"},
		},
		Annotations:  tool.Annotations{ReadOnly: true},
		OutputSchema: snapshotSchema,
		Execute: func(ctx context.Context, call tool.Call) (tool.Result, error) {
			id, err := taskID(call)
			if err != nil {
				return tool.Result{}, err
			}
			var args struct {
				Wait      bool        `json:"wait"`
				TimeoutMs json.Number `json:"timeout_ms"`
			}
			if err := call.Decode(&args); err != nil {
				return tool.Result{}, err
			}
			if args.Wait {
				ms := defaultMs
				if args.TimeoutMs != "" {
					// Out of float64 range parses as ±Inf: +Inf is capped
					// below; -Inf is refused with the text the model sent.
					ms, _ = strconv.ParseFloat(string(args.TimeoutMs), 64)
					if !(ms > 0) {
						return tool.Result{}, toolError(tasks.InvalidWaitTimeout(string(args.TimeoutMs)))
					}
				}
				if _, err := svc.Wait(ctx, call.Session, id, math.Min(ms, maxMs)); err != nil {
					return tool.Result{}, toolError(err)
				}
			}
			text, snap, err := svc.Read(call.Session, id)
			if err != nil {
				return tool.Result{}, toolError(err)
			}
			withdrawStale(call.Session, snap)
			res := tool.TextResult(outputText(text, snap))
			res.Structured = snap
			return res, nil
		},
		Presenters: presenters("read", readTitlePrefix, true),
	}

	list := tool.Definition{
		Name:        "task_list",
		Description: "List your background tasks: id, kind, status and label (a bash task's command).",
		Parameters:  &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
		Annotations: tool.Annotations{ReadOnly: true},
		Execute: func(_ context.Context, call tool.Call) (tool.Result, error) {
			snaps := svc.List(call.Session)
			if len(snaps) == 0 {
				return tool.TextResult(noTasksText), nil
			}
			lines := make([]string, len(snaps))
			for i, s := range snaps {
				lines[i] = listLine(s)
			}
			return tool.TextResult(strings.Join(lines, "\n")), nil
		},
		Presenters: presenters("read", "", false),
	}

	kill := tool.Definition{
		Name:        "task_kill",
		Description: "Stop a background task. A task that already finished is left as it is.",
		Parameters: &jsonschema.Schema{
			Type:          "object",
			Properties:    map[string]*jsonschema.Schema{"task_id": idProperty},
			PropertyOrder: []string{"task_id"},
			Required:      []string{"task_id"},
		},
		Execute: func(_ context.Context, call tool.Call) (tool.Result, error) {
			id, err := taskID(call)
			if err != nil {
				return tool.Result{}, err
			}
			res, snap, err := svc.Kill(call.Session, id)
			if err != nil {
				if errors.Is(err, tasks.ErrUnknown) || errors.Is(err, tasks.ErrForbidden) {
					return tool.Result{}, toolError(err)
				}
				return tool.Result{}, &tool.Error{Code: CodeKillFailed, Message: err.Error()}
			}
			withdrawStale(call.Session, snap)
			return tool.TextResult(killText(res, snap)), nil
		},
		Presenters: presenters("other", killTitlePrefix, false),
	}
	return []tool.Definition{output, list, kill}
}

// presenters returns generic card presenters. titlePrefix "" means the
// list card; console shows the result as program output.
func presenters(kind, titlePrefix string, console bool) tool.Presenters {
	title := func(args map[string]any) string {
		if titlePrefix == "" {
			return listTitle
		}
		id, _ := args["task_id"].(string)
		if id = strings.TrimSpace(id); id == "" {
			id = "task"
		}
		return titlePrefix + id
	}
	return tool.Presenters{
		Call: func(args map[string]any) *tool.View {
			return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: title(args), Kind: kind, RawInput: args}}
		},
		Result: func(args map[string]any, res tool.Result) *tool.View {
			var content []tool.Content
			for _, c := range res.Content {
				if c.Type != "text" {
					continue
				}
				if console && !res.IsError {
					c = tool.TextContent("```console\n" + strings.TrimRight(c.Text, "\n") + "\n```")
				}
				content = append(content, c)
			}
			return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: title(args), Kind: kind, RawInput: args, Content: content}}
		},
	}
}

// Section returns the tool:tasks prompt section.
func Section() prompt.Section {
	return prompt.Section{Name: SectionName, Order: SectionOrder, Text: SectionText}
}

// notifier returns the finish listener: it tells an owner about a task it
// has not learnt the end of. A read or kill of the task can land between
// the snapshot the listener got and the notice being queued; it withdraws
// nothing then, so the listener looks again after queueing and withdraws
// the notice itself when the task has been reported meanwhile.
func notifier(svc *tasks.Service) func(tasks.Snapshot, *session.Session) {
	return func(s tasks.Snapshot, owner *session.Session) {
		if owner == nil || s.Reported {
			return
		}
		if !owner.NotifyKey(s.ID, Notice(s)) {
			slog.Info("tool-tasks: finish notice dropped: the session has ended", "task", s.ID, "session", owner.ID())
			return
		}
		if now, err := svc.Get(owner, s.ID); err != nil || now.Reported {
			owner.Withdraw(s.ID)
		}
	}
}

// snapshotSchema describes task_output's structured result, the task
// snapshot (MCP outputSchema).
var snapshotSchema = func() *jsonschema.Schema {
	s, err := jsonschema.For[tasks.Snapshot](nil)
	if err != nil {
		panic(err)
	}
	return s
}()

// withdrawStale withdraws a queued finish notice of a task the model has
// just seen finished (read or killed after it ended): SPEC.md §4.3 sends no
// notice for a task read after it finished, and one still waiting for
// delivery would now only repeat what the model knows.
func withdrawStale(s *session.Session, snap tasks.Snapshot) {
	if s != nil && snap.Status.Terminal() {
		s.Withdraw(snap.ID)
	}
}

// PluginName is the name of the tools' host plugin ([host.TaskTools])
// and of their config section.
const PluginName = "tool-tasks"

// Start attaches the task tools to svc (it accepts new tasks) and posts
// the finish notices; the returned func stops both. [host.TaskTools] calls
// it when the tools are applied.
func Start(svc *tasks.Service) (stop func()) {
	detach := svc.AttachTools()
	stopNotices := svc.OnFinish(notifier(svc))
	return func() {
		stopNotices()
		detach()
	}
}
