package tasktool

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dsh-go/dsh/internal/num"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// output is task_output over svc: def is the wait without timeout_ms, max
// caps every wait.
type output struct {
	svc      *tasks.Service
	def, max time.Duration
}

// outputDefinition is task_output: it reads a task's new output and status,
// after waiting for the task's end when the model asks to.
func outputDefinition(svc *tasks.Service, def, max time.Duration) tool.Definition {
	o := output{svc: svc, def: def, max: max}
	return tool.Definition{
		Name: "task_output",
		Description: fmt.Sprintf("Read a background task's new output (what arrived since your last read) and its status. "+
			"wait: true blocks until the task finishes or timeout_ms passes (default %s, at most %s); use it only when you are blocked on the result.",
			num.MillisText(def), num.MillisText(max)),
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"task_id":    idProperty(),
				"wait":       {Type: "boolean", Description: "Wait for the task to finish first."},
				"timeout_ms": {Type: "number", Description: "How long to wait, in milliseconds."},
			},
			PropertyOrder: []string{"task_id", "wait", "timeout_ms"},
			Required:      []string{"task_id"},
		},
		Annotations:  tool.Annotations{ReadOnly: true},
		OutputSchema: snapshotSchema,
		Execute:      o.execute,
		Presenters:   presenters("read", readTitlePrefix, true),
	}
}

// execute waits when asked to, then reads. The wait's own snapshot is not
// used: the read takes a fresh one, as it starts.
func (o output) execute(ctx context.Context, call tool.Call) (tool.Result, error) {
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
		d, err := o.wait(args.TimeoutMs)
		if err != nil {
			return tool.Result{}, err
		}
		if _, err := o.svc.Wait(ctx, call.Session, id, d); err != nil {
			return tool.Result{}, toolError(err)
		}
	}
	text, snap, err := o.svc.Read(call.Session, id)
	if err != nil {
		return tool.Result{}, toolError(err)
	}
	withdrawStale(call.Session, snap)
	res := tool.TextResult(outputText(text, snap))
	res.Structured = snap
	return res, nil
}

// wait is how long to wait: timeout_ms (raw, as the model sent it; ""
// when absent) rounded up to a whole millisecond and capped at max, or the
// default without it. The cap comes before the check: a timeout_ms out of
// float64 range parses as ±Inf, and +Inf is a long wait like any other,
// capped, while -Inf is refused with the text the model sent.
func (o output) wait(raw json.Number) (time.Duration, error) {
	if raw == "" {
		return o.def, nil
	}
	ms, _ := strconv.ParseFloat(string(raw), 64)
	if ms = math.Min(ms, float64(o.max)/float64(time.Millisecond)); !num.PositiveFinite(ms) {
		return 0, toolError(tasks.InvalidWaitTimeout(string(raw)))
	}
	return min(num.Millis(ms), o.max), nil
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
