package tasktool

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
)

// TestNotifierWithdrawsWhenReportedMeanwhile plays the gap between the
// snapshot a finish listener is given and its notice being queued: the
// model reads the finished task in that gap. The listener, holding a stale
// unreported snapshot, must not leave a notice behind.
func TestNotifierWithdrawsWhenReportedMeanwhile(t *testing.T) {
	svc := tasks.New(tasks.Config{})
	defer svc.Close()
	defer svc.AttachTools()()
	owner := session.New("s", "")
	defer owner.End()
	done := make(chan tasks.Outcome, 1)
	snap, err := svc.Start(tasks.Spec{Kind: "job", Label: "x", Owner: owner, Run: func() (tasks.Hooks, error) {
		return tasks.Hooks{Cancel: func(string) error { return nil }, Done: done}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	finished := make(chan tasks.Snapshot, 1)
	defer svc.OnFinish(func(s tasks.Snapshot, _ *session.Session) { finished <- s })()
	done <- tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0"}
	stale := <-finished
	if stale.Reported {
		t.Fatal("setup: the task was reported already")
	}
	if _, _, err := svc.Read(owner, snap.ID); err != nil { // the read in the gap
		t.Fatal(err)
	}
	notifier(svc)(stale, owner)
	if got := owner.TakeNotices(); len(got) != 0 {
		t.Fatalf("a notice for a task read meanwhile was left: %q", got)
	}
	// Without the read, the notice stays.
	other, _ := svc.Start(tasks.Spec{Kind: "job", Label: "y", Owner: owner, Run: func() (tasks.Hooks, error) {
		d := make(chan tasks.Outcome, 1)
		d <- tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0"}
		return tasks.Hooks{Cancel: func(string) error { return nil }, Done: d}, nil
	}})
	s := <-finished
	if s.ID != other.ID {
		t.Fatalf("finished %s", s.ID)
	}
	owner.TakeNotices() // the plugin is not loaded here: nothing else queues
	notifier(svc)(s, owner)
	if got := owner.TakeNotices(); len(got) != 1 {
		t.Fatalf("notices %q", got)
	}
}

// TestNotifierLogsToTheServiceLogger: a notice for an ended session is
// dropped and logged where the task runtime logs.
func TestNotifierLogsToTheServiceLogger(t *testing.T) {
	var buf bytes.Buffer
	svc := tasks.New(tasks.Config{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	defer svc.Close()
	owner := session.New("s", "")
	owner.End()
	notifier(svc)(tasks.Snapshot{ID: "job-1", Kind: "job", Label: "x", Status: tasks.Completed}, owner)
	want := `level=INFO msg="tool-tasks: finish notice dropped: the session has ended" task=job-1 session=s`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("log %q lacks %q", buf.String(), want)
	}
}

// TestNotifierNeverHandsOutAReportedTasksNotice: the model reads a
// finished task in the gap between the listener's snapshot and its
// notice being queued, while a result of the session takes the pending
// notices (a concurrent call's). That result must not get the notice: it
// would tell the model of a finish it has just read. The taker wakes on
// the session's wake-up, as soon as anything is queued; many rounds make
// the moment it takes land anywhere in the listener's run.
func TestNotifierNeverHandsOutAReportedTasksNotice(t *testing.T) {
	svc := tasks.New(tasks.Config{})
	defer svc.Close()
	defer svc.AttachTools()()
	owner := session.New("s", "")
	defer owner.End()
	finished := make(chan tasks.Snapshot, 1)
	defer svc.OnFinish(func(s tasks.Snapshot, _ *session.Session) { finished <- s })()
	notify := notifier(svc)
	for round := range 3000 {
		snap, err := svc.Start(tasks.Spec{Kind: "job", Label: "x", Owner: owner, Run: func() (tasks.Hooks, error) {
			d := make(chan tasks.Outcome, 1)
			d <- tasks.Outcome{Status: tasks.Completed}
			return tasks.Hooks{Cancel: func(string) error { return nil }, Done: d}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		stale := <-finished
		if _, _, err := svc.Read(owner, snap.ID); err != nil { // the read in the gap
			t.Fatal(err)
		}
		stop, taken := make(chan struct{}), make(chan []string, 1)
		go func() {
			select {
			case <-owner.Notices():
			case <-stop:
			}
			taken <- owner.TakeNotices()
		}()
		notify(stale, owner)
		close(stop)
		if got := <-taken; len(got) != 0 {
			t.Fatalf("round %d: a result got the notice of a task read before it was queued: %q", round, got)
		}
	}
}
