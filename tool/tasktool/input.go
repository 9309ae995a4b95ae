package tasktool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/bash/term"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// InputName is the name of the tool that types into a task's terminal.
const InputName = "task_input"

// MaxInputBytes bounds what one task_input types (docs/spec.md §4.2a).
const MaxInputBytes = 64 << 10

// The exact errors of task_input.
const errNothingToType = "nothing to type: send text, keys or both"

func inputTooLong(n int) string {
	return "input too long: " + strconv.Itoa(n) + " bytes, at most " + strconv.Itoa(MaxInputBytes)
}

func notRead(id string, d time.Duration) string {
	return "task " + id + " did not read all of its input within " + strconv.FormatInt(d.Milliseconds(), 10) + " ms"
}

// input is task_input over svc: def is the wait without timeout_ms, max
// caps every wait.
type input struct {
	svc      *tasks.Service
	def, max time.Duration
}

// InputArgs are task_input's arguments as the model sends them, decoded
// by the tool and by the permissions gate alike.
type InputArgs struct {
	TaskID  string   `json:"task_id"`
	Text    string   `json:"text"`
	Keys    []string `json:"keys"`
	WaitFor string   `json:"waitFor"`
}

func inputDefinition(svc *tasks.Service, def, max time.Duration) tool.Definition {
	in := input{svc: svc, def: def, max: max}
	return tool.Definition{
		Name:        InputName,
		Description: "Type into a tty task, then return its new output once it matches waitFor (RE2) or is quiet for 300ms.",
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"task_id":    idProperty(),
				"text":       {Type: "string"},
				"keys":       {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "After text: " + term.KeyList + "."},
				"waitFor":    {Type: "string"},
				"timeout_ms": {Type: "number"},
			},
			PropertyOrder: []string{"task_id", "text", "keys", "waitFor", "timeout_ms"},
			Required:      []string{"task_id"},
		},
		OutputSchema: snapshotSchema(),
		// What is typed may do anything a command can.
		Annotations: tool.Annotations{Destructive: true, OpenWorld: true},
		Execute:     in.execute,
		Presenters:  presenters("execute", inputTitlePrefix, true),
	}
}

func (in input) execute(ctx context.Context, call tool.Call) (tool.Result, error) {
	id, err := taskID(call)
	if err != nil {
		return tool.Result{}, err
	}
	var args struct {
		InputArgs
		TimeoutMs    json.Number `json:"timeout_ms"`
		TimeoutAlias json.Number `json:"timeoutMs"` // as task_output
	}
	if err := call.Decode(&args); err != nil {
		return tool.Result{}, err
	}
	if args.TimeoutMs == "" {
		args.TimeoutMs = args.TimeoutAlias
	}
	timeout, re, err := in.check(args.InputArgs, args.TimeoutMs)
	if err != nil {
		return tool.Result{}, err
	}
	p, err := in.bytes(call, id, args.InputArgs)
	if err != nil {
		return tool.Result{}, err
	}
	w := watch{svc: in.svc, caller: call.Session, id: id, start: time.Now()}
	if _, err := in.svc.Input(call.Session, id, p, w.start.Add(timeout)); err != nil {
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			err = errors.New(notRead(id, timeout))
		case errors.Is(err, os.ErrClosed): // it ended before it was settled
			err = tasks.FinishedError(id)
		}
		return tool.Result{}, toolError(err)
	}
	var s seen
	if re != nil {
		s, err = w.output(ctx, re, timeout)
	} else {
		s, err = w.quiet(ctx, min(timeout, quietMax))
	}
	if err != nil {
		return tool.Result{}, toolError(err)
	}
	res := tool.TextResult(seenText(s, noNewOutputText))
	res.Structured = s.snap
	return res, nil
}

// check checks what needs no task: something to type, the pattern, the
// timeout.
func (in input) check(a InputArgs, rawTimeout json.Number) (time.Duration, *regexp.Regexp, error) {
	if a.Text == "" && len(a.Keys) == 0 {
		return 0, nil, &tool.Error{Code: tool.CodeInvalidArgs, Message: errNothingToType}
	}
	re, err := compileWaitFor(a.WaitFor)
	if err != nil {
		return 0, nil, err
	}
	timeout, err := waitTimeout(rawTimeout, in.def, in.max)
	return timeout, re, err
}

// bytes is what the call types: text, then the keys encoded for the
// task's terminal.
func (in input) bytes(call tool.Call, id string, a InputArgs) ([]byte, error) {
	term, _, err := in.svc.Terminal(call.Session, id)
	if err != nil {
		return nil, toolError(err)
	}
	return InputBytes(a, term.Keys)
}

// InputBytes checks a task_input call's arguments as the tool does, but
// for the task and the timeout, and returns what it types: text, then
// the keys as keys encodes them. The permissions gate decides on these
// bytes, and asks about nothing the tool would refuse.
func InputBytes(a InputArgs, keys func([]string) ([]byte, error)) ([]byte, error) {
	if a.Text == "" && len(a.Keys) == 0 {
		return nil, &tool.Error{Code: tool.CodeInvalidArgs, Message: errNothingToType}
	}
	if _, err := compileWaitFor(a.WaitFor); err != nil {
		return nil, err
	}
	k, err := keys(a.Keys)
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeInvalidArgs, Message: err.Error()}
	}
	p := append([]byte(a.Text), k...)
	if len(p) > MaxInputBytes {
		return nil, &tool.Error{Code: tool.CodeInvalidArgs, Message: inputTooLong(len(p))}
	}
	return p, nil
}
