package tasks

import (
	"errors"
	"time"

	"github.com/dsh-go/dsh/session"
)

// Terminal is a task's terminal (docs/spec.md §4.2a): the input the model
// types and the screen it reads. A producer whose work runs under a
// pseudo-terminal returns one in [Hooks.Terminal].
type Terminal interface {
	// Input writes p as typed, waiting until deadline at most for a
	// program that does not read.
	Input(p []byte, deadline time.Time) error
	// Screen is the rendered screen as text, cursor line last.
	Screen() string
	// Keys encodes named keys for the terminal's current modes.
	Keys(names []string) ([]byte, error)
	// Size is the terminal's size in cells.
	Size() (cols, rows int)
	// Foreground lists the programs input goes to now (the terminal's
	// foreground process group); nil when unknown.
	Foreground() []Program
	// Typed is what was typed into the terminal most recently, as
	// written, up to MaxTyped bytes; truncated when more came before.
	Typed() (recent []byte, truncated bool)
}

// MaxTyped bounds what a Terminal keeps of what was typed into it.
const MaxTyped = 64 << 10

// Program is a process a terminal's input may go to.
type Program struct {
	Exe  string   // its executable's path; "" when unreadable
	Args []string // its argument vector; nil when unreadable
}

// TerminalSize is a task terminal's size, in a Snapshot.
type TerminalSize struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

// ErrNoTerminal and ErrFinished are the targets of errors.Is for the
// errors of [Service.Input] and [Service.Terminal], whose texts name the
// task.
var (
	ErrNoTerminal = errors.New("task has no terminal")
	ErrFinished   = errors.New("task has finished")
)

// noTerminalMessage is exact (docs/spec.md §4.2a).
func noTerminalMessage(id string) string {
	return "task " + id + " has no terminal: only a bash task started with tty: true takes input"
}

// finishedMessage is exact (docs/spec.md §4.2a).
func finishedMessage(id string) string {
	return "task " + id + " has finished: it takes no more input"
}

// FinishedError is the error of input to task id, which has finished.
func FinishedError(id string) error { return &kindError{finishedMessage(id), ErrFinished} }

// Terminal returns the terminal of task id, as caller sees it, with the
// task's snapshot. A task without one is [ErrNoTerminal].
func (s *Service) Terminal(caller *session.Session, id string) (Terminal, Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.lookupLocked(caller, id)
	if err != nil {
		return nil, Snapshot{}, err
	}
	if t.hooks.Terminal == nil {
		return nil, Snapshot{}, &kindError{noTerminalMessage(id), ErrNoTerminal}
	}
	return t.hooks.Terminal, t.snapshot(), nil
}

// Input types p into task id's terminal. A finished task, or one being
// stopped, is [ErrFinished]; nothing is written then.
func (s *Service) Input(caller *session.Session, id string, p []byte, deadline time.Time) (Snapshot, error) {
	term, snap, err := s.Terminal(caller, id)
	if err != nil {
		return Snapshot{}, err
	}
	if snap.Status != Running {
		return snap, &kindError{finishedMessage(id), ErrFinished}
	}
	if err := term.Input(p, deadline); err != nil {
		if snap, _ := s.Get(caller, id); snap.Status != Running {
			return snap, &kindError{finishedMessage(id), ErrFinished}
		}
		return snap, err
	}
	return snap, nil
}

// Changed returns a channel closed once task id has new output (nil when
// its producer cannot tell: a caller then polls) and one closed once it
// has finished.
func (s *Service) Changed(caller *session.Session, id string) (news, done <-chan struct{}, err error) {
	s.mu.Lock()
	t, err := s.lookupLocked(caller, id)
	s.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	if t.hooks.Changed != nil {
		news = t.hooks.Changed()
	}
	return news, t.done, nil
}
