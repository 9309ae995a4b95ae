// Package tasks is the background task runtime (docs/spec.md §4.1): it gives
// work that outlives a tool call an id, an owner, a status and an output the
// model can read, wait for and stop, and it makes sure that no task outlives
// its owner session or the runtime itself.
//
// The runtime knows nothing of processes. A producer (the bash tool is one)
// hands [Service.Start] a [Spec] whose Run starts the work and returns
// [Hooks]: a Cancel function, a Done channel that delivers one [Outcome],
// and optionally a consuming Read. With Read the task is of the stream kind
// (each read returns what was produced since the previous one); without it,
// of the final-output kind (reads return "" while it runs and the outcome's
// Output, repeatably, once it has finished).
//
//	snap, err := svc.Start(tasks.Spec{Kind: "bash", Label: cmd, Owner: sess, Run: run})
//	text, snap, err := svc.Read(sess, snap.ID)            // consuming delta
//	snap, err = svc.Wait(ctx, sess, snap.ID, 30*time.Second) // finish or timeout
//	res, snap, err := svc.Kill(sess, snap.ID)             // requested / already-terminal
//
// # Contract
//
//   - Ids are "<kind>-<n>" with a counter per kind starting at 1. A number is
//     never reused, and a start that fails uses none: the number is taken
//     only once Run has succeeded, so concurrent starts of one kind run
//     their Run in parallel and are numbered in the order they complete.
//   - Start refuses, in this order: nothing attached ([Service.AttachTools]:
//     a task nobody can read or stop must not be started), a blank kind, a
//     blank label, the owner's running limit (running and stopping tasks
//     plus starts in flight, [Config.MaxRunningPerSession]), the same count
//     over all owners ([Config.MaxRunning]). It also refuses
//     after [Service.Close] and for an owner session that has ended. The
//     messages are exact (docs/spec.md); the errors wrap [ErrNoTools],
//     [ErrInvalidKind], [ErrInvalidLabel], [ErrTooMany], [ErrClosed] and
//     [ErrOwnerEnded] for errors.Is. An error of Run is returned as is.
//   - Status goes running → stopping (a cancel was requested) → one of
//     completed, killed, failed, and never back.
//   - The fence: a task with an owner is reachable only by that owner;
//     anyone else gets `task <id> belongs to another session`
//     ([ErrForbidden]). Ownership is identity of the *session.Session
//     pointer, not equality of ids: ids come from front ends and are not
//     checked for uniqueness, and a session object is what ends. A nil
//     caller reaches only unowned tasks, which everyone reaches. An id never
//     issued, or whose record was dropped, is `unknown task <id>`
//     ([ErrUnknown]). [Service.List] returns the caller's tasks and the
//     unowned ones, in start order.
//   - Reported: a task is reported once its owner has learnt how it ended,
//     and finish notices (tool/tasktool) are sent only for unreported tasks.
//     A read that starts when the task is finished, a kill, and a wait that
//     sees the finish mark it reported. When a task settles while a wait or
//     a kill on it is in progress, it is marked reported before the finish
//     listeners run, so whether a notice is sent does not depend on which
//     goroutine the scheduler runs first. [Service.Notify] queues a
//     finish notice only for a finished, unreported task, checking and
//     queueing under the lock that marks tasks reported.
//   - [Service.Read] of a stream task returns the Hooks.Read delta; the
//     snapshot it returns is taken just before that read, so a terminal
//     status guarantees the text is the rest of the output. Reads of one
//     task are serialized.
//   - [Service.Kill] of a finished task returns [KillAlreadyTerminal] and
//     marks it reported. Otherwise it calls Cancel first, outside any lock;
//     if Cancel fails and the task is still live, the task is untouched and
//     the error is returned (wrapped). If it fails because the task ended
//     meanwhile, the kill reports [KillAlreadyTerminal]. Once Cancel
//     succeeded the task is stopping (unless it already settled) and
//     reported: [KillRequested]. Killing a stopping task does not call
//     Cancel again.
//   - [Service.Wait] takes a timeout that must be positive (checked before
//     the id; the error quotes it in milliseconds, as the model gives it to
//     task_output). It returns the snapshot at the finish, or the
//     still-running snapshot when the timeout fires (not an error). A
//     cancelled context gives [ErrWaitAborted] (`wait aborted`), unless the
//     task has finished by the time the wait looks: the finish wins. A
//     waiting goroutine is parked on channels; nothing polls.
//   - A task whose producer returns [Hooks.Terminal] takes input
//     ([Service.Input]) and has a screen ([Service.Terminal]), behind the
//     same fence; a task without one is [ErrNoTerminal], and input to a task
//     that is no longer running is [ErrFinished], nothing written
//     (docs/spec.md §4.2a). [Service.Changed] gives the channels a waiter
//     parks on until the next output (Hooks.Changed) or the finish.
//   - Finish listeners ([Service.OnFinish]) are called once per task, after
//     it settled, on the goroutine that watched it, in registration order,
//     each with a snapshot taken just before its call. A panicking listener
//     is recovered and logged ([Config.Logger]). Listeners are not called for tasks ended by
//     their owner's end or by Close, nor for any task after Close started. A
//     listener must not call Close.
//   - Settled listeners ([Service.OnSettled]) are called once for every task
//     that settles, however it ended (by itself, a kill, its owner's end or
//     Close), with its settled snapshot, on the watching goroutine, before
//     the finish listeners. They are for records of every end (the audit
//     log's task-end line, metrics), which finish notices are not. A panic
//     is recovered and logged; Close returns after their calls for the tasks
//     it ended.
//   - A producer failure (Outcome.Err, a Done closed without an outcome, or
//     an outcome whose status is not terminal) settles the task failed with
//     the error text as detail and no [Exit] facts, and logs a warning
//     ([Config.Logger]).
//   - The snapshot of a finished task carries its outcome's [Exit] (an exit
//     code or a signal) as data; Detail stays text for the model, and
//     nobody needs to parse it back.
//   - Session end: the first time a session owns a task, the service
//     registers one end hook on it. When the session ends, every live task it
//     owns is cancelled with reason "owner disposed" and awaited, without
//     finish listeners, and then all its records are dropped. A start racing
//     the end is refused and its work cancelled and awaited by Start.
//   - Retention: each owner (and the unowned tasks, as one group) keeps at
//     most [Config.MaxFinishedPerOwner] finished records; the one that
//     finished first is dropped first. Live tasks are never dropped.
//   - [Service.Close] cancels every live task with reason "tasks service
//     disposed", waits for them, for starts in flight and for running
//     listeners, and calls no listener for them. Later starts fail with
//     [ErrClosed]; the records stay readable.
//
// # Producers
//
// Cancel may be called more than once and concurrently (a kill racing the
// owner's end), and after the work ended; it should only request the end and
// return. Done must deliver an outcome (or be closed) eventually, in
// particular after Cancel: the owner's end and Close wait for it. Read must
// not block for long. The service never holds its lock while it calls a hook.
//
// Concurrency: a Service is safe for concurrent use. It starts one goroutine
// per task, which waits on Done, settles the task and calls the listeners;
// Close waits for all of them.
package tasks
