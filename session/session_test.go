package session_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/session"
)

func TestIDAndCwd(t *testing.T) {
	for _, tc := range []struct{ id, cwd string }{
		{"mcp-1", "/work"},
		{"cli", ""},
	} {
		s := session.New(tc.id, tc.cwd)
		if s.ID() != tc.id || s.Cwd() != tc.cwd {
			t.Errorf("New(%q, %q): ID() = %q, Cwd() = %q", tc.id, tc.cwd, s.ID(), s.Cwd())
		}
	}
}

// TestHooksRunLIFO registers hooks 0..n-1, cancels some, ends the session and
// checks which ran, in which order.
func TestHooksRunLIFO(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hooks  int
		cancel []int
		want   []int
	}{
		{"none", 0, nil, nil},
		{"one", 1, nil, []int{0}},
		{"reverse order", 4, nil, []int{3, 2, 1, 0}},
		{"cancelled ones skipped", 5, []int{1, 4}, []int{3, 2, 0}},
		{"cancel twice", 3, []int{1, 1}, []int{2, 0}},
		{"all cancelled", 2, []int{0, 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := session.New("s", "")
			var ran []int
			cancels := make([]func(), tc.hooks)
			for i := range tc.hooks {
				cancels[i] = s.OnEnd(func() { ran = append(ran, i) })
			}
			for _, i := range tc.cancel {
				cancels[i]()
			}
			if s.Ended() {
				t.Fatal("Ended() before End")
			}
			s.End()
			if diff := cmp.Diff(tc.want, ran); diff != "" {
				t.Errorf("hooks run (-want +got):\n%s", diff)
			}
			if !s.Ended() {
				t.Error("Ended() = false after End")
			}
			select {
			case <-s.Done():
			default:
				t.Error("Done() not closed after End returned")
			}

			// Neither a repeated End nor a late cancel runs anything again.
			for _, cancel := range cancels {
				cancel()
			}
			s.End()
			if diff := cmp.Diff(tc.want, ran); diff != "" {
				t.Errorf("hooks after a second End (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHookCancelsHookNotYetRun(t *testing.T) {
	s := session.New("s", "")
	var ran []string
	cancelFirst := s.OnEnd(func() { ran = append(ran, "first") })
	s.OnEnd(func() { ran = append(ran, "second"); cancelFirst() })
	s.End()
	if diff := cmp.Diff([]string{"second"}, ran); diff != "" {
		t.Errorf("hooks run (-want +got):\n%s", diff)
	}
}

// TestConcurrentEndRunsHooksOnce is for -race: many goroutines end the
// session at once; the hooks run once, and every End returns after them.
func TestConcurrentEndRunsHooksOnce(t *testing.T) {
	s := session.New("s", "")
	const hooks, enders = 10, 8
	var runs atomic.Int64
	for range hooks {
		s.OnEnd(func() { runs.Add(1) })
	}
	var wg sync.WaitGroup
	for range enders {
		wg.Go(func() {
			s.End()
			if n := runs.Load(); n != hooks {
				t.Errorf("End returned after %d hook runs, want %d", n, hooks)
			}
		})
	}
	wg.Wait()
	if n := runs.Load(); n != hooks {
		t.Errorf("hooks ran %d times in all, want %d", n, hooks)
	}
}

// TestEndWaitsForRunningHooks holds a hook open and checks that other End
// calls, and Done, wait for it while Ended is already true.
func TestEndWaitsForRunningHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := session.New("s", "")
		release := make(chan struct{})
		var ran atomic.Bool
		s.OnEnd(func() { ran.Store(true) })
		s.OnEnd(func() { <-release })

		var returned atomic.Int64
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { s.End(); returned.Add(1) })
		}
		synctest.Wait() // one End is in the blocking hook, the others wait for it
		if !s.Ended() {
			t.Error("Ended() = false while the hooks run")
		}
		if n := returned.Load(); n != 0 {
			t.Errorf("%d End calls returned while a hook was still running", n)
		}
		select {
		case <-s.Done():
			t.Error("Done() closed while a hook was still running")
		default:
		}

		close(release)
		wg.Wait()
		if !ran.Load() {
			t.Error("the earlier hook did not run")
		}
		<-s.Done()
	})
}

func TestOnEndAfterEndRunsAtOnce(t *testing.T) {
	s := session.New("s", "")
	s.End()
	runs := 0
	cancel := s.OnEnd(func() { runs++ })
	if runs != 1 {
		t.Fatalf("hook registered after End ran %d times by the time OnEnd returned, want 1", runs)
	}
	cancel()
	s.End()
	if runs != 1 {
		t.Errorf("hook registered after End ran %d times in all, want 1", runs)
	}
}

// captureLogs points the default slog logger at a buffer for the test.
func captureLogs(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

func TestPanickingHookIsContained(t *testing.T) {
	logs := captureLogs(t)
	s := session.New("sess-7", "")
	var ran []string
	s.OnEnd(func() { ran = append(ran, "first") })
	s.OnEnd(func() { panic("boom") })
	s.OnEnd(func() { panic(nil) })
	s.OnEnd(func() { ran = append(ran, "last") })
	s.End()
	if diff := cmp.Diff([]string{"last", "first"}, ran); diff != "" {
		t.Errorf("hooks run (-want +got):\n%s", diff)
	}
	for _, want := range []string{"end hook panicked", "session=sess-7", "boom", "panic called with nil argument"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	// A late hook's panic is contained too: OnEnd does not panic.
	logs.Reset()
	s.OnEnd(func() { panic("late boom") })
	if !strings.Contains(logs.String(), "late boom") {
		t.Errorf("log lacks the late hook's panic:\n%s", logs)
	}
}

func TestHookGoexitLosesNoHook(t *testing.T) {
	s := session.New("s", "")
	var ran []string
	s.OnEnd(func() { ran = append(ran, "first") })
	s.OnEnd(func() { runtime.Goexit() })
	s.OnEnd(func() { runtime.Goexit() })
	s.OnEnd(func() { ran = append(ran, "last") })
	var wg sync.WaitGroup
	wg.Go(s.End)
	wg.Wait()
	<-s.Done()
	if diff := cmp.Diff([]string{"last", "first"}, ran); diff != "" {
		t.Errorf("hooks run (-want +got):\n%s", diff)
	}
}

// TestReentrantHooks runs in a bubble so that a deadlock fails the test
// instead of hanging it.
func TestReentrantHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := session.New("s", "")
		var ran []string
		s.OnEnd(func() { ran = append(ran, "earlier") })
		s.OnEnd(func() {
			ran = append(ran, "hook: start")
			cancel := s.OnEnd(func() { ran = append(ran, "nested") })
			cancel()
			ran = append(ran, "hook: OnEnd returned")
		})
		s.End()
		want := []string{"hook: start", "nested", "hook: OnEnd returned", "earlier"}
		if diff := cmp.Diff(want, ran); diff != "" {
			t.Errorf("hooks run (-want +got):\n%s", diff)
		}
	})
}

func TestNotices(t *testing.T) {
	s := session.New("s", "")
	if got := s.TakeNotices(); got != nil {
		t.Errorf("TakeNotices() on a new session = %q, want nil", got)
	}
	for _, step := range []struct {
		notify []string
		want   []string
	}{
		{[]string{"one"}, []string{"one"}},
		{nil, nil},
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{[]string{""}, []string{""}},
	} {
		for _, text := range step.notify {
			if !s.Notify(text) {
				t.Errorf("Notify(%q) = false on a live session", text)
			}
		}
		if diff := cmp.Diff(step.want, s.TakeNotices()); diff != "" {
			t.Errorf("after notifying %q, TakeNotices() (-want +got):\n%s", step.notify, diff)
		}
	}
}

func TestNoticesAfterEnd(t *testing.T) {
	s := session.New("s", "")
	s.Notify("before")
	s.OnEnd(func() {
		if s.Notify("from a hook") {
			t.Error("Notify from an end hook = true, want false")
		}
	})
	s.End()
	if s.Notify("after") {
		t.Error("Notify after End = true, want false")
	}
	if diff := cmp.Diff([]string{"before"}, s.TakeNotices()); diff != "" {
		t.Errorf("TakeNotices() after End (-want +got):\n%s", diff)
	}
	select {
	case <-s.Notices():
		t.Error("a dropped notice woke the front end")
	default:
	}
}

func TestNoticesWakeUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := session.New("s", "")
		taken := make(chan []string)
		go func() {
			var all []string
			for len(all) < 3 {
				<-s.Notices()
				all = append(all, s.TakeNotices()...)
			}
			taken <- all
		}()

		synctest.Wait() // the front end is parked on Notices
		s.Notify("1")
		s.Notify("2") // coalesced with the first wake-up if not yet taken
		synctest.Wait()
		s.Notify("3")
		if diff := cmp.Diff([]string{"1", "2", "3"}, <-taken); diff != "" {
			t.Errorf("notices taken by the front end (-want +got):\n%s", diff)
		}
	})
}

// TestTakeNoticesConsumesWakeUp checks that a value on Notices always means
// there is something to take.
func TestTakeNoticesConsumesWakeUp(t *testing.T) {
	s := session.New("s", "")
	for i := range 3 {
		s.Notify(fmt.Sprint(i))
	}
	select {
	case <-s.Notices():
	default:
		t.Fatal("no wake-up after Notify")
	}
	s.Notify("3")
	s.TakeNotices()
	select {
	case <-s.Notices():
		t.Error("wake-up still pending after TakeNotices took everything")
	default:
	}
}

// TestConcurrentNotices is for -race: producers notify while a consumer
// takes; no notice is lost or duplicated, and each producer's notices keep
// their order.
func TestConcurrentNotices(t *testing.T) {
	s := session.New("s", "")
	const producers, each = 4, 100
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				s.Notify(fmt.Sprintf("%d:%d", p, i))
			}
		})
	}
	var got []string
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for len(got) < producers*each {
			<-s.Notices()
			got = append(got, s.TakeNotices()...)
		}
	}()
	wg.Wait()
	<-consumed
	next := make([]int, producers)
	for _, n := range got {
		var p, i int
		if _, err := fmt.Sscanf(n, "%d:%d", &p, &i); err != nil {
			t.Fatalf("notice %q: %v", n, err)
		}
		if i != next[p] {
			t.Fatalf("producer %d: got notice %d, want %d", p, i, next[p])
		}
		next[p]++
	}
}

func TestWithdraw(t *testing.T) {
	s := session.New("s", "")
	defer s.End()
	s.NotifyKey("bash-1", "one")
	s.Notify("plain")
	s.NotifyKey("bash-2", "two")
	if !s.Withdraw("bash-1") || s.Withdraw("bash-1") || s.Withdraw("") {
		t.Fatal("Withdraw reports")
	}
	if got := s.TakeNotices(); !slices.Equal(got, []string{"plain", "two"}) {
		t.Fatalf("got %q", got)
	}
	s.NotifyKey("bash-3", "three")
	s.Withdraw("bash-3")
	select {
	case <-s.Notices():
		t.Fatal("a wake-up stayed for a withdrawn notice")
	default:
	}
}
