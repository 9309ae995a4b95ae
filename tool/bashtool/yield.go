package bashtool

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/internal/num"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// Yielding to the background (docs/spec.md §12). A foreground call whose
// front end allows it (tool.AllowYield) runs its command with RunOrYield;
// bash.yieldAfterMs after the call's arrival, it asks the task runtime for
// a task, and only the task's Run makes the executor yield: a runtime that
// refuses (its running limit, an ended session) never asks, and the call
// stays in the foreground. The task is the same as a background start's,
// still bound to the command's timeout.

// yieldedLine is the line that ends a yielded call's text (exact,
// docs/spec.md §12).
func yieldedLine(afterMs int64, id string) string {
	return marker.YieldOpen + strconv.FormatInt(afterMs, 10) + "ms; continues as background task " + id +
		": read it with task_output, stop it with task_kill]"
}

const (
	yieldedOpen = "\n" + marker.YieldOpen
	yieldedMid  = "ms; continues as background task "
	yieldedEnd  = ": read it with task_output, stop it with task_kill]"
)

// isYielded reports whether a result text ends with the yield's line, for
// presenters, which also read replayed logs that carry no structured
// facts.
func isYielded(text string) bool {
	i := strings.LastIndex(text, yieldedOpen)
	if i < 0 || !strings.HasSuffix(text, yieldedEnd) {
		return false
	}
	line := text[i+len(yieldedOpen) : len(text)-len(yieldedEnd)]
	ms, id, ok := strings.Cut(line, yieldedMid)
	_, err := strconv.ParseUint(ms, 10, 64)
	return ok && err == nil && id != "" && !strings.ContainsAny(id, " \n")
}

// renderYielded is a yielded call's text: the body of the output so far
// (docs/spec.md §3.4, §3.4a; no markers), then the yield's line.
func renderYielded(r bash.Result, afterMs int64, id string) string {
	body := bash.JoinStreams(streamText(r.Stdout), streamText(r.Stderr))
	if body == "" {
		body = noOutput
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + yieldedLine(afterMs, id)
}

// errNotYielded ends a task start whose command finished before it could
// yield: no task, and no number used.
var errNotYielded = errors.New("the command finished before it could yield")

// runOrYield runs spec in the foreground and, when the call may yield,
// hands it to the task runtime at its deadline: taskID is then the task's
// id and res the output so far, already as the model may read it.
func (t *Tool) runOrYield(ctx context.Context, s *session.Session, req bash.Request, spec bash.Spec) (res bash.Result, taskID string, err error) {
	arrived, allowed := tool.YieldAllowed(ctx)
	afterMs := num.CeilMillis(t.cfg.YieldDelay())
	rt := t.runtime
	if !allowed || afterMs == 0 || !t.cfg.Background() || rt == nil {
		res, err = bash.Run(ctx, t.exec, spec)
		return res, "", err
	}
	y := &yielder{
		yield:    make(chan struct{}),
		handoff:  make(chan handoff, 1),
		started:  make(chan startResult, 1),
		finished: make(chan struct{}),
	}
	y.wg.Go(func() {
		y.startAt(arrived.Add(time.Duration(afterMs)*time.Millisecond), rt, tasks.Spec{
			Kind:  TaskKind,
			Label: req.Command,
			Owner: s,
			Run: func() (tasks.Hooks, error) {
				close(y.yield)
				h := <-y.handoff
				if h.p == nil {
					return tasks.Hooks{}, errNotYielded
				}
				return t.processHooks(s, h.p, req, spec.Timeout.Milliseconds(), h.streams), nil
			},
		})
	})
	res, p, err := t.exec.RunOrYield(ctx, spec, y.yield)
	close(y.finished)
	h := handoff{p: p}
	if p != nil {
		// The output so far is the first piece of the task's reads, so it
		// is redacted as one: a secret it ends in is held back for them.
		h.streams = t.newStreams()
		res.Stdout, res.Stderr = t.yielded(res.Stdout, h.streams.out), t.yielded(res.Stderr, h.streams.err)
	}
	y.handoff <- h // read by the task's Run, if the start got that far
	if p == nil {
		y.wg.Wait()
		return res, "", err
	}
	st := <-y.started
	y.wg.Wait()
	if st.err != nil {
		// The runtime took the process and then refused the task (its
		// owner ended meanwhile): it killed and awaited it.
		return bash.Result{}, "", st.err
	}
	return res, st.snap.ID, nil
}

// yielder is what the call and its deadline's goroutine share.
type yielder struct {
	yield    chan struct{}    // closed by the task's Run: RunOrYield hands over
	handoff  chan handoff     // RunOrYield's process (nil: none), sent once
	started  chan startResult // the task start's outcome, once it was tried
	finished chan struct{}    // closed once RunOrYield returned
	wg       sync.WaitGroup   // the deadline's goroutine
}

// handoff is the process a run yielded and the redaction of its output,
// which its reads go on with.
type handoff struct {
	p       bash.Process
	streams *streams
}

type startResult struct {
	snap tasks.Snapshot
	err  error
}

// startAt is the deadline's goroutine: at deadline, unless the run
// finished first, it starts the task.
func (y *yielder) startAt(deadline time.Time, rt *tasks.Service, spec tasks.Spec) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-y.finished:
		return
	case <-timer.C:
	}
	snap, err := rt.Start(spec)
	y.started <- startResult{snap, err}
}
