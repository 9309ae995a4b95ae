package tasktool

import (
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
)

// notifier returns the finish listener: it tells an owner about a task it
// has not learnt the end of. A read or kill of the task can land between
// the snapshot the listener got and the notice being queued; it withdraws
// nothing then, so the listener looks again after queueing and withdraws
// the notice itself when the task has been reported meanwhile. It logs to
// the service's logger: the notices are the service's, told by the tools.
func notifier(svc *tasks.Service) func(tasks.Snapshot, *session.Session) {
	log := svc.Logger()
	return func(s tasks.Snapshot, owner *session.Session) {
		if owner == nil || s.Reported {
			return
		}
		if !owner.NotifyKey(s.ID, Notice(s)) {
			log.Info("tool-tasks: finish notice dropped: the session has ended", "task", s.ID, "session", owner.ID())
			return
		}
		if now, err := svc.Get(owner, s.ID); err != nil || now.Reported {
			owner.Withdraw(s.ID)
		}
	}
}

// withdrawStale withdraws a queued finish notice of a task the model has
// just seen finished (read or killed after it ended): docs/spec.md §4.3 sends no
// notice for a task read after it finished, and one still waiting for
// delivery would now only repeat what the model knows.
func withdrawStale(s *session.Session, snap tasks.Snapshot) {
	if s != nil && snap.Status.Terminal() {
		s.Withdraw(snap.ID)
	}
}
