package tasktool

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
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
		Description: fmt.Sprintf("Read a background task's output since your last read, and its status. "+
			"wait: true blocks until it finishes or timeout_ms passes (default %s, at most %s); use it only when blocked on the result. "+
			"waitFor (RE2) returns once the output matches; screen: true shows a tty task's screen.",
			num.MillisText(def), num.MillisText(max)),
		Parameters: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"task_id":    idProperty(),
				"wait":       {Type: "boolean"},
				"timeout_ms": {Type: "number"},
				"waitFor":    {Type: "string"},
				"screen":     {Type: "boolean"},
			},
			PropertyOrder: []string{"task_id", "wait", "timeout_ms", "waitFor", "screen"},
			Required:      []string{"task_id"},
		},
		Annotations:  tool.Annotations{ReadOnly: true},
		OutputSchema: snapshotSchema(),
		Execute:      o.execute,
		Presenters:   screenPresenters(presenters("read", readTitlePrefix, true)),
	}
}

// execute waits when asked to, then reads. The wait's own snapshot is not
// used: the read takes a fresh one, as it starts. With waitFor or screen
// the read is a watch instead (docs/spec.md §4.2a).
func (o output) execute(ctx context.Context, call tool.Call) (tool.Result, error) {
	id, err := taskID(call)
	if err != nil {
		return tool.Result{}, err
	}
	var args struct {
		Wait      bool        `json:"wait"`
		TimeoutMs json.Number `json:"timeout_ms"`
		WaitFor   string      `json:"waitFor"`
		Screen    bool        `json:"screen"`
		// TimeoutAlias is the bash tool's name for it, which models
		// carry over; timeout_ms wins.
		TimeoutAlias json.Number `json:"timeoutMs"`
	}
	if err := call.Decode(&args); err != nil {
		return tool.Result{}, err
	}
	if args.TimeoutMs == "" {
		args.TimeoutMs = args.TimeoutAlias
	}
	if args.WaitFor != "" || args.Screen {
		return o.watch(ctx, call, id, args.WaitFor, args.Screen, args.TimeoutMs)
	}
	var waited time.Duration // how long a wait that ran out waited
	if args.Wait {
		d, err := o.wait(args.TimeoutMs)
		if err != nil {
			return tool.Result{}, err
		}
		snap, err := o.svc.Wait(ctx, call.Session, id, d)
		if err != nil {
			return tool.Result{}, toolError(err)
		}
		if !snap.Status.Terminal() {
			waited = d
		}
	}
	text, snap, err := o.svc.Read(call.Session, id)
	if err != nil {
		return tool.Result{}, toolError(err)
	}
	withdrawStale(call.Session, snap)
	res := tool.TextResult(outputText(text, waited, snap))
	res.Structured = snap
	return res, nil
}

// waitForDefault is how long waitFor waits without timeout_ms.
const waitForDefault = 5 * time.Second

// watch reads the new output until it matches pattern, or the screen
// (until it matches pattern, when given).
func (o output) watch(ctx context.Context, call tool.Call, id, pattern string, screen bool, rawTimeout json.Number) (tool.Result, error) {
	re, err := compileWaitFor(pattern)
	if err != nil {
		return tool.Result{}, err
	}
	timeout, err := waitTimeout(rawTimeout, min(waitForDefault, o.max), o.max)
	if err != nil {
		return tool.Result{}, err
	}
	w := watch{svc: o.svc, caller: call.Session, id: id, start: time.Now()}
	var s seen
	if screen {
		s, err = w.screen(ctx, re, timeout)
	} else {
		s, err = w.output(ctx, re, timeout)
	}
	if err != nil {
		return tool.Result{}, toolError(err)
	}
	withdrawStale(call.Session, s.snap)
	res := tool.TextResult(seenText(s, noNewOutputText))
	res.Structured = s.snap
	return res, nil
}

// wait is how long task_output waits: see waitTimeout.
func (o output) wait(raw json.Number) (time.Duration, error) { return waitTimeout(raw, o.def, o.max) }

// waitTimeout is how long to wait: timeout_ms (raw, as the model sent it;
// "" when absent) rounded up to a whole millisecond and capped at max, or
// def without it. The cap comes before the check: a timeout_ms out of
// float64 range parses as ±Inf, and +Inf is a long wait like any other,
// capped, while -Inf is refused with the text the model sent.
func waitTimeout(raw json.Number, def, max time.Duration) (time.Duration, error) {
	if raw == "" {
		return def, nil
	}
	ms, _ := strconv.ParseFloat(string(raw), 64)
	if ms = math.Min(ms, float64(max)/float64(time.Millisecond)); !num.PositiveFinite(ms) {
		return 0, toolError(tasks.InvalidWaitTimeout(string(raw)))
	}
	return min(num.Millis(ms), max), nil
}

// snapshotSchema describes task_output's structured result, the task
// snapshot (MCP outputSchema). Made on first use, not at every start of
// dsh.
var snapshotSchema = sync.OnceValue(func() *jsonschema.Schema {
	s, err := jsonschema.For[tasks.Snapshot](nil)
	if err != nil {
		panic(err)
	}
	return s
})
