package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/session"
)

func TestMessages(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ErrNoTools.Error(), "background tasks unavailable: no task tools are attached"},
		{ErrInvalidKind.Error(), "invalid task kind: expected a non-empty string"},
		{ErrInvalidLabel.Error(), "invalid task label: expected a non-empty string"},
		{tooManyMessage(64), "too many background tasks: 64 are running in this session; stop one with task_kill"},
		{tooManyOnServerMessage(256), "too many background tasks: 256 are running on this server; stop one with task_kill or try again later"},
		{forbiddenMessage("bash-1"), "task bash-1 belongs to another session"},
		{unknownMessage("bash-9"), "unknown task bash-9"},
		{errInvalidTimeout(-time.Millisecond).Error(), "invalid wait timeout: expected a positive number of milliseconds, got -1"},
		{errInvalidTimeout(0).Error(), "invalid wait timeout: expected a positive number of milliseconds, got 0"},
		{errInvalidTimeout(-500 * time.Microsecond).Error(), "invalid wait timeout: expected a positive number of milliseconds, got -0.5"},
		{errInvalidTimeout(math.MinInt64).Error(), "invalid wait timeout: expected a positive number of milliseconds, got -9223372036854.775"},
		{InvalidWaitTimeout("-1e400").Error(), "invalid wait timeout: expected a positive number of milliseconds, got -1e400"},
		{ErrWaitAborted.Error(), "wait aborted"},
		{ownerEndedMessage("mcp-1"), "background tasks unavailable: session mcp-1 has ended"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}

func TestStatusTerminal(t *testing.T) {
	for s, want := range map[Status]bool{Running: false, Stopping: false, Completed: true, Killed: true, Failed: true, "": false} {
		if s.Terminal() != want {
			t.Errorf("%q.Terminal() = %v", s, !want)
		}
	}
}

func TestPreflight(t *testing.T) {
	svc := New(Config{MaxRunningPerSession: 2})
	defer svc.Close()
	a := session.New("a", "")
	run := newFake(false).run
	startErr := func(spec Spec) string {
		t.Helper()
		_, err := svc.Start(spec)
		if err == nil {
			t.Fatalf("Start(%+v) succeeded", spec)
		}
		return err.Error()
	}
	ok := Spec{Kind: "bash", Label: "sleep 1", Owner: a, Run: run}

	// Nothing attached: refused before anything else, even a blank kind.
	if got := startErr(Spec{Run: run}); got != ErrNoTools.Error() {
		t.Errorf("no tools: %q", got)
	}
	detach1, detach2 := svc.AttachTools(), svc.AttachTools()
	detach1()
	detach1() // idempotent: detach2 still holds one attachment
	if got := startErr(Spec{Kind: " ", Label: "x", Run: run}); got != ErrInvalidKind.Error() {
		t.Errorf("blank kind: %q", got)
	}
	if got := startErr(Spec{Kind: "bash", Label: "\n\t", Run: run}); got != ErrInvalidLabel.Error() {
		t.Errorf("blank label: %q", got)
	}

	f1, f2 := newFake(false), newFake(false)
	f2.onCancel = nil
	start(t, svc, "bash", "one", a, f1)
	s2 := start(t, svc, "bash", "two", a, f2)
	if _, _, err := svc.Kill(a, s2.ID); err != nil { // stopping still counts
		t.Fatal(err)
	}
	want := "too many background tasks: 2 are running in this session; stop one with task_kill"
	if got := startErr(ok); got != want {
		t.Errorf("limit: %q", got)
	}
	_, err := svc.Start(ok)
	if !errors.Is(err, ErrTooMany) {
		t.Errorf("limit error %v does not wrap ErrTooMany", err)
	}
	// Other owners, and the unowned tasks, have their own count.
	start(t, svc, "bash", "b", session.New("b", ""), newFake(false))
	start(t, svc, "bash", "unowned", nil, newFake(false))
	// A settled task frees its slot.
	f2.finish(Outcome{Status: Killed})
	settled(t, svc, s2.ID)
	start(t, svc, "bash", "three", a, newFake(false))

	detach2()
	if got := startErr(ok); got != ErrNoTools.Error() {
		t.Errorf("after detaching all: %q", got)
	}
	svc.AttachTools()
	svc.Close()
	if _, err := svc.Start(ok); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}

	svc2 := newService(t, Config{})
	ended := session.New("gone", "")
	ended.End()
	if _, err := svc2.Start(Spec{Kind: "bash", Label: "x", Owner: ended, Run: run}); err == nil || err.Error() != "background tasks unavailable: session gone has ended" || !errors.Is(err, ErrOwnerEnded) {
		t.Errorf("ended owner: %v", err)
	}
}

// TestServerWideLimit: MaxRunning counts the live tasks of every owner,
// the unowned ones and starts in flight included, after the owner's own
// limit; a failed start and a settled task give their slot back, and an
// owner refused before its first task starts one later.
func TestServerWideLimit(t *testing.T) {
	svc := newService(t, Config{MaxRunningPerSession: 2, MaxRunning: 3})
	a, b, c := session.New("a", ""), session.New("b", ""), session.New("c", "")
	start(t, svc, "bash", "a1", a, newFake(false))
	start(t, svc, "bash", "b1", b, newFake(false))
	if _, err := svc.Start(Spec{Kind: "bash", Label: "fails", Owner: a, Run: func() (Hooks, error) { return Hooks{}, errors.New("no") }}); err == nil {
		t.Fatal("a failing Run started")
	}
	f := newFake(false)
	unowned := start(t, svc, "bash", "unowned", nil, f)
	want := "too many background tasks: 3 are running on this server; stop one with task_kill or try again later"
	for name, owner := range map[string]*session.Session{"a": a, "b": b, "unowned": nil, "c": c} {
		_, err := svc.Start(Spec{Kind: "bash", Label: "one more", Owner: owner, Run: newFake(false).run})
		if err == nil || err.Error() != want || !errors.Is(err, ErrTooMany) {
			t.Errorf("%s over the server's limit: %v, want %q wrapping ErrTooMany", name, err, want)
		}
	}
	if n := svc.Live(); n != 3 {
		t.Errorf("Live() = %d, want 3", n)
	}
	f.finish(Outcome{Status: Completed})
	settled(t, svc, unowned.ID)
	// c, refused before it had a task, starts one now.
	start(t, svc, "bash", "c1", c, newFake(false))
	c.End()
}

func TestIDsPerKindAndFailedStarts(t *testing.T) {
	svc := newService(t, Config{})
	var ids []string
	add := func(kind string) {
		ids = append(ids, start(t, svc, kind, "label", nil, newFake(kind == "bash")).ID)
	}
	add("bash")
	add("calc")
	boom := errors.New("spawn failed: no such file")
	if _, err := svc.Start(Spec{Kind: "bash", Label: "x", Run: func() (Hooks, error) { return Hooks{}, boom }}); err != boom {
		t.Errorf("Run's error: got %v, want it as is", err)
	}
	if _, err := svc.Start(Spec{Kind: "bash", Label: "x", Run: func() (Hooks, error) { return Hooks{Cancel: func(string) error { return nil }}, nil }}); err == nil {
		t.Error("hooks without Done accepted")
	}
	if _, err := svc.Start(Spec{Kind: "bash", Label: ""}); err == nil {
		t.Error("nil Run accepted")
	}
	add("bash")
	add("calc")
	add("bash")
	if want := []string{"bash-1", "calc-1", "bash-2", "calc-2", "bash-3"}; !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	snap, _ := svc.Get(nil, "bash-3")
	if snap.Kind != "bash" || snap.Label != "label" || snap.Status != Running || snap.Owner != "" || !snap.Finished.IsZero() || snap.Started.IsZero() {
		t.Errorf("snapshot %+v", snap)
	}
}

func TestIDsConcurrent(t *testing.T) {
	svc := newService(t, Config{MaxRunningPerSession: 1000})
	const n = 60
	var (
		mu  sync.Mutex
		ids []string
		wg  sync.WaitGroup
	)
	fail := errors.New("no")
	for i := range n {
		wg.Go(func() {
			run := newFake(false).run
			if i%3 == 0 {
				run = func() (Hooks, error) { return Hooks{}, fail }
			}
			snap, err := svc.Start(Spec{Kind: "k", Label: "x", Run: run})
			if err != nil {
				return
			}
			mu.Lock()
			ids = append(ids, snap.ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	var want []string
	for i := 1; i <= n-n/3; i++ {
		want = append(want, fmt.Sprintf("k-%d", i))
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("ids %v\nwant %v", ids, want)
	}
}

func TestFence(t *testing.T) {
	svc := newService(t, Config{})
	a, b := session.New("a", ""), session.New("b", "")
	sameID := session.New("a", "") // another session that happens to share a's id
	ta := start(t, svc, "bash", "a's", a, newFake(true))
	tu := start(t, svc, "calc", "unowned", nil, newFake(false))
	tb := start(t, svc, "bash", "b's", b, newFake(true))
	if ta.Owner != "a" || tu.Owner != "" {
		t.Errorf("owners %q %q", ta.Owner, tu.Owner)
	}

	ids := func(snaps []Snapshot) []string {
		var out []string
		for _, s := range snaps {
			out = append(out, s.ID)
		}
		return out
	}
	for _, tc := range []struct {
		caller *session.Session
		want   []string
	}{
		{a, []string{"bash-1", "calc-1"}},
		{b, []string{"calc-1", "bash-2"}},
		{nil, []string{"calc-1"}},
		{sameID, []string{"calc-1"}},
	} {
		if got := ids(svc.List(tc.caller)); !slices.Equal(got, tc.want) {
			t.Errorf("List(%v) = %v, want %v", tc.caller, got, tc.want)
		}
	}

	ctx := context.Background()
	calls := map[string]func(*session.Session, string) error{
		"get":  func(c *session.Session, id string) error { _, err := svc.Get(c, id); return err },
		"read": func(c *session.Session, id string) error { _, _, err := svc.Read(c, id); return err },
		"kill": func(c *session.Session, id string) error { _, _, err := svc.Kill(c, id); return err },
		"wait": func(c *session.Session, id string) error {
			_, err := svc.Wait(ctx, c, id, time.Millisecond)
			return err
		},
	}
	for name, call := range calls {
		for _, caller := range []*session.Session{b, nil, sameID} {
			err := call(caller, ta.ID)
			if err == nil || err.Error() != "task bash-1 belongs to another session" || !errors.Is(err, ErrForbidden) {
				t.Errorf("%s(%v, bash-1): %v", name, caller, err)
			}
		}
		err := call(a, "bash-99")
		if err == nil || err.Error() != "unknown task bash-99" || !errors.Is(err, ErrUnknown) {
			t.Errorf("%s(unknown): %v", name, err)
		}
	}
	// Everyone reaches the unowned task; the owner reaches its own.
	for _, caller := range []*session.Session{a, b, nil} {
		if _, err := svc.Wait(ctx, caller, tu.ID, time.Millisecond); err != nil {
			t.Errorf("wait unowned from %v: %v", caller, err)
		}
	}
	if res, _, err := svc.Kill(b, tb.ID); err != nil || res != KillRequested {
		t.Errorf("owner kill: %v %v", res, err)
	}
	if res, _, err := svc.Kill(nil, tu.ID); err != nil || res != KillRequested {
		t.Errorf("unowned kill: %v %v", res, err)
	}
}

func TestReadStream(t *testing.T) {
	svc := newService(t, Config{})
	f := newFake(true)
	snap := start(t, svc, "bash", "printf", nil, f)
	read := func() (string, Snapshot) {
		t.Helper()
		text, s, err := svc.Read(nil, snap.ID)
		if err != nil {
			t.Fatal(err)
		}
		return text, s
	}
	f.write("line one\n")
	if text, s := read(); text != "line one\n" || s.Status != Running || s.Reported {
		t.Errorf("read 1: %q %+v", text, s)
	}
	if text, _ := read(); text != "" {
		t.Errorf("read 2 (nothing new): %q", text)
	}
	f.write("last")
	f.finish(Outcome{Status: Completed, Detail: "exit code: 0", Output: "ignored for streams"})
	settled(t, svc, snap.ID)
	if s, _ := svc.Get(nil, snap.ID); s.Reported {
		t.Error("reported before anyone read it")
	}
	if text, s := read(); text != "last" || s.Status != Completed || s.Detail != "exit code: 0" || !s.Reported || s.Finished.IsZero() {
		t.Errorf("read after finish: %q %+v", text, s)
	}
	if text, _ := read(); text != "" {
		t.Errorf("read after the last: %q", text)
	}
}

func TestReadFinalOutput(t *testing.T) {
	svc := newService(t, Config{})
	f := newFake(false)
	snap := start(t, svc, "calc", "2+2", nil, f)
	if text, s, err := svc.Read(nil, snap.ID); err != nil || text != "" || s.Status != Running || s.Reported {
		t.Errorf("read while running: %q %+v %v", text, s, err)
	}
	f.finish(Outcome{Status: Completed, Output: "4\n"})
	settled(t, svc, snap.ID)
	for range 2 { // repeatable
		if text, s, err := svc.Read(nil, snap.ID); err != nil || text != "4\n" || s.Status != Completed || !s.Reported {
			t.Errorf("read after finish: %q %+v %v", text, s, err)
		}
	}
}

// TestExitFacts: the facts a producer reports travel, unparsed, to the
// snapshots of the finished task, as a copy nobody else can change; a live
// task, a final-output task without facts and a producer failure have none.
func TestExitFacts(t *testing.T) {
	svc := newService(t, Config{})
	code := func(n int) *int { return &n }
	three := code(3)
	for _, tc := range []struct {
		name string
		out  Outcome
		want Exit
	}{
		{"exit 3", Outcome{Status: Completed, Detail: "exit code: 3", Exit: Exit{Code: three}}, Exit{Code: code(3)}},
		{"signal", Outcome{Status: Killed, Detail: "signal: SIGTERM", Exit: Exit{Signal: "SIGTERM"}}, Exit{Signal: "SIGTERM"}},
		{"final output", Outcome{Status: Completed, Output: "4"}, Exit{}},
		{"producer failure", Outcome{Status: Completed, Exit: Exit{Code: code(0)}, Err: errors.New("broke")}, Exit{}},
	} {
		f := newFake(false)
		snap := start(t, svc, "calc", "x", nil, f)
		if diff := cmp.Diff(Exit{}, snap.Exit); diff != "" {
			t.Errorf("%s: live task has facts (-want +got):\n%s", tc.name, diff)
		}
		f.finish(tc.out)
		got, err := svc.Wait(context.Background(), nil, snap.ID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		*three = 99 // the producer's variable, changed after the fact
		if got.Exit.Code != nil {
			*got.Exit.Code = 98 // a holder of the snapshot, changing it
		}
		again, _ := svc.Get(nil, snap.ID)
		if diff := cmp.Diff(tc.want, again.Exit); diff != "" {
			t.Errorf("%s: facts (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestKill(t *testing.T) {
	svc := newService(t, Config{})
	f := newFake(true)
	f.onCancel = nil // ends only when the test says so
	snap := start(t, svc, "bash", "sleep 60", nil, f)

	res, s, err := svc.Kill(nil, snap.ID)
	if err != nil || res != KillRequested || s.Status != Stopping || !s.Reported {
		t.Fatalf("kill: %v %+v %v", res, s, err)
	}
	// A second kill while stopping: requested, Cancel not called again.
	if res, _, err := svc.Kill(nil, snap.ID); err != nil || res != KillRequested {
		t.Errorf("second kill: %v %v", res, err)
	}
	if got := f.cancelReasons(); !slices.Equal(got, []string{ReasonKill}) {
		t.Errorf("cancel reasons %q", got)
	}
	f.finish(Outcome{Status: Killed, Detail: "signal: SIGTERM"})
	settled(t, svc, snap.ID)
	res, s, err = svc.Kill(nil, snap.ID)
	if err != nil || res != KillAlreadyTerminal || s.Status != Killed || s.Detail != "signal: SIGTERM" || !s.Reported {
		t.Errorf("kill after end: %v %+v %v", res, s, err)
	}

	// A finished, unreported task: already-terminal marks it reported.
	g := newFake(false)
	snap = start(t, svc, "calc", "x", nil, g)
	g.finish(Outcome{Status: Completed})
	settled(t, svc, snap.ID)
	if res, s, _ := svc.Kill(nil, snap.ID); res != KillAlreadyTerminal || !s.Reported {
		t.Errorf("kill finished: %v %+v", res, s)
	}
}

func TestKillCancelFails(t *testing.T) {
	svc := newService(t, Config{})
	f := newFake(false)
	boom := errors.New("operation not permitted")
	f.cancelErr, f.onCancel = boom, nil
	snap := start(t, svc, "calc", "x", nil, f)
	res, s, err := svc.Kill(nil, snap.ID)
	if !errors.Is(err, boom) || err.Error() != "kill task calc-1: operation not permitted" || res != "" {
		t.Fatalf("kill: %v %v", res, err)
	}
	if s, _ = svc.Get(nil, snap.ID); s.Status != Running || s.Reported {
		t.Errorf("task touched by a failed kill: %+v", s)
	}
	f.finish(Outcome{Status: Completed})
}

// A Cancel that fails because the work ended meanwhile: the kill reports
// already-terminal, and the task, settled during the kill, is reported
// before the listeners see it.
func TestKillRacingExit(t *testing.T) {
	svc := newService(t, Config{})
	seen := make(chan Snapshot, 1)
	svc.OnFinish(func(s Snapshot, _ *session.Session) { seen <- s })
	f := newFake(false)
	f.onCancel = func(string) {
		f.finish(Outcome{Status: Completed, Detail: "exit code: 0"})
		f.mu.Lock()
		f.cancelErr = errors.New("process already exited")
		f.mu.Unlock()
		<-seen // settled, listeners ran
	}
	snap := start(t, svc, "calc", "x", nil, f)
	res, s, err := svc.Kill(nil, snap.ID)
	if err != nil || res != KillAlreadyTerminal || s.Status != Completed || !s.Reported {
		t.Errorf("kill racing exit: %v %+v %v", res, s, err)
	}
}

func TestKillRacingExitListenerSeesReported(t *testing.T) {
	svc := newService(t, Config{})
	seen := make(chan Snapshot, 1)
	svc.OnFinish(func(s Snapshot, _ *session.Session) { seen <- s })
	f := newFake(false)
	f.onCancel = func(string) {
		f.finish(Outcome{Status: Killed, Detail: "signal: SIGTERM"})
		if s := <-seen; !s.Reported {
			t.Errorf("listener saw an unreported task while a kill was in progress: %+v", s)
		}
	}
	snap := start(t, svc, "calc", "x", nil, f)
	if res, s, err := svc.Kill(nil, snap.ID); err != nil || res != KillRequested || s.Status != Killed {
		t.Errorf("kill: %v %+v %v", res, s, err)
	}
}

func TestWaitTimeoutAndFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := newService(t, Config{})
		listened := make(chan Snapshot, 10)
		svc.OnFinish(func(s Snapshot, _ *session.Session) { listened <- s })
		f := newFake(false)
		snap := start(t, svc, "calc", "x", nil, f)
		ctx := context.Background()

		t0 := time.Now()
		s, err := svc.Wait(ctx, nil, snap.ID, 1500*time.Millisecond)
		if err != nil || s.Status != Running || s.Reported || time.Since(t0) != 1500*time.Millisecond {
			t.Errorf("timeout: %+v %v after %v", s, err, time.Since(t0))
		}
		t0 = time.Now()
		if _, err := svc.Wait(ctx, nil, snap.ID, 200*time.Microsecond); err != nil || time.Since(t0) != 200*time.Microsecond {
			t.Errorf("0.2 ms: %v after %v, want 200µs", err, time.Since(t0))
		}

		go func() {
			time.Sleep(time.Second)
			f.finish(Outcome{Status: Completed, Detail: "exit code: 0"})
		}()
		t0 = time.Now()
		s, err = svc.Wait(ctx, nil, snap.ID, 30*time.Second)
		if err != nil || s.Status != Completed || !s.Reported || time.Since(t0) != time.Second {
			t.Errorf("finish: %+v %v after %v", s, err, time.Since(t0))
		}
		if l := <-listened; !l.Reported {
			t.Errorf("listener saw %+v, want a reported snapshot", l)
		}
		// Waiting on a finished task returns at once.
		if s, err := svc.Wait(ctx, nil, snap.ID, time.Millisecond); err != nil || s.Status != Completed || time.Since(t0) != time.Second {
			t.Errorf("finished: %+v %v", s, err)
		}
	})
}

func TestWaitInvalidTimeout(t *testing.T) {
	svc := newService(t, Config{})
	for _, d := range []time.Duration{0, -1, -time.Millisecond, math.MinInt64} {
		// Checked before the id.
		_, err := svc.Wait(context.Background(), nil, "nope-1", d)
		if err == nil || err.Error() != errInvalidTimeout(d).Error() || !errors.Is(err, ErrInvalidTimeout) {
			t.Errorf("Wait(%v): %v", d, err)
		}
	}
}

func TestWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := newService(t, Config{})
		f := newFake(false)
		snap := start(t, svc, "calc", "x", nil, f)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := svc.Wait(ctx, nil, snap.ID, time.Second); err != ErrWaitAborted {
			t.Errorf("cancelled before: %v", err)
		}

		ctx, cancel = context.WithCancel(context.Background())
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		t0 := time.Now()
		if _, err := svc.Wait(ctx, nil, snap.ID, 5*time.Second); err == nil || err.Error() != "wait aborted" || time.Since(t0) != time.Second {
			t.Errorf("cancelled during: %v after %v", err, time.Since(t0))
		}
		if s, _ := svc.Get(nil, snap.ID); s.Reported {
			t.Error("an aborted wait marked the task reported")
		}

		// A finished task wins over a cancelled context.
		f.finish(Outcome{Status: Completed})
		settled(t, svc, snap.ID)
		if s, err := svc.Wait(ctx, nil, snap.ID, time.Second); err != nil || s.Status != Completed || !s.Reported {
			t.Errorf("finished, ctx cancelled: %+v %v", s, err)
		}
	})
}

// The cancellation wakes the wait, but the task finishes before the wait
// looks: the finish wins, and the task is reported before the listeners run.
func TestWaitCancelRacingFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := newService(t, Config{})
		seen := make(chan Snapshot, 1)
		svc.OnFinish(func(s Snapshot, _ *session.Session) { seen <- s })
		f := newFake(false)
		snap := start(t, svc, "calc", "x", nil, f)

		woke, proceed := make(chan struct{}), make(chan struct{})
		testHookWaitWoke = func() { close(woke); <-proceed }
		defer func() { testHookWaitWoke = nil }()

		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			s   Snapshot
			err error
		}
		got := make(chan result)
		go func() {
			s, err := svc.Wait(ctx, nil, snap.ID, time.Minute)
			got <- result{s, err}
		}()
		synctest.Wait() // the wait is parked
		cancel()
		<-woke // the wait woke for the cancellation
		f.finish(Outcome{Status: Completed, Detail: "exit code: 0"})
		listened := <-seen
		close(proceed)
		r := <-got
		if r.err != nil || r.s.Status != Completed || !r.s.Reported {
			t.Errorf("wait: %+v %v", r.s, r.err)
		}
		if !listened.Reported {
			t.Error("the listener saw the task unreported although a wait saw the finish")
		}
	})
}

// Whatever the interleaving, a wait returns the finish exactly when it marked
// the task reported before the listeners ran.
func TestWaitCancelRacingFinishStress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := newService(t, Config{})
		seen := make(chan Snapshot, 1)
		svc.OnFinish(func(s Snapshot, _ *session.Session) { seen <- s })
		outcomes := map[bool]int{}
		for range 200 {
			f := newFake(false)
			snap := start(t, svc, "calc", "x", nil, f)
			ctx, cancel := context.WithCancel(context.Background())
			type result struct {
				s   Snapshot
				err error
			}
			got := make(chan result)
			go func() {
				s, err := svc.Wait(ctx, nil, snap.ID, time.Minute)
				got <- result{s, err}
			}()
			synctest.Wait()
			go cancel()
			f.finish(Outcome{Status: Completed})
			r, listened := <-got, <-seen
			finished := r.err == nil
			if finished && (r.s.Status != Completed || !r.s.Reported) || !finished && r.err != ErrWaitAborted {
				t.Fatalf("wait: %+v %v", r.s, r.err)
			}
			if listened.Reported != finished {
				t.Fatalf("wait returned the finish: %v, listener saw reported: %v", finished, listened.Reported)
			}
			outcomes[finished]++
		}
		t.Logf("finish won %d times, cancellation %d times", outcomes[true], outcomes[false])
	})
}

func TestListeners(t *testing.T) {
	logs := captureLogs(t)
	svc := newService(t, Config{})
	a := session.New("a", "")
	type call struct {
		id    string
		owner *session.Session
	}
	calls := make(chan call, 10)
	svc.OnFinish(func(Snapshot, *session.Session) { panic("listener bug") })
	remove := svc.OnFinish(func(s Snapshot, o *session.Session) { calls <- call{s.ID, o} })

	f := newFake(false)
	snap := start(t, svc, "calc", "x", a, f)
	f.finish(Outcome{Status: Completed})
	if c := <-calls; c.id != snap.ID || c.owner != a {
		t.Errorf("listener got %+v", c)
	}
	settled(t, svc, snap.ID)
	svc.Close() // waits for the listeners that run
	if !strings.Contains(logs.String(), "finish listener panicked") || !strings.Contains(logs.String(), "listener bug") {
		t.Errorf("panic not logged: %s", logs)
	}
	remove()
	remove()
	if len(calls) != 0 {
		t.Errorf("listener called %d more times", len(calls))
	}
}

// TestNotify: a notice is queued, keyed by the task id, only for a
// finished task of an owner that has not learnt how it ended.
func TestNotify(t *testing.T) {
	svc := newService(t, Config{})
	a := session.New("a", "")
	defer a.End()
	fakes := map[string]*fake{}
	ids := map[string]string{}
	for _, name := range []string{"live", "read", "unowned", "unread"} {
		owner := a
		if name == "unowned" {
			owner = nil
		}
		fakes[name] = newFake(false)
		ids[name] = start(t, svc, "job", name, owner, fakes[name]).ID
	}
	for _, name := range []string{"read", "unowned", "unread"} {
		fakes[name].finish(Outcome{Status: Completed})
		settled(t, svc, ids[name])
	}
	if _, _, err := svc.Read(a, ids["read"]); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"live", "read", "unowned"} {
		if svc.Notify(ids[name], name) {
			t.Errorf("a notice was queued for the %s task", name)
		}
	}
	if svc.Notify("job-99", "unknown") {
		t.Error("a notice was queued for an unknown task")
	}
	if !svc.Notify(ids["unread"], "unread") {
		t.Error("no notice was queued for the unread task")
	}
	if got := a.TakeNotices(); len(got) != 1 || got[0] != "unread" {
		t.Fatalf("notices %q", got)
	}
	// Keyed by the id: the task tools withdraw it when the model reads
	// the task.
	if !svc.Notify(ids["unread"], "again") || !a.Withdraw(ids["unread"]) {
		t.Error("the notice was not queued keyed by the task id")
	}
}

// TestLogsGoToTheInjectedLogger: a panicking finish listener and a producer
// failure are logged to Config.Logger, and nothing reaches the default
// logger.
func TestLogsGoToTheInjectedLogger(t *testing.T) {
	global := captureLogs(t)
	injected := &lockedBuffer{}
	svc := newService(t, Config{Logger: slog.New(slog.NewTextHandler(injected, nil))})
	called := make(chan struct{}, 1)
	svc.OnFinish(func(Snapshot, *session.Session) { panic("listener bug") })
	svc.OnFinish(func(Snapshot, *session.Session) { called <- struct{}{} })

	f := newFake(false)
	snap := start(t, svc, "calc", "x", nil, f)
	f.finish(Outcome{Status: Completed, Err: errors.New("collector broke")})
	<-called // the panic did not stop the next listener
	svc.Close()
	logs := injected.String()
	for _, want := range []string{
		"level=ERROR msg=\"tasks: finish listener panicked\" task=" + snap.ID + " panic=\"listener bug\" stack=",
		"level=WARN msg=\"tasks: background task failed\" task=" + snap.ID + " err=\"collector broke\"",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("injected logger lacks %q:\n%s", want, logs)
		}
	}
	if got := global.String(); got != "" {
		t.Errorf("the default logger was used:\n%s", got)
	}
}

func TestProducerFailures(t *testing.T) {
	logs := captureLogs(t)
	svc := newService(t, Config{})
	for _, tc := range []struct {
		end    func(*fake)
		detail string
	}{
		{func(f *fake) { f.finish(Outcome{Status: Completed, Err: errors.New("collector broke")}) }, "collector broke"},
		{func(f *fake) { f.closeDone() }, "the producer ended without an outcome"},
		{func(f *fake) { f.finish(Outcome{Status: Running}) }, `the producer reported the non-final status "running"`},
	} {
		f := newFake(false)
		snap := start(t, svc, "calc", "x", nil, f)
		tc.end(f)
		settled(t, svc, snap.ID)
		s, _ := svc.Get(nil, snap.ID)
		if s.Status != Failed || s.Detail != tc.detail {
			t.Errorf("got %s %q, want failed %q", s.Status, s.Detail, tc.detail)
		}
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), snap.ID) {
			t.Errorf("no warning for %s: %s", snap.ID, logs)
		}
	}
}

func TestSessionEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := newService(t, Config{})
		listened := make(chan string, 10)
		svc.OnFinish(func(s Snapshot, _ *session.Session) { listened <- s.ID })
		a, b := session.New("a", ""), session.New("b", "")

		slow := newFake(true)
		slow.onCancel = func(string) { // takes 2 s to die, like a TERM trap
			go func() {
				time.Sleep(2 * time.Second)
				slow.finish(Outcome{Status: Killed, Detail: "signal: SIGKILL"})
			}()
		}
		fast, done := newFake(false), newFake(false)
		start(t, svc, "bash", "trap", a, slow)
		start(t, svc, "calc", "fast", a, fast)
		sd := start(t, svc, "calc", "done", a, done)
		sb := start(t, svc, "bash", "b's", b, newFake(true))
		done.finish(Outcome{Status: Completed})
		if id := <-listened; id != sd.ID {
			t.Errorf("listener called for %s", id)
		}

		t0 := time.Now()
		a.End()
		if time.Since(t0) != 2*time.Second {
			t.Errorf("End returned after %v, want 2s (awaiting the slow task)", time.Since(t0))
		}
		for _, f := range []*fake{slow, fast} {
			if got := f.cancelReasons(); !slices.Equal(got, []string{"owner disposed"}) {
				t.Errorf("cancel reasons %q", got)
			}
		}
		if got := svc.List(a); len(got) != 0 {
			t.Errorf("records left: %+v", got)
		}
		for _, id := range []string{"bash-1", "calc-1", "calc-2"} {
			if _, err := svc.Get(a, id); err == nil || err.Error() != "unknown task "+id {
				t.Errorf("after end, %s: %v", id, err)
			}
		}
		if s, err := svc.Get(b, sb.ID); err != nil || s.Status != Running {
			t.Errorf("b's task: %+v %v", s, err)
		}
		synctest.Wait()
		if len(listened) != 0 {
			t.Errorf("listeners called for %v", <-listened)
		}
		if _, err := svc.Start(Spec{Kind: "bash", Label: "x", Owner: a, Run: newFake(false).run}); !errors.Is(err, ErrOwnerEnded) {
			t.Errorf("start after end: %v", err)
		}
	})
}

// A start whose Run is in flight when the owner ends is refused, and its
// work is cancelled and awaited.
func TestStartRacingSessionEnd(t *testing.T) {
	svc := newService(t, Config{})
	a := session.New("a", "")
	f := newFake(false)
	running, release := make(chan struct{}), make(chan struct{})
	errc := make(chan error)
	go func() {
		_, err := svc.Start(Spec{Kind: "calc", Label: "x", Owner: a, Run: func() (Hooks, error) {
			close(running)
			<-release
			return f.run()
		}})
		errc <- err
	}()
	<-running
	a.End()
	close(release)
	if err := <-errc; !errors.Is(err, ErrOwnerEnded) {
		t.Errorf("start: %v", err)
	}
	if got := f.cancelReasons(); !slices.Equal(got, []string{"owner disposed"}) {
		t.Errorf("cancel reasons %q", got)
	}
	// The refused start used no number.
	if s := start(t, svc, "calc", "y", nil, newFake(false)); s.ID != "calc-1" {
		t.Errorf("next id %s", s.ID)
	}
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc := New(Config{})
		svc.AttachTools()
		calls := make(chan string, 10)
		svc.OnFinish(func(s Snapshot, _ *session.Session) { calls <- s.ID })
		a := session.New("a", "")
		slow := newFake(true)
		slow.onCancel = func(string) {
			go func() {
				time.Sleep(time.Second)
				slow.finish(Outcome{Status: Killed})
			}()
		}
		fast := newFake(false)
		start(t, svc, "bash", "x", a, slow)
		start(t, svc, "calc", "y", nil, fast)

		t0 := time.Now()
		svc.Close()
		if time.Since(t0) != time.Second {
			t.Errorf("Close returned after %v", time.Since(t0))
		}
		svc.Close()
		for _, f := range []*fake{slow, fast} {
			if got := f.cancelReasons(); !slices.Equal(got, []string{"tasks service disposed"}) {
				t.Errorf("cancel reasons %q", got)
			}
		}
		if len(calls) != 0 {
			t.Errorf("%d listener calls after Close", len(calls))
		}
		if s, err := svc.Get(a, "bash-1"); err != nil || s.Status != Killed {
			t.Errorf("record after Close: %+v %v", s, err)
		}
		a.End() // its end hook was unregistered: nothing to do
	})
}

func TestRetention(t *testing.T) {
	svc := newService(t, Config{MaxFinishedPerOwner: 2})
	a := session.New("a", "")
	live := start(t, svc, "bash", "live", a, newFake(true))
	var ids []string
	for range 4 {
		f := newFake(false)
		s := start(t, svc, "calc", "x", a, f)
		f.finish(Outcome{Status: Completed})
		settled(t, svc, s.ID)
		ids = append(ids, s.ID)
	}
	// Unowned tasks are one group of their own.
	u := newFake(false)
	su := start(t, svc, "calc", "u", nil, u)
	u.finish(Outcome{Status: Completed})
	settled(t, svc, su.ID)

	var got []string
	for _, s := range svc.List(a) {
		got = append(got, s.ID)
	}
	if want := []string{live.ID, ids[2], ids[3], su.ID}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	if _, err := svc.Get(a, ids[0]); !errors.Is(err, ErrUnknown) {
		t.Errorf("dropped record: %v", err)
	}
}

func TestStartKill100Concurrently(t *testing.T) {
	svc := newService(t, Config{MaxRunningPerSession: 1000})
	sessions := []*session.Session{session.New("a", ""), session.New("b", ""), nil}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			owner := sessions[i%len(sessions)]
			snap, err := svc.Start(Spec{Kind: []string{"bash", "calc"}[i%2], Label: "x", Owner: owner, Run: newFake(i%2 == 0).run})
			if err != nil {
				t.Error(err)
				return
			}
			if res, _, err := svc.Kill(owner, snap.ID); err != nil || res != KillRequested && res != KillAlreadyTerminal {
				t.Errorf("kill %s: %v %v", snap.ID, res, err)
			}
			if s, err := svc.Wait(context.Background(), owner, snap.ID, time.Minute); err != nil || s.Status != Killed {
				t.Errorf("wait %s: %+v %v", snap.ID, s, err)
			}
		})
	}
	wg.Wait()
	var ids []string
	for _, s := range append(svc.List(sessions[0]), svc.List(sessions[1])...) {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) != 100 {
		t.Errorf("%d distinct tasks, want 100", len(ids))
	}
}

func TestSnapshotJSON(t *testing.T) {
	s := Snapshot{ID: "bash-1", Kind: "bash", Label: "ls", Status: Running, Started: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"bash-1","kind":"bash","label":"ls","owner":"","status":"running","detail":"","started":"2000-01-01T00:00:00Z","reported":false}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}
