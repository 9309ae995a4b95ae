package bashtool_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// callYielding is a bash call from a front end that allows yielding,
// the call having arrived at arrived.
func (s *stack) callYielding(t *testing.T, sess *session.Session, arrived time.Time, args map[string]any) tool.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx := tool.AllowYield(context.Background(), arrived)
	return s.reg.Execute(ctx, tool.Call{Name: "bash", Args: b, Session: sess})
}

// ms is a yieldAfterMs of v milliseconds.
func ms(v int64) *time.Duration { d := time.Duration(v) * time.Millisecond; return &d }

// TestYieldHandsTheCommandToATask: past yieldAfterMs the call returns the
// output so far and the exact line of docs/spec.md §12; the command goes
// on as a task whose reads start after what the call returned, and which
// ends with its exit code.
func TestYieldHandsTheCommandToATask(t *testing.T) {
	s := newStackBash(t, nil, tasks.Config{}, config.Bash{YieldAfter: ms(300)})
	a := session.New("a", "")
	defer a.End()
	res := s.callYielding(t, a, time.Now(), map[string]any{"command": "echo before; sleep 1; echo after; exit 3", "description": "build slowly"})
	want := "before\n[still running after 300ms; continues as background task bash-1: read it with task_output, stop it with task_kill]"
	if res.Text() != want || res.IsError {
		t.Fatalf("yielded result %q", res.Text())
	}
	st, ok := res.Structured.(bashtool.Structured)
	if !ok || st.TaskID != "bash-1" || !st.Yielded || st.ExitCode != nil || st.Stdout == nil || st.Stdout.TotalBytes != 7 {
		t.Fatalf("structured %+v", res.Structured)
	}
	if got := s.output(t, a, "bash-1"); got != "after\n[status: completed, exit code: 3]" {
		t.Fatalf("task output %q", got)
	}
}

// TestYieldedTaskKeepsItsTimeout: a yielded command that passes its
// timeout ends killed, and its final read says so.
func TestYieldedTaskKeepsItsTimeout(t *testing.T) {
	s := newStackBash(t, nil, tasks.Config{}, config.Bash{YieldAfter: ms(200)})
	a := session.New("a", "")
	defer a.End()
	res := s.callYielding(t, a, time.Now(), map[string]any{"command": "sleep 30", "description": "wait long", "timeoutMs": 800})
	if want := "(no output)\n[still running after 200ms; continues as background task bash-1: read it with task_output, stop it with task_kill]"; res.Text() != want {
		t.Fatalf("yielded result %q", res.Text())
	}
	if got := s.output(t, a, "bash-1"); got != "[timed out after 800ms]\n[status: killed, timed out after 800ms]" {
		t.Fatalf("task output %q", got)
	}
	if got := s.output(t, a, "bash-1"); got != "(no new output)\n[status: killed, timed out after 800ms]" {
		t.Fatalf("a later read %q", got)
	}
}

// TestYieldDeadlineCountsFromArrival: time spent before the tool ran
// (hooks, an ask) counts, so a call that arrived long ago yields at once.
func TestYieldDeadlineCountsFromArrival(t *testing.T) {
	s := newStackBash(t, nil, tasks.Config{}, config.Bash{YieldAfter: ms(60000)})
	a := session.New("a", "")
	defer a.End()
	start := time.Now()
	res := s.callYielding(t, a, start.Add(-time.Minute), map[string]any{"command": "sleep 2; echo late", "description": "wait"})
	if !strings.HasSuffix(res.Text(), "continues as background task bash-1: read it with task_output, stop it with task_kill]") || time.Since(start) > time.Second {
		t.Fatalf("after %v: %q", time.Since(start), res.Text())
	}
	if got := s.output(t, a, "bash-1"); got != "late\n[status: completed, exit code: 0]" {
		t.Fatalf("task output %q", got)
	}
}

// TestNoYield: the call stays in the foreground when its front end does
// not allow yielding (dsh run), when yieldAfterMs is 0, when background
// runs are off, and when the task runtime refuses the task.
func TestNoYield(t *testing.T) {
	off := false
	cmd := map[string]any{"command": "sleep 0.5; echo done", "description": "wait a little"}
	for _, tc := range []struct {
		name  string
		bc    config.Bash
		tc    tasks.Config
		allow bool
		full  bool // the session already runs its one task
	}{
		{"front end does not allow it", config.Bash{YieldAfter: ms(100)}, tasks.Config{}, false, false},
		{"yieldAfterMs 0", config.Bash{YieldAfter: ms(0)}, tasks.Config{}, true, false},
		{"background runs off", config.Bash{YieldAfter: ms(100), EnableRunInBackground: &off}, tasks.Config{}, true, false},
		{"the runtime refuses", config.Bash{YieldAfter: ms(100)}, tasks.Config{MaxRunningPerSession: 1}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStackBash(t, nil, tc.tc, tc.bc)
			a := session.New("a", "")
			defer a.End()
			if tc.full {
				s.start(t, a, "sleep 30")
			}
			var res tool.Result
			if tc.allow {
				res = s.callYielding(t, a, time.Now(), cmd)
			} else {
				res = s.call(t, a, "bash", cmd)
			}
			if res.Text() != "done\n" || res.IsError {
				t.Fatalf("got %q", res.Text())
			}
			if st := res.Structured.(bashtool.Structured); st.Yielded || st.TaskID != "" {
				t.Fatalf("structured %+v", st)
			}
		})
	}
}

// cancelledOnceTasked is a call's context that the client cancels at the
// moment the call yields: its Err turns to Canceled as soon as the task
// runtime lists a task of the session, and its Done closes then too, which
// the executor, already past its select, does not see.
type cancelledOnceTasked struct {
	context.Context
	rt   *tasks.Service
	sess *session.Session
	once sync.Once
	done chan struct{}
}

func (c *cancelledOnceTasked) Err() error {
	if len(c.rt.List(c.sess)) > 0 {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

func (c *cancelledOnceTasked) Done() <-chan struct{} { return c.done }

// TestCancelAtTheYieldKillsTheCommand: a cancel that reaches the call as
// it yields gets no response (docs/spec.md §6.4: the transport drops it),
// so the model would never learn the task id: the command must end as a
// cancelled foreground one does, not go on as an unannounced task.
func TestCancelAtTheYieldKillsTheCommand(t *testing.T) {
	s := newStackBash(t, nil, tasks.Config{}, config.Bash{YieldAfter: ms(60000)})
	a := session.New("a", "")
	defer a.End()
	pid := filepath.Join(t.TempDir(), "pid")
	ctx := &cancelledOnceTasked{Context: context.Background(), rt: s.rt, sess: a, done: make(chan struct{})}
	b, _ := json.Marshal(map[string]any{"command": "echo $$ > " + pid + "; sleep 30", "description": "wait long"})
	res := s.reg.Execute(tool.AllowYield(ctx, time.Now().Add(-time.Minute)), tool.Call{Name: "bash", Args: b, Session: a})
	if !res.IsError || !strings.Contains(res.Text(), bashtool.Aborted) {
		t.Errorf("a call cancelled as it yielded returned %q", res.Text())
	}
	for _, snap := range s.rt.List(a) {
		s.awaitFinish(t, snap.ID)
	}
	if p, err := proctest.PidInFile(pid); err == nil {
		proctest.AwaitGone(t, p)
	}
}

// TestCancelAtTheYieldNamesTheTask: the aborted result of a call
// cancelled as it yielded still names the task it became and killed (not
// to the model: an error result has no structured content over MCP), so
// the audit log's call line names the task its task-end line ends.
func TestCancelAtTheYieldNamesTheTask(t *testing.T) {
	s := newStackBash(t, nil, tasks.Config{}, config.Bash{YieldAfter: ms(60000)})
	a := session.New("a", "")
	defer a.End()
	ctx := &cancelledOnceTasked{Context: context.Background(), rt: s.rt, sess: a, done: make(chan struct{})}
	b, _ := json.Marshal(map[string]any{"command": "sleep 30", "description": "wait long"})
	res := s.reg.Execute(tool.AllowYield(ctx, time.Now().Add(-time.Minute)), tool.Call{Name: "bash", Args: b, Session: a})
	list := s.rt.List(a)
	for _, snap := range list {
		s.awaitFinish(t, snap.ID)
	}
	st, _ := res.Structured.(bashtool.Structured)
	if !res.IsError || res.Text() != tool.ErrorPrefix+bashtool.Aborted || len(list) != 1 || st.TaskID != list[0].ID || !st.Yielded {
		t.Errorf("a call cancelled as it yielded: %q, structured %+v, tasks %+v", res.Text(), res.Structured, list)
	}
}
