package tasks

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dsh-go/dsh/internal/safe"
	"github.com/dsh-go/dsh/session"
)

// Status is where a task is in its life.
type Status string

// The statuses: Running → Stopping → one terminal status.
const (
	Running   Status = "running"
	Stopping  Status = "stopping" // a cancel was requested; not yet ended
	Completed Status = "completed"
	Killed    Status = "killed"
	Failed    Status = "failed"
)

// Terminal reports whether s is a final status (completed, killed, failed).
func (s Status) Terminal() bool { return s == Completed || s == Killed || s == Failed }

// The reasons the service passes to Hooks.Cancel.
const (
	ReasonKill            = "kill requested"
	ReasonOwnerDisposed   = "owner disposed"
	ReasonServiceDisposed = "tasks service disposed"
)

// Outcome is how a task ended, as its producer reports it on Hooks.Done.
type Outcome struct {
	// Status is Completed, Killed or Failed.
	Status Status
	// Detail completes the status line ("exit code: 0"); may be empty.
	Detail string
	// Exit is how the work ended, as data, for the producers that know it.
	Exit Exit
	// Output is the final output of a final-output task (one without
	// Hooks.Read); it is ignored for stream tasks.
	Output string
	// Err reports a failure of the producer: the task settles Failed with
	// Err.Error() as its detail, and a warning is logged.
	Err error
}

// Exit is how a task's work ended when the work is a program that exits:
// the facts a caller acts on (a CLI's own exit status) without parsing
// them back out of Detail, which is text for the model. The zero value says
// nothing: a producer without such facts (a final-output kind, a program
// killed before it exited) leaves it empty.
type Exit struct {
	// Code is the exit code of work that exited by itself; nil otherwise.
	Code *int
	// Signal names the signal that ended the work ("SIGTERM"); "" when
	// none did.
	Signal string
	// TimedOut: the work's own time limit ended it.
	TimedOut bool
	// StdoutBytes and StderrBytes count what the program wrote to each
	// stream (the audit log's task-end line, metrics).
	StdoutBytes, StderrBytes int64
}

// clone returns e with its own copy of Code, so that neither a producer
// nor a snapshot's holder can change what the record says.
func (e Exit) clone() Exit {
	if e.Code != nil {
		code := *e.Code
		e.Code = &code
	}
	return e
}

// Hooks are what a producer's Run returns: how the service controls and
// reads the work. See the package documentation for their contract.
type Hooks struct {
	// Cancel asks the work to end. Required.
	Cancel func(reason string) error
	// Done delivers one outcome; a channel closed without one settles the
	// task Failed. Required.
	Done <-chan Outcome
	// Read, when present, returns the output produced since the previous
	// call (stream kind). Absent: final-output kind.
	Read func() string
	// Terminal, when present, is the work's terminal: it takes input
	// ([Service.Input]) and has a screen.
	Terminal Terminal
	// Changed, when present, returns a channel closed once new output
	// arrives after the call.
	Changed func() <-chan struct{}
}

// Spec describes a task to start.
type Spec struct {
	// Kind names the producer ("bash"); it prefixes the id.
	Kind string
	// Label says what the task is (a bash task's full command).
	Label string
	// Owner is the session the task belongs to; nil means unowned.
	Owner *session.Session
	// Run starts the work. It is called once, by Start, and its error is
	// Start's.
	Run func() (Hooks, error)
	// Sandboxed: the work runs in a sandbox, which is then the boundary of
	// what typing into it can do (docs/spec.md §4.2a).
	Sandboxed bool
}

// Snapshot is a task's state at one moment.
type Snapshot struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
	// Owner is the owner session's id; "" when unowned.
	Owner    string    `json:"owner"`
	Status   Status    `json:"status"`
	Detail   string    `json:"detail"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"` // zero while live
	// Reported: the owner has learnt how the task ended (see the package
	// documentation); no finish notice is due.
	Reported bool `json:"reported"`
	// Exit is the outcome's Exit once the task has finished; empty while
	// it is live and after a producer failure. It is left out of
	// the JSON form, which is task_output's structured result as docs/spec.md
	// has it: the model reads these facts in Detail.
	Exit Exit `json:"-"`
	// Terminal is the size of the task's terminal; zero for a task
	// without one. (A value, not a pointer: a nullable type in the output
	// schema is less portable.)
	Terminal TerminalSize `json:"terminal,omitzero"`
	// Sandboxed is the Spec's.
	Sandboxed bool `json:"-"`
}

// Config bounds a Service. Zero (or negative) values take the defaults.
type Config struct {
	// MaxRunningPerSession caps the live (running or stopping) tasks of one
	// owner, and of the unowned tasks together. Default 64.
	MaxRunningPerSession int
	// MaxRunning caps the live tasks of all owners together (a server's
	// sessions). Default 256.
	MaxRunning int
	// MaxFinishedPerOwner caps the finished records kept per owner (and for
	// the unowned tasks). Default 256.
	MaxFinishedPerOwner int
	// Logger receives the service's warnings and its finish listeners'
	// panics. Default (nil): slog.Default() as New finds it.
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultMaxRunningPerSession = 64
	DefaultMaxRunning           = 256
	DefaultMaxFinishedPerOwner  = 256
)

// KillResult is what a successful Kill did.
type KillResult string

// The kill results.
const (
	KillRequested       KillResult = "requested"
	KillAlreadyTerminal KillResult = "already-terminal"
)

// Service is the task runtime. The zero value is not usable; call New.
type Service struct {
	cfg Config
	log *slog.Logger

	mu        sync.Mutex
	attached  int
	closed    bool
	closeDone chan struct{}
	kinds     map[string]*kindCounter
	tasks     map[string]*task
	order     list.List // of *task, in start order
	groups    map[*session.Session]*group
	listeners []listener
	// settled are the OnSettled listeners; replaced, never changed in
	// place, so a watcher may call them after the lock.
	settled []settledListener
	nextID  uint64
	// live counts the live tasks and the starts past their preflight, of
	// all owners (MaxRunning).
	live int

	starts   sync.WaitGroup // Start calls past their preflight
	watchers sync.WaitGroup // one per task: waits on Done, settles, calls listeners
}

// kindCounter numbers the tasks of one kind. Guarded by Service.mu.
type kindCounter struct {
	last int
}

// group holds the tasks of one owner (nil: the unowned tasks). Guarded by
// Service.mu.
type group struct {
	owner    *session.Session
	live     int     // running or stopping
	starting int     // starts past the preflight, not yet recorded
	finished []*task // in finish order, for retention
	ended    bool    // the owner's end hook has begun
	forget   func()  // unregisters the end hook; nil when none is registered
	// hooked is closed once the end hook is registered; starts wait for it
	// before recording a task, so no task of an owner is recorded before
	// the hook that would end it. Nil for the unowned group.
	hooked chan struct{}
}

type listener struct {
	id uint64
	fn func(Snapshot, *session.Session)
}

type settledListener struct {
	id uint64
	fn func(Snapshot)
}

// task is one record. The fields below mu are guarded by Service.mu.
type task struct {
	id, kind, label string
	sandboxed       bool
	owner           *session.Session
	group           *group
	hooks           Hooks
	elem            *list.Element
	done            chan struct{} // closed when settled
	readMu          sync.Mutex    // serializes reads

	status            Status
	detail, output    string
	exit              Exit
	started, finished time.Time
	reported          bool
	waiters, killers  int  // waits and kills in progress
	quiet             bool // ended by its owner's end or Close: no listeners
	dropped           bool
}

func (t *task) snapshot() Snapshot {
	owner := ""
	if t.owner != nil {
		owner = t.owner.ID()
	}
	snap := Snapshot{
		ID: t.id, Kind: t.kind, Label: t.label, Owner: owner,
		Status: t.status, Detail: t.detail, Exit: t.exit.clone(),
		Started: t.started, Finished: t.finished, Reported: t.reported,
		Sandboxed: t.sandboxed,
	}
	if t.hooks.Terminal != nil {
		cols, rows := t.hooks.Terminal.Size()
		snap.Terminal = TerminalSize{Cols: cols, Rows: rows}
	}
	return snap
}

// New returns a service with cfg's bounds and logger (zero values take the
// defaults).
func New(cfg Config) *Service {
	if cfg.MaxRunningPerSession <= 0 {
		cfg.MaxRunningPerSession = DefaultMaxRunningPerSession
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = DefaultMaxRunning
	}
	if cfg.MaxFinishedPerOwner <= 0 {
		cfg.MaxFinishedPerOwner = DefaultMaxFinishedPerOwner
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Service{
		cfg:       cfg,
		log:       log,
		closeDone: make(chan struct{}),
		kinds:     make(map[string]*kindCounter),
		tasks:     make(map[string]*task),
		groups:    make(map[*session.Session]*group),
	}
}

// Logger returns the logger the service logs to, so that the code built
// around it (the task tools) logs where it does.
func (s *Service) Logger() *slog.Logger { return s.log }

// AttachTools records that tools able to read and stop tasks are present,
// and returns the func that undoes it (idempotent). Attachments are counted:
// Start works while at least one is in place.
func (s *Service) AttachTools() (detach func()) {
	s.mu.Lock()
	s.attached++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.attached--
			s.mu.Unlock()
		})
	}
}

// OnFinish registers fn to be called once for every task that settles from
// now on (see the package documentation), and returns the func that removes
// it (idempotent).
func (s *Service) OnFinish(fn func(snap Snapshot, owner *session.Session)) (remove func()) {
	if fn == nil {
		panic("tasks: OnFinish with a nil listener")
	}
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.listeners = append(s.listeners, listener{id, fn})
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.listeners = slices.DeleteFunc(s.listeners, func(l listener) bool { return l.id == id })
	}
}

// Start starts a task: it checks spec, calls spec.Run and records the task.
// It returns the task's first snapshot.
func (s *Service) Start(spec Spec) (Snapshot, error) {
	if spec.Run == nil {
		return Snapshot{}, errors.New("tasks: Spec.Run is nil")
	}
	g, kc, register, err := s.reserve(spec)
	if err != nil {
		return Snapshot{}, err
	}
	defer s.starts.Done()
	recorded := false
	defer func() {
		if !recorded { // Run failed or panicked, or the start was refused late
			s.mu.Lock()
			g.starting--
			s.live--
			s.mu.Unlock()
		}
	}()
	if register {
		s.registerEnd(g)
		close(g.hooked)
	} else if g.hooked != nil {
		<-g.hooked
	}

	hooks, err := spec.Run()
	if err != nil {
		return Snapshot{}, err
	}
	if hooks.Cancel == nil || hooks.Done == nil {
		if hooks.Cancel != nil {
			_ = hooks.Cancel("start refused: invalid hooks")
		}
		return Snapshot{}, fmt.Errorf("tasks: the %s producer returned hooks without Cancel or Done", spec.Kind)
	}

	s.mu.Lock()
	if s.closed || g.ended {
		refusal := ErrClosed
		reason := ReasonServiceDisposed
		if !s.closed {
			refusal, reason = errOwnerEnded(spec.Owner.ID()), ReasonOwnerDisposed
		}
		s.mu.Unlock()
		if err := hooks.Cancel(reason); err != nil {
			s.log.Warn("tasks: cancelling a refused start failed", "kind", spec.Kind, "err", err)
		}
		<-hooks.Done
		return Snapshot{}, refusal
	}
	kc.last++
	t := &task{
		id:        spec.Kind + "-" + strconv.Itoa(kc.last),
		kind:      spec.Kind,
		label:     spec.Label,
		owner:     spec.Owner,
		sandboxed: spec.Sandboxed,
		group:     g,
		hooks:     hooks,
		done:      make(chan struct{}),
		status:    Running,
		started:   time.Now(),
	}
	t.elem = s.order.PushBack(t)
	s.tasks[t.id] = t
	g.starting--
	g.live++
	recorded = true
	s.watchers.Add(1)
	snap := t.snapshot()
	s.mu.Unlock()

	go s.watch(t)
	return snap, nil
}

// reserve runs the preflight checks and, when they pass, reserves a running
// slot for the owner and counts the start in s.starts. register is true for
// the one caller that must register the owner's end hook.
func (s *Service) reserve(spec Spec) (g *group, kc *kindCounter, register bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, nil, false, ErrClosed
	case s.attached == 0:
		return nil, nil, false, ErrNoTools
	case strings.TrimSpace(spec.Kind) == "":
		return nil, nil, false, ErrInvalidKind
	case strings.TrimSpace(spec.Label) == "":
		return nil, nil, false, ErrInvalidLabel
	case spec.Owner != nil && spec.Owner.Ended():
		return nil, nil, false, errOwnerEnded(spec.Owner.ID())
	}
	g = s.groups[spec.Owner]
	switch {
	case g != nil && g.ended:
		return nil, nil, false, errOwnerEnded(spec.Owner.ID())
	case g != nil && g.live+g.starting >= s.cfg.MaxRunningPerSession:
		return nil, nil, false, errTooMany(g.live + g.starting)
	case s.live >= s.cfg.MaxRunning:
		// Before a new owner's group is made: a refused start must not
		// leave a group whose end hook nobody registers.
		return nil, nil, false, errTooManyOnServer(s.cfg.MaxRunning)
	}
	if g == nil {
		g = &group{owner: spec.Owner}
		s.groups[spec.Owner] = g
		if spec.Owner != nil {
			register, g.hooked = true, make(chan struct{})
		}
	}
	g.starting++
	s.live++
	s.starts.Add(1)
	kc = s.kinds[spec.Kind]
	if kc == nil {
		kc = &kindCounter{}
		s.kinds[spec.Kind] = kc
	}
	return g, kc, register, nil
}

// registerEnd registers g's end hook. Called without s.mu: the hook runs at
// once when the session has already ended.
func (s *Service) registerEnd(g *group) {
	forget := g.owner.OnEnd(func() { s.endOwner(g) })
	s.mu.Lock()
	closed := s.closed
	if !closed {
		g.forget = forget
	}
	s.mu.Unlock()
	if closed {
		forget()
	}
}

// watch waits for t's outcome, settles t and calls the listeners.
func (s *Service) watch(t *task) {
	defer s.watchers.Done()
	out, ok := <-t.hooks.Done
	notify, snap, settled := s.settle(t, out, ok)
	for _, l := range settled {
		_ = safe.Call(s.log, "tasks: settled listener", func() { l.fn(snap) }, "task", t.id)
	}
	if notify {
		s.callListeners(t)
	}
}

// OnSettled registers fn to be called once for every task that settles from
// now on, however it ended: by itself, by a kill, by its owner's end or by
// Close (the audit log and metrics; finish notices use [Service.OnFinish]).
// It is called on the goroutine that watched the task, with the snapshot
// of the settled task, before the finish listeners; Close returns after
// the calls for the tasks it ended. A panic is contained and logged.
func (s *Service) OnSettled(fn func(snap Snapshot)) (remove func()) {
	if fn == nil {
		panic("tasks: OnSettled with a nil listener")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := s.nextID
	s.settled = append(slices.Clip(s.settled), settledListener{id, fn})
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.settled = slices.DeleteFunc(slices.Clone(s.settled), func(l settledListener) bool { return l.id == id })
	}
}

// settle records t's outcome and reports whether finish listeners are due;
// it returns the settled snapshot and the OnSettled listeners to call.
func (s *Service) settle(t *task, out Outcome, ok bool) (notify bool, snap Snapshot, settled []settledListener) {
	status, detail, exit := out.Status, out.Detail, out.Exit.clone()
	var failure string
	switch {
	case !ok:
		failure = "the producer ended without an outcome"
	case out.Err != nil:
		failure = out.Err.Error()
	case !out.Status.Terminal():
		failure = fmt.Sprintf("the producer reported the non-final status %q", out.Status)
	}
	if failure != "" {
		status, detail, exit = Failed, failure, Exit{}
		s.log.Warn("tasks: background task failed", "task", t.id, "err", failure)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	t.status, t.detail, t.exit, t.output, t.finished = status, detail, exit, out.Output, time.Now()
	if t.waiters > 0 || t.killers > 0 {
		t.reported = true
	}
	g := t.group
	g.live--
	s.live--
	if !t.dropped {
		g.finished = append(g.finished, t)
		for len(g.finished) > s.cfg.MaxFinishedPerOwner {
			s.dropLocked(g.finished[0])
			g.finished = slices.Delete(g.finished, 0, 1)
		}
	}
	close(t.done)
	return !t.quiet && !s.closed, t.snapshot(), s.settled
}

// callListeners calls each listener with a snapshot taken just before its
// call, so that a read or kill in the meantime is reflected in Reported.
func (s *Service) callListeners(t *task) {
	s.mu.Lock()
	ls := slices.Clone(s.listeners)
	s.mu.Unlock()
	for _, l := range ls {
		s.mu.Lock()
		closed, snap := s.closed, t.snapshot()
		s.mu.Unlock()
		if closed {
			return
		}
		// A listener is not the runtime's own code: its panic is logged
		// and the next listener still runs.
		_ = safe.Call(s.log, "tasks: finish listener", func() { l.fn(snap, t.owner) }, "task", t.id)
	}
}

// dropLocked forgets t's record. Called with s.mu held.
func (s *Service) dropLocked(t *task) {
	if t.dropped {
		return
	}
	t.dropped = true
	s.order.Remove(t.elem)
	delete(s.tasks, t.id)
}

// endOwner is a session's end hook: it cancels and awaits the session's live
// tasks, then drops all its records.
func (s *Service) endOwner(g *group) {
	s.mu.Lock()
	g.ended = true
	var live []*task
	for e := s.order.Front(); e != nil; e = e.Next() {
		if t := e.Value.(*task); t.group == g && !t.status.Terminal() {
			t.quiet = true
			live = append(live, t)
		}
	}
	s.mu.Unlock()

	s.cancel(live, ReasonOwnerDisposed)
	for _, t := range live {
		<-t.done
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for e := s.order.Front(); e != nil; {
		next := e.Next()
		if t := e.Value.(*task); t.group == g {
			s.dropLocked(t)
		}
		e = next
	}
	g.finished = nil
	if s.groups[g.owner] == g {
		delete(s.groups, g.owner)
	}
}

// cancel calls Cancel on each task with reason, and marks those still
// running stopping. A failure is logged: the caller awaits the task anyway.
func (s *Service) cancel(ts []*task, reason string) {
	for _, t := range ts {
		if err := t.hooks.Cancel(reason); err != nil {
			s.log.Warn("tasks: cancel failed", "task", t.id, "reason", reason, "err", err)
			continue
		}
		s.mu.Lock()
		if t.status == Running {
			t.status = Stopping
		}
		s.mu.Unlock()
	}
}

// Close shuts the service down: it cancels every live task with reason
// "tasks service disposed" and returns once they have all ended, starts in
// flight have returned and running listeners have returned. No finish
// listener is called for the tasks it ends; settled listeners are. Later calls wait for the first to finish.
func (s *Service) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.closeDone
		return
	}
	s.closed = true
	var live []*task
	for e := s.order.Front(); e != nil; e = e.Next() {
		if t := e.Value.(*task); !t.status.Terminal() {
			t.quiet = true
			live = append(live, t)
		}
	}
	var forgets []func()
	for _, g := range s.groups {
		if g.forget != nil {
			forgets = append(forgets, g.forget)
			g.forget = nil
		}
	}
	s.mu.Unlock()

	for _, forget := range forgets {
		forget()
	}
	s.cancel(live, ReasonServiceDisposed)
	s.starts.Wait()
	s.watchers.Wait()
	close(s.closeDone)
}

// Live counts the tasks of all owners that have not ended (running or
// stopping), and the starts in flight: the metrics' background commands,
// and what [Config.MaxRunning] caps.
func (s *Service) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// lookupLocked finds id for caller, applying the fence. Called with s.mu
// held.
func (s *Service) lookupLocked(caller *session.Session, id string) (*task, error) {
	t, ok := s.tasks[id]
	if !ok {
		return nil, errUnknown(id)
	}
	if t.owner != nil && t.owner != caller {
		return nil, errForbidden(id)
	}
	return t, nil
}

// Get returns the snapshot of task id, as caller sees it.
func (s *Service) Get(caller *session.Session, id string) (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupLocked(caller, id)
	if err != nil {
		return Snapshot{}, err
	}
	return t.snapshot(), nil
}

// List returns the snapshots of caller's tasks and the unowned ones, in
// start order (nil when there are none).
func (s *Service) List(caller *session.Session) []Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Snapshot
	for e := s.order.Front(); e != nil; e = e.Next() {
		if t := e.Value.(*task); t.owner == nil || t.owner == caller {
			out = append(out, t.snapshot())
		}
	}
	return out
}

// Read returns the task's new output: the consuming delta of a stream task;
// for a final-output task, "" while it is live and its final output once it
// has finished. A read that starts when the task has finished marks it
// reported. The snapshot is taken as the read starts.
func (s *Service) Read(caller *session.Session, id string) (string, Snapshot, error) {
	s.mu.Lock()
	t, err := s.lookupLocked(caller, id)
	s.mu.Unlock()
	if err != nil {
		return "", Snapshot{}, err
	}

	t.readMu.Lock()
	defer t.readMu.Unlock()
	s.mu.Lock()
	if t.dropped {
		s.mu.Unlock()
		return "", Snapshot{}, errUnknown(id)
	}
	finished := t.status.Terminal()
	if finished {
		t.reported = true
	}
	snap, text := t.snapshot(), ""
	if t.hooks.Read == nil && finished {
		text = t.output
	}
	s.mu.Unlock()

	if t.hooks.Read != nil {
		text = t.hooks.Read()
	}
	return text, snap, nil
}

// Notify queues text in the inbox of task id's owner, keyed by the id
// ([session.Session.NotifyKey]), if the task has finished and its owner
// has not learnt how it ended: a finish listener's notice. It reports
// whether it queued the notice: not for a live, reported or unowned task,
// one whose record was dropped, nor when the owner has ended. The check
// and the queueing are one step under the lock with which Read, Kill and
// Wait mark a task reported, so such a call comes either before (no
// notice) or after the notice is queued (its caller can withdraw it). A
// listener that queued first and looked after would leave a notice, for
// a moment, that a concurrent result of the session could take.
func (s *Service) Notify(id, text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok || t.owner == nil || t.reported || !t.status.Terminal() {
		return false
	}
	// The session's lock under the service's, as in reserve (Ended): a
	// session calls nothing of the service while it holds its own.
	return t.owner.NotifyKey(id, text)
}

// Kill asks the task to end. See the package documentation for the
// results; an error of Hooks.Cancel is returned wrapped, with the task
// untouched.
func (s *Service) Kill(caller *session.Session, id string) (KillResult, Snapshot, error) {
	s.mu.Lock()
	t, err := s.lookupLocked(caller, id)
	if err != nil {
		s.mu.Unlock()
		return "", Snapshot{}, err
	}
	switch t.status {
	case Completed, Killed, Failed:
		t.reported = true
		snap := t.snapshot()
		s.mu.Unlock()
		return KillAlreadyTerminal, snap, nil
	case Stopping:
		t.reported = true
		snap := t.snapshot()
		s.mu.Unlock()
		return KillRequested, snap, nil
	}
	t.killers++
	s.mu.Unlock()

	cerr := t.hooks.Cancel(ReasonKill)

	s.mu.Lock()
	defer s.mu.Unlock()
	t.killers--
	switch {
	case cerr == nil:
		if t.status == Running {
			t.status = Stopping
		}
		t.reported = true
		return KillRequested, t.snapshot(), nil
	case t.status.Terminal():
		t.reported = true
		return KillAlreadyTerminal, t.snapshot(), nil
	default:
		return "", t.snapshot(), fmt.Errorf("kill task %s: %w", id, cerr)
	}
}

// Wait waits until the task finishes, timeout elapses or ctx is done. It
// returns the snapshot at the finish (marking the task reported) or the
// still-live snapshot at the timeout. A done ctx gives ErrWaitAborted unless
// the task has finished by then. A timeout that is not positive is
// refused, before the id is looked at.
func (s *Service) Wait(ctx context.Context, caller *session.Session, id string, timeout time.Duration) (Snapshot, error) {
	if timeout <= 0 {
		return Snapshot{}, errInvalidTimeout(timeout)
	}
	s.mu.Lock()
	t, err := s.lookupLocked(caller, id)
	switch {
	case err != nil:
		s.mu.Unlock()
		return Snapshot{}, err
	case t.status.Terminal():
		t.reported = true
		snap := t.snapshot()
		s.mu.Unlock()
		return snap, nil
	case ctx.Err() != nil:
		s.mu.Unlock()
		return Snapshot{}, ErrWaitAborted
	}
	t.waiters++
	s.mu.Unlock()

	timer := time.NewTimer(timeout)
	select {
	case <-t.done:
	case <-ctx.Done():
	case <-timer.C:
	}
	timer.Stop()
	if testHookWaitWoke != nil {
		testHookWaitWoke()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	t.waiters--
	switch {
	case t.status.Terminal(): // settle saw this wait and marked it reported
		t.reported = true
		return t.snapshot(), nil
	case ctx.Err() != nil:
		return Snapshot{}, ErrWaitAborted
	default:
		return t.snapshot(), nil
	}
}

// testHookWaitWoke, when set by a test, runs after a wait woke up and
// before it looks at the task, so a test can make the finish and the
// cancellation land in the same instant deterministically.
var testHookWaitWoke func()
