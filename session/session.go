// Package session is the owner that tasks, tools and spill files belong to:
// one MCP session, one CLI run, one ACP session. A [Session] has an id and an
// optional working directory, a list of cleanup hooks that run once when it
// ends, and an inbox of notices for the model. It knows nothing of tasks or
// tools; they register hooks and post notices, and a front end ends the
// session and delivers the notices.
//
//	s := session.New("mcp-1", "/home/me/project")
//	forget := s.OnEnd(func() { os.Remove(spillPath) })
//	...
//	forget() // the file went earlier: nothing left to clean up
//	s.Notify("background task bash-1 (bash: make) finished [status: completed, exit code: 0]. Read its output with task_output.")
//	notices := s.TakeNotices() // delivered with the next tool result
//	s.End()                    // runs the hooks; returns when they have all run
//
// # Ending
//
// [Session.End] runs the hooks on the goroutine that called it first, one at
// a time, last registered first (like defer: what was set up last is torn
// down first). Every other call to End, concurrent or later, returns only
// once all hooks have run; [Session.Done] is closed at that moment, and
// [Session.Ended] is true from the moment End was first called. The hooks run
// once.
//
// A hook that panics is recovered and logged ([WithLogger]; slog's default
// logger otherwise) with the session id, the panic value and the stack,
// and the other hooks still run. A hook that ends its goroutine with [runtime.Goexit] (t.FailNow
// in a test cleanup) does not lose the others either: they run on the way
// out, and Done is still closed.
//
// A hook is never lost and never run twice. [Session.OnEnd] after End has been
// called runs the hook at once, synchronously, on the caller's goroutine,
// and returns a cancel func that does nothing. Such a late hook is not
// serialised with End's hooks that may still be running: waiting for them
// could deadlock a hook that itself waits for the goroutine calling OnEnd
// (a task's cleanup that awaits the task, say). A late hook's panic is
// contained and logged the same way.
//
// The cancel func returned by OnEnd unregisters a hook that has not started:
// before End, or during End for a hook that End has not reached yet (so one
// hook may cancel another). It may be called any number of times.
//
// # Re-entrancy
//
// Hooks may use the session: OnEnd from inside a hook runs the new hook at
// once, nested in the calling hook (the session has ended). A hook must not
// call End, directly or by waiting for a goroutine that does: End waits for
// the hooks, so it would wait for itself, as [sync.Once.Do] would. Telling
// the hooks' own goroutine apart would take parsing goroutine ids out of
// stack traces, which Go deliberately does not offer; no caller needs it.
//
// # Notices
//
// [Session.Notify] queues a line of text for the model; [Session.TakeNotices]
// removes and returns the queue, oldest first. The queue is not bounded: its
// producers are bounded (one finish notice per task). After End, Notify drops
// the notice and returns false, so nothing is queued for a model that is gone;
// notices queued before End can still be taken.
//
// [Session.Notices] is a wake-up for front ends that push notices rather
// than wait for the next tool result. It has a buffer of one and never
// blocks the sender, so one value may stand for several notices; TakeNotices
// consumes a pending wake-up along with the notices it returns, so a value
// on the channel means there is something to take. The channel is never
// closed: select on [Session.Done] as well to learn that the session ended.
//
// The zero Session is not usable; call [New]. A Session is safe for
// concurrent use. Its id and cwd are fixed at creation and not checked:
// an empty cwd means the session has none and callers fall back to their own
// default.
package session

import (
	"container/list"
	"log/slog"
	"sync"

	"github.com/dsh-go/dsh/internal/safe"
)

// Session is one owner. See the package documentation for the contract.
type Session struct {
	id, cwd string
	log     *slog.Logger
	done    chan struct{} // closed when End's hooks have all run
	wake    chan struct{} // buffer 1; holds a value while notices wait (see Notify)

	mu      sync.Mutex
	ended   bool
	hooks   list.List // of func(), pending, in registration order
	notices []notice
}

// notice is a queued line for the model; key, when set, lets its sender
// withdraw it before delivery.
type notice struct {
	key, text string
}

// New returns a live session. cwd may be "" (no session cwd).
func New(id, cwd string, opts ...Option) *Session {
	s := &Session{
		id:   id,
		cwd:  cwd,
		log:  slog.Default(),
		done: make(chan struct{}),
		wake: make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Option configures a Session.
type Option func(*Session)

// WithLogger logs the panics of end hooks to l instead of slog's default
// logger.
func WithLogger(l *slog.Logger) Option {
	return func(s *Session) {
		if l != nil {
			s.log = l
		}
	}
}

// ID returns the id the session was created with.
func (s *Session) ID() string { return s.id }

// Cwd returns the session's working directory, or "" when it has none.
func (s *Session) Cwd() string { return s.cwd }

// OnEnd registers fn to run once when the session ends. Hooks run in reverse
// order of registration (LIFO, like defer), one at a time; a panicking hook is
// recovered, logged with log/slog, and the others still run. A hook
// registered after the session ended is run at once, synchronously, by OnEnd
// (never lost, never run twice). OnEnd returns a func that unregisters the
// hook if it has not run yet. It panics if fn is nil.
func (s *Session) OnEnd(fn func()) (cancel func()) {
	if fn == nil {
		panic("session: OnEnd with a nil hook")
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		s.runHook(fn, nil)
		return func() {}
	}
	e := s.hooks.PushBack(fn)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		// A no-op when the element is no longer in the list: End took it
		// (the hook ran or is running), or cancel was called before.
		s.hooks.Remove(e)
	}
}

// End ends the session: it runs the hooks and returns when all have returned.
// Concurrent and repeated calls all return only after the hooks have run; the
// hooks run once. A hook must not call End.
func (s *Session) End() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.ended = true
	s.mu.Unlock()

	defer close(s.done)
	s.runHooks()
}

// Ended reports whether End was called. The hooks may still be running; see
// Done.
func (s *Session) Ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Done returns a channel that is closed once End's hooks have all run.
func (s *Session) Done() <-chan struct{} { return s.done }

// Notify queues a notice (a line of text for the model) in the session's
// inbox and reports true. After End the notice is dropped and Notify returns
// false.
func (s *Session) Notify(text string) bool { return s.NotifyKey("", text) }

// NotifyKey is Notify with a key that [Session.Withdraw] can name: a notice
// that became stale before delivery (a finished task whose output the model
// has read since) is withdrawn rather than delivered.
func (s *Session) NotifyKey(key, text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.notices = append(s.notices, notice{key, text})
	// Sent under the lock, like TakeNotices' drain, so that a value on wake
	// always means notices are waiting: no lost and no stale wake-ups.
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// Withdraw removes the queued notices with key (a non-empty key) and
// reports whether there were any.
func (s *Session) Withdraw(key string) bool {
	if key == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.notices[:0]
	for _, n := range s.notices {
		if n.key != key {
			kept = append(kept, n)
		}
	}
	removed := len(kept) != len(s.notices)
	clear(s.notices[len(kept):])
	s.notices = kept
	if len(s.notices) == 0 {
		select {
		case <-s.wake:
		default:
		}
	}
	return removed
}

// TakeNotices removes and returns the queued notices, oldest first (nil when
// none).
func (s *Session) TakeNotices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var taken []string
	for _, n := range s.notices {
		taken = append(taken, n.text)
	}
	s.notices = nil
	select {
	case <-s.wake:
	default:
	}
	return taken
}

// Notices returns a channel that receives a value (non-blocking send, buffer
// 1) whenever a notice is queued, so a front end can wake up without polling.
// It is never closed.
func (s *Session) Notices() <-chan struct{} { return s.wake }

// runHooks runs the pending hooks one at a time, last registered first,
// until none is left. It takes each hook out of the list before running it,
// so a hook that is running can no longer be cancelled and a hook not yet
// reached still can.
func (s *Session) runHooks() {
	for {
		s.mu.Lock()
		e := s.hooks.Back()
		if e == nil {
			s.mu.Unlock()
			return
		}
		s.hooks.Remove(e)
		s.mu.Unlock()
		s.runHook(e.Value.(func()), s.runHooks)
	}
}

// runHook calls fn and contains a panic, which it logs. If fn ends its
// goroutine with runtime.Goexit, which cannot be stopped, onGoexit (when not
// nil) runs on the way out: End passes runHooks so that the other hooks are
// not lost.
func (s *Session) runHook(fn func(), onGoexit func()) {
	returned := false
	defer func() {
		if !returned && onGoexit != nil {
			onGoexit()
		}
	}()
	_ = safe.Call(s.log, "session: end hook", fn, "session", s.id)
	returned = true
}
