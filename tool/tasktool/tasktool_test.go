package tasktool_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// producer is a fake task: a stream kind (like bash) or a final-output kind.
// By default a cancel ends it killed with "signal: SIGTERM".
type producer struct {
	stream    bool
	done      chan tasks.Outcome
	once      sync.Once
	cancelErr error
	keepOn    bool // ignore cancels

	mu     sync.Mutex
	unread string
}

func (p *producer) run() (tasks.Hooks, error) {
	p.done = make(chan tasks.Outcome, 1)
	h := tasks.Hooks{Cancel: p.cancel, Done: p.done}
	if p.stream {
		h.Read = func() string {
			p.mu.Lock()
			defer p.mu.Unlock()
			s := p.unread
			p.unread = ""
			return s
		}
	}
	return h, nil
}

func (p *producer) cancel(string) error {
	if p.cancelErr != nil {
		return p.cancelErr
	}
	if !p.keepOn {
		p.finish(tasks.Outcome{Status: tasks.Killed, Detail: "signal: SIGTERM"})
	}
	return nil
}

func (p *producer) write(s string) {
	p.mu.Lock()
	p.unread += s
	p.mu.Unlock()
}

func (p *producer) finish(o tasks.Outcome) { p.once.Do(func() { p.done <- o }) }

// rig is the task tools as host.Standard sets them up: registered with
// their section over a task runtime, and started.
type rig struct {
	svc  *tasks.Service
	reg  *tool.Registry
	pr   *prompt.Registry
	stop func() // what Start returned
}

func newRig(t testing.TB, cfg config.Tasks) *rig {
	t.Helper()
	r := &rig{svc: tasks.New(tasks.Config{}), reg: tool.NewRegistry(), pr: prompt.NewRegistry()}
	t.Cleanup(func() {
		r.stop()
		r.svc.Close()
	})
	for _, def := range tasktool.Definitions(r.svc, cfg) {
		if err := r.reg.Register(def); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.pr.Add(tasktool.Section()); err != nil {
		t.Fatal(err)
	}
	r.stop = tasktool.Start(r.svc)
	return r
}

func (r *rig) start(t *testing.T, kind, label string, owner *session.Session, p *producer) string {
	t.Helper()
	snap, err := r.svc.Start(tasks.Spec{Kind: kind, Label: label, Owner: owner, Run: p.run})
	if err != nil {
		t.Fatal(err)
	}
	return snap.ID
}

func (r *rig) call(s *session.Session, name, args string) tool.Result {
	return r.reg.Execute(context.Background(), tool.Call{Name: name, Args: json.RawMessage(args), Session: s})
}

// text calls a tool and returns its text, failing on an error result.
func (r *rig) text(t *testing.T, s *session.Session, name, args string) string {
	t.Helper()
	res := r.call(s, name, args)
	if res.IsError {
		t.Fatalf("%s %s: %s", name, args, res.Text())
	}
	return res.Text()
}

// settle blocks until the task has settled, without marking it reported.
// The listeners of a task that had settled already may still be running.
// listened returns a wait for the finish listeners of the tasks ids: call
// it before they finish. The notice listener, attached with the tools,
// was added first and so has run for a task when this one is called.
func (r *rig) listened(ids ...string) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(len(ids))
	stop := r.svc.OnFinish(func(snap tasks.Snapshot, _ *session.Session) {
		if slices.Contains(ids, snap.ID) {
			wg.Done()
		}
	})
	return func() { wg.Wait(); stop() }
}

func (r *rig) settle(t *testing.T, s *session.Session, id string) {
	t.Helper()
	done := make(chan struct{})
	stop := r.svc.OnFinish(func(snap tasks.Snapshot, _ *session.Session) {
		if snap.ID == id {
			close(done)
		}
	})
	defer stop()
	if snap, err := r.svc.Get(s, id); err != nil {
		t.Fatal(err)
	} else if snap.Status.Terminal() {
		return
	}
	<-done
}

func TestStatusLineAndNotice(t *testing.T) {
	s := tasks.Snapshot{ID: "bash-1", Kind: "bash", Label: "make", Status: tasks.Completed, Detail: "exit code: 0"}
	for _, tc := range []struct{ got, want string }{
		{tasktool.StatusLine(s), "[status: completed, exit code: 0]"},
		{tasktool.StatusLine(tasks.Snapshot{Status: tasks.Running}), "[status: running]"},
		{tasktool.Notice(s), "background task bash-1 (bash: make) finished [status: completed, exit code: 0]. Read its output with task_output."},
		{tasktool.Notice(tasks.Snapshot{ID: "calc-2", Kind: "calc", Label: "a\n  b", Status: tasks.Failed, Detail: "boom"}),
			"background task calc-2 (calc: a b) finished [status: failed, boom]. Read its output with task_output."},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}

func TestShortLabel(t *testing.T) {
	a119, a120, a121 := strings.Repeat("a", 119), strings.Repeat("a", 120), strings.Repeat("a", 121)
	for _, tc := range []struct{ in, want string }{
		{"make test", "make test"},
		{"  for f in *; do\n\techo $f\ndone\n", "for f in *; do echo $f done"},
		{"a\r\n\r\nb\u2028c\u00a0d", "a b c d"},
		{"", ""},
		{" \n ", ""},
		{a120, a120},
		{a121, a119 + "…"},
		{a119 + " b", a119 + "…"},
		{strings.Repeat("a", 118) + " bc", strings.Repeat("a", 118) + "…"}, // no space before the ellipsis
		{strings.Repeat("é", 200), strings.Repeat("é", 119) + "…"},
	} {
		if got := tasktool.ShortLabel(tc.in); got != tc.want {
			t.Errorf("ShortLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	huge := strings.Repeat("x\n", 5<<20)
	if got := tasktool.ShortLabel(huge); utf8.RuneCountInString(got) != 120 || strings.Contains(got, "\n") {
		t.Errorf("huge label: %q", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  config.Tasks
		want string
	}{
		{config.Tasks{}, ""},
		{config.Tasks{WaitTimeout: 10 * time.Minute}, ""},
		{config.Tasks{WaitTimeout: 700 * time.Second}, "tool-tasks: waitTimeoutMs (700000) exceeds maxWaitTimeoutMs (600000)"},
		{config.Tasks{MaxWaitTimeout: time.Second}, "tool-tasks: waitTimeoutMs (30000) exceeds maxWaitTimeoutMs (1000)"},
		{config.Tasks{WaitTimeout: 1500 * time.Microsecond, MaxWaitTimeout: time.Millisecond}, "tool-tasks: waitTimeoutMs (1.5) exceeds maxWaitTimeoutMs (1)"},
		{config.Tasks{WaitTimeout: -1}, "tool-tasks: waitTimeoutMs must be a positive finite number"},
		{config.Tasks{WaitTimeout: math.MinInt64}, "tool-tasks: waitTimeoutMs must be a positive finite number"},
		{config.Tasks{MaxWaitTimeout: -5 * time.Millisecond}, "tool-tasks: maxWaitTimeoutMs must be a positive finite number"},
	} {
		got := ""
		if err := tasktool.Validate(tc.cfg); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

func TestToolsLifecycle(t *testing.T) {
	r := newRig(t, config.Tasks{})
	var names []string
	for _, s := range r.reg.List() {
		names = append(names, s.Name)
		if ro := s.Annotations.ReadOnly; ro != (s.Name != "task_kill" && s.Name != "task_input") {
			t.Errorf("%s: ReadOnly %v", s.Name, ro)
		}
		if s.Description == "" {
			t.Errorf("%s: no description", s.Name)
		}
	}
	if !slices.Equal(names, []string{"task_output", "task_list", "task_kill", "task_input"}) {
		t.Errorf("tools %v", names)
	}
	secs := r.pr.Sections()
	if len(secs) != 1 || secs[0].Name != "tool:tasks" || secs[0].Order != 106 || secs[0].Text != tasktool.SectionText {
		t.Errorf("sections %+v", secs)
	}
	for _, word := range []string{"task_output", "task_kill", "poll", "sleep", "final answer"} {
		if !strings.Contains(tasktool.SectionText, word) {
			t.Errorf("section does not mention %q", word)
		}
	}

	a := session.New("a", "")
	p := &producer{keepOn: true}
	id := r.start(t, "calc", "x", a, p)

	// Stopping detaches the tools and ends the notices.
	r.stop()
	r.stop = func() {}
	if _, err := r.svc.Start(tasks.Spec{Kind: "calc", Label: "x", Run: (&producer{}).run}); !errors.Is(err, tasks.ErrNoTools) {
		t.Errorf("start after stop: %v", err)
	}
	p.finish(tasks.Outcome{Status: tasks.Completed})
	r.settle(t, a, id)
	if n := a.TakeNotices(); n != nil {
		t.Errorf("notices after stop: %q", n)
	}
}

// The examples of docs/spec.md §4.2, byte for byte, through the registry.
func TestOutputStream(t *testing.T) {
	r := newRig(t, config.Tasks{})
	a := session.New("a", "")
	p := &producer{stream: true}
	id := r.start(t, "bash", "echo bg-ok", a, p)
	if id != "bash-1" {
		t.Fatalf("id %s", id)
	}
	args := `{"task_id":"bash-1"}`
	p.write("line one\n")
	if got := r.text(t, a, "task_output", args); got != "line one\n[status: running]" {
		t.Errorf("got %q", got)
	}
	if got := r.text(t, a, "task_output", args); got != "(no new output)\n[status: running]" {
		t.Errorf("got %q", got)
	}
	p.write("partial")
	if got := r.text(t, a, "task_output", ` {"task_id":"  bash-1 ", "wait": false, "timeout_ms": -1}`); got != "partial\n[status: running]" {
		t.Errorf("got %q", got)
	}
	p.write("bg-ok\n")
	p.finish(tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0"})
	res := r.call(a, "task_output", `{"task_id":"bash-1","wait":true}`)
	if res.IsError || res.Text() != "bg-ok\n[status: completed, exit code: 0]" {
		t.Errorf("got %q", res.Text())
	}
	snap, ok := res.Structured.(tasks.Snapshot)
	if !ok || snap.ID != "bash-1" || snap.Status != tasks.Completed || snap.Label != "echo bg-ok" || snap.Owner != "a" || !snap.Reported {
		t.Errorf("structured %#v", res.Structured)
	}
	if got := r.text(t, a, "task_output", args); got != "(no new output)\n[status: completed, exit code: 0]" {
		t.Errorf("got %q", got)
	}
}

func TestOutputFinalKind(t *testing.T) {
	r := newRig(t, config.Tasks{})
	p := &producer{}
	id := r.start(t, "calc", "2+2", nil, p)
	args := `{"task_id":"` + id + `"}`
	if got := r.text(t, nil, "task_output", args); got != "(no new output)\n[status: running]" {
		t.Errorf("got %q", got)
	}
	p.finish(tasks.Outcome{Status: tasks.Completed, Output: "4"})
	r.settle(t, nil, id)
	for range 2 {
		if got := r.text(t, nil, "task_output", args); got != "4\n[status: completed]" {
			t.Errorf("got %q", got)
		}
	}
}

func TestOutputWaitTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, config.Tasks{WaitTimeout: time.Second, MaxWaitTimeout: 5 * time.Second})
		a := session.New("a", "")
		r.start(t, "bash", "sleep 60", a, &producer{stream: true})
		// A wait that runs out says how long it waited, before the status
		// line (docs/spec.md §4.2, exact).
		for _, tc := range []struct {
			args string
			want time.Duration
			text string
		}{
			{`{"task_id":"bash-1","wait":true}`, time.Second, "(no new output)\n[still running after 1000 ms]\n[status: running]"},
			{`{"task_id":"bash-1","wait":true,"timeout_ms":50}`, 50 * time.Millisecond, "(no new output)\n[still running after 50 ms]\n[status: running]"},
			{`{"task_id":"bash-1","wait":true,"timeout_ms":0.5}`, time.Millisecond, "(no new output)\n[still running after 1 ms]\n[status: running]"},
			{`{"task_id":"bash-1","wait":true,"timeout_ms":86400000}`, 5 * time.Second, "(no new output)\n[still running after 5000 ms]\n[status: running]"},
			{`{"task_id":"bash-1","wait":true,"timeout_ms":1e400}`, 5 * time.Second, "(no new output)\n[still running after 5000 ms]\n[status: running]"},
			{`{"task_id":"bash-1","wait":true,"timeout_ms":null}`, time.Second, "(no new output)\n[still running after 1000 ms]\n[status: running]"},
			{`{"task_id":"bash-1","timeout_ms":50}`, 0, "(no new output)\n[status: running]"},
		} {
			t0 := time.Now()
			res := r.call(a, "task_output", tc.args)
			if res.IsError || res.Text() != tc.text || time.Since(t0) != tc.want {
				t.Errorf("%s: %q after %v, want %q after %v", tc.args, res.Text(), time.Since(t0), tc.text, tc.want)
			}
		}
		for _, tc := range []struct{ ms, want string }{
			{"0", "Error: invalid wait timeout: expected a positive number of milliseconds, got 0"},
			{"-1", "Error: invalid wait timeout: expected a positive number of milliseconds, got -1"},
			{"-1e400", "Error: invalid wait timeout: expected a positive number of milliseconds, got -1e400"},
		} {
			res := r.call(a, "task_output", `{"task_id":"bash-1","wait":true,"timeout_ms":`+tc.ms+`}`)
			if !res.IsError || res.Text() != tc.want || res.Code != tool.CodeInvalidArgs {
				t.Errorf("timeout_ms %s: %q (%s)", tc.ms, res.Text(), res.Code)
			}
		}

		// A call cancelled while it waits.
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		res := r.reg.Execute(ctx, tool.Call{Name: "task_output", Args: json.RawMessage(`{"task_id":"bash-1","wait":true}`), Session: a})
		if !res.IsError || res.Text() != "Error: wait aborted" || res.Code != tasktool.CodeWaitAborted {
			t.Errorf("cancelled: %q (%s)", res.Text(), res.Code)
		}
	})
}

func TestErrors(t *testing.T) {
	r := newRig(t, config.Tasks{})
	a, b := session.New("a", ""), session.New("b", "")
	r.start(t, "bash", "sleep 60", a, &producer{stream: true})
	for _, tc := range []struct {
		s          *session.Session
		name, args string
		want, code string
	}{
		{a, "task_output", `{"task_id":""}`, `Error: invalid task_id: expected a non-empty string, got ""`, tool.CodeInvalidArgs},
		{a, "task_kill", `{"task_id":" \n"}`, `Error: invalid task_id: expected a non-empty string, got " \n"`, tool.CodeInvalidArgs},
		{a, "task_output", `{}`, `Error: invalid arguments: missing required property "task_id"`, tool.CodeInvalidArgs},
		{a, "task_output", `{"task_id":"bash-9"}`, "Error: unknown task bash-9", tasktool.CodeUnknownTask},
		{a, "task_kill", `{"task_id":"bash-9"}`, "Error: unknown task bash-9", tasktool.CodeUnknownTask},
		{b, "task_output", `{"task_id":"bash-1"}`, "Error: task bash-1 belongs to another session", tasktool.CodeForbidden},
		{b, "task_output", `{"task_id":"bash-1","wait":true,"timeout_ms":10}`, "Error: task bash-1 belongs to another session", tasktool.CodeForbidden},
		{b, "task_kill", `{"task_id":"bash-1"}`, "Error: task bash-1 belongs to another session", tasktool.CodeForbidden},
		{nil, "task_kill", `{"task_id":"bash-1"}`, "Error: task bash-1 belongs to another session", tasktool.CodeForbidden},
	} {
		res := r.call(tc.s, tc.name, tc.args)
		if !res.IsError || res.Text() != tc.want || res.Code != tc.code {
			t.Errorf("%s %s: %q (%s), want %q (%s)", tc.name, tc.args, res.Text(), res.Code, tc.want, tc.code)
		}
	}
	if got := r.text(t, b, "task_list", ``); got != "(no background tasks)" {
		t.Errorf("b's list: %q", got)
	}
}

func TestList(t *testing.T) {
	r := newRig(t, config.Tasks{})
	a := session.New("a", "")
	if got := r.text(t, a, "task_list", `{}`); got != "(no background tasks)" {
		t.Errorf("empty: %q", got)
	}
	long := "go test ./... &&\n  " + strings.Repeat("x", 200)
	r.start(t, "bash", "npm run dev", a, &producer{stream: true})
	done := &producer{}
	id := r.start(t, "calc", "2+2", nil, done)
	stubborn := &producer{stream: true, keepOn: true}
	defer stubborn.finish(tasks.Outcome{Status: tasks.Killed})
	r.start(t, "bash", long, a, stubborn)
	r.start(t, "bash", "other session's", session.New("b", ""), &producer{stream: true})
	done.finish(tasks.Outcome{Status: tasks.Completed})
	r.settle(t, nil, id)
	if res := r.call(a, "task_kill", `{"task_id":"bash-2"}`); res.Text() != "requested cancellation of task bash-2" {
		t.Errorf("kill: %q", res.Text())
	}
	want := "bash-1 [bash] running — npm run dev\n" +
		"calc-1 [calc] completed — 2+2\n" +
		"bash-2 [bash] stopping — go test ./... && " + strings.Repeat("x", 102) + "…"
	if got := r.text(t, a, "task_list", ``); got != want {
		t.Errorf("list:\n%s", cmp.Diff(want, got))
	}
}

func TestKill(t *testing.T) {
	r := newRig(t, config.Tasks{})
	a := session.New("a", "")
	id := r.start(t, "bash", "sleep 60", a, &producer{stream: true})
	args := `{"task_id":"` + id + `"}`
	if got := r.text(t, a, "task_kill", args); got != "requested cancellation of task bash-1" {
		t.Errorf("got %q", got)
	}
	r.settle(t, a, id)
	if got := r.text(t, a, "task_kill", args); got != "task bash-1 had already finished [status: killed, signal: SIGTERM]" {
		t.Errorf("got %q", got)
	}
	if got := r.text(t, a, "task_output", `{"task_id":"bash-1","wait":true}`); got != "(no new output)\n[status: killed, signal: SIGTERM]" {
		t.Errorf("got %q", got)
	}

	stubborn := &producer{cancelErr: errors.New("operation not permitted")}
	id = r.start(t, "calc", "x", a, stubborn)
	res := r.call(a, "task_kill", `{"task_id":"`+id+`"}`)
	if !res.IsError || res.Text() != "Error: kill task calc-1: operation not permitted" || res.Code != tasktool.CodeKillFailed {
		t.Errorf("failing cancel: %q (%s)", res.Text(), res.Code)
	}
	stubborn.finish(tasks.Outcome{Status: tasks.Completed})
	<-a.Notices()
	if n := a.TakeNotices(); len(n) != 1 || n[0] != "background task calc-1 (calc: x) finished [status: completed]. Read its output with task_output." {
		t.Errorf("notices %q", n)
	}
}

func TestNotices(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, config.Tasks{})
		a := session.New("a", "")

		// Unreported: exactly one notice, once.
		p := &producer{stream: true}
		id := r.start(t, "bash", "make\n  test", a, p)
		p.finish(tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 2"})
		r.settle(t, a, id)
		want := []string{"background task bash-1 (bash: make test) finished [status: completed, exit code: 2]. Read its output with task_output."}
		synctest.Wait() // the listeners have run
		if got := a.TakeNotices(); !slices.Equal(got, want) {
			t.Errorf("notices %q", got)
		}
		// Reading it afterwards sends nothing more.
		r.text(t, a, "task_output", `{"task_id":"bash-1"}`)

		// Killed with task_kill: none.
		id = r.start(t, "bash", "sleep 60", a, &producer{stream: true})
		r.text(t, a, "task_kill", `{"task_id":"`+id+`"}`)
		r.settle(t, a, id)

		// Seen finishing by a wait: none.
		p = &producer{stream: true}
		id = r.start(t, "bash", "sleep 1", a, p)
		got := make(chan string)
		go func() { got <- r.text(t, a, "task_output", `{"task_id":"`+id+`","wait":true}`) }()
		synctest.Wait() // the wait is parked
		p.finish(tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0"})
		if text := <-got; text != "(no new output)\n[status: completed, exit code: 0]" {
			t.Errorf("wait: %q", text)
		}

		// Unowned: nobody to tell.
		p = &producer{}
		id = r.start(t, "calc", "x", nil, p)
		p.finish(tasks.Outcome{Status: tasks.Completed})
		r.settle(t, nil, id)

		synctest.Wait()
		if n := a.TakeNotices(); n != nil {
			t.Errorf("unexpected notices %q", n)
		}
	})
}

// A read that starts after the task finished marks it reported, even in the
// gap between the settle and the notice listener.
func TestNoNoticeForReadAfterFinish(t *testing.T) {
	r := newRig(t, config.Tasks{})
	a := session.New("a", "")
	// Put a gate before the tools' listener: start them again after it.
	gate, release := make(chan string), make(chan struct{})
	r.svc.OnFinish(func(s tasks.Snapshot, _ *session.Session) {
		gate <- s.ID
		<-release
	})
	r.stop()
	r.stop = tasktool.Start(r.svc)
	p := &producer{}
	id := r.start(t, "calc", "x", a, p)
	p.finish(tasks.Outcome{Status: tasks.Completed, Output: "4"})
	<-gate // settled; the notice listener has not run yet
	if got := r.text(t, a, "task_output", `{"task_id":"`+id+`"}`); got != "4\n[status: completed]" {
		t.Errorf("read: %q", got)
	}
	close(release)
	r.svc.Close() // waits for the listeners
	if n := a.TakeNotices(); n != nil {
		t.Errorf("notices %q", n)
	}
}

func TestNoNoticesAfterShutdownOrSessionEnd(t *testing.T) {
	r := newRig(t, config.Tasks{})
	a, b := session.New("a", ""), session.New("b", "")
	r.start(t, "bash", "sleep 60", a, &producer{stream: true})
	r.start(t, "bash", "sleep 60", b, &producer{stream: true})
	b.End()
	if n := b.TakeNotices(); n != nil {
		t.Errorf("notices at session end: %q", n)
	}
	if res := r.call(b, "task_output", `{"task_id":"bash-2"}`); res.Text() != "Error: unknown task bash-2" {
		t.Errorf("after end: %q", res.Text())
	}
	r.svc.Close()
	if n := a.TakeNotices(); n != nil {
		t.Errorf("notices at shutdown: %q", n)
	}
}

func TestPresenters(t *testing.T) {
	r := newRig(t, config.Tasks{})
	for _, tc := range []struct {
		name, args, title, kind string
	}{
		{"task_output", `{"task_id":"bash-1","wait":true}`, "Read bash-1", "read"},
		{"task_kill", `{"task_id":" bash-2 "}`, "Kill bash-2", "other"},
		{"task_list", `{}`, "List background tasks", "read"},
	} {
		v, err := r.reg.PresentCall(tc.name, json.RawMessage(tc.args))
		if err != nil || v == nil || v.Kind != tool.ViewGeneric || v.Generic.Title != tc.title || v.Generic.Kind != tc.kind || v.Generic.RawInput == nil {
			t.Errorf("%s call view: %+v %v", tc.name, v, err)
		}
	}
	v, _ := r.reg.PresentResult("task_output", json.RawMessage(`{"task_id":"bash-1"}`), tool.TextResult("out\n\n[status: running]"))
	if v == nil || v.Generic.Title != "Read bash-1" || len(v.Generic.Content) != 1 || v.Generic.Content[0].Text != "```console\nout\n\n[status: running]\n```" {
		t.Errorf("output result view: %+v", v.Generic)
	}
	v, _ = r.reg.PresentResult("task_output", json.RawMessage(`{"task_id":"bash-9"}`), tool.ErrorResult(tasktool.CodeUnknownTask, "unknown task bash-9"))
	if v == nil || v.Generic.Content[0].Text != "Error: unknown task bash-9" {
		t.Errorf("error result view: %+v", v.Generic)
	}
	v, _ = r.reg.PresentResult("task_kill", json.RawMessage(`{"task_id":"bash-1"}`), tool.TextResult("requested cancellation of task bash-1"))
	if v == nil || v.Generic.Title != "Kill bash-1" || v.Generic.Content[0].Text != "requested cancellation of task bash-1" {
		t.Errorf("kill result view: %+v", v.Generic)
	}
	if v, err := r.reg.PresentCall("task_kill", json.RawMessage(`{"task_id":7}`)); v != nil || err != nil {
		t.Errorf("malformed args: %+v %v", v, err)
	}
}

func TestNoticeWithdrawnWhenReadBeforeDelivery(t *testing.T) {
	r := newRig(t, config.Tasks{})
	a := session.New("a", "")
	defer a.End()
	p, q := &producer{stream: true}, &producer{stream: true}
	read := r.start(t, "job", "read later", a, p)
	kept := r.start(t, "job", "never read", a, q)
	listened := r.listened(read, kept)
	p.finish(tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0"})
	q.finish(tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 1"})
	listened() // both notices are queued now
	// Reading the finished task withdraws its queued notice; the other stays.
	r.text(t, a, "task_output", `{"task_id":"`+read+`"}`)
	want := []string{"background task " + kept + " (job: never read) finished [status: completed, exit code: 1]. Read its output with task_output."}
	if got := a.TakeNotices(); !slices.Equal(got, want) {
		t.Fatalf("notices %q, want %q", got, want)
	}
}

// TestEveryMarkerIsGuarded: the status line and the finish notice begin
// with openings of package marker, so command output imitating them is
// guarded (docs/spec.md §3.4). A new marker goes in this list.
func TestEveryMarkerIsGuarded(t *testing.T) {
	done := tasks.Snapshot{ID: "bash-1", Kind: "bash", Label: "make", Status: tasks.Completed, Detail: "exit code: 0"}
	running := tasks.Snapshot{ID: "bash-2", Kind: "bash", Label: "make", Status: tasks.Running}
	for _, line := range []string{tasktool.StatusLine(done), tasktool.StatusLine(running), tasktool.Notice(done), tasktool.StillRunningLine(time.Second)} {
		if !marker.Is(line) {
			t.Errorf("%q is not guarded: add its opening to package marker", line)
		}
	}
}

// TestStillRunningLine: the line of a task_output wait that ran out, byte
// for byte (docs/spec.md §4.2, exact).
func TestStillRunningLine(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "[still running after 30000 ms]"},
		{time.Millisecond, "[still running after 1 ms]"},
		{600 * time.Second, "[still running after 600000 ms]"},
	} {
		if got := tasktool.StillRunningLine(tc.d); got != tc.want {
			t.Errorf("StillRunningLine(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
