package tasktool

import (
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
)

// notifier returns the finish listener: it tells an owner about a task it
// has not learnt the end of. A read or kill of the task can land after
// the snapshot the listener got; [tasks.Service.Notify] looks again and
// queues in one step, so the notice is either never queued or queued
// before the read, which then withdraws it. It logs to the service's
// logger: the notices are the service's, told by the tools.
func notifier(svc *tasks.Service) func(tasks.Snapshot, *session.Session) {
	log := svc.Logger()
	return func(s tasks.Snapshot, owner *session.Session) {
		if owner == nil || s.Reported {
			return
		}
		// Not queued: the task was reported meanwhile (nothing to say), or
		// the session ended (the notice is dropped, which is logged).
		if !svc.Notify(s.ID, Notice(s)) && owner.Ended() {
			log.Info("tool-tasks: finish notice dropped: the session has ended", "task", s.ID, "session", owner.ID())
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
