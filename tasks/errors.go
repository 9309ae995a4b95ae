package tasks

import (
	"errors"
	"fmt"
	"time"

	"github.com/dsh-go/dsh/internal/num"
)

// The errors of the service. Those with a fixed text are returned as they
// are; the others are the target of errors.Is for an error whose exact text
// names the task, the count or the value (see the render functions below).
var (
	ErrNoTools      = errors.New("background tasks unavailable: no task tools are attached")
	ErrInvalidKind  = errors.New("invalid task kind: expected a non-empty string")
	ErrInvalidLabel = errors.New("invalid task label: expected a non-empty string")
	ErrWaitAborted  = errors.New("wait aborted")
	// ErrClosed: Start after Close.
	ErrClosed = errors.New("background tasks unavailable: the task runtime is shut down")

	ErrTooMany        = errors.New("too many background tasks")
	ErrForbidden      = errors.New("task belongs to another session")
	ErrUnknown        = errors.New("unknown task")
	ErrInvalidTimeout = errors.New("invalid wait timeout")
	ErrOwnerEnded     = errors.New("owner session has ended")
)

// kindError is an error with an exact text that wraps one of the sentinels.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func tooManyMessage(n int) string {
	return fmt.Sprintf("too many background tasks: %d are running in this session; stop one with task_kill", n)
}

// tooManyOnServerMessage is the refusal at the server-wide limit
// (exact, docs/spec.md §4.1): the caller may have no task of its own to
// stop, so it is told that waiting helps too.
func tooManyOnServerMessage(limit int) string {
	return fmt.Sprintf("too many background tasks: %d are running on this server; stop one with task_kill or try again later", limit)
}

func forbiddenMessage(id string) string { return "task " + id + " belongs to another session" }

func unknownMessage(id string) string { return "unknown task " + id }

func invalidTimeoutText(raw string) string {
	return "invalid wait timeout: expected a positive number of milliseconds, got " + raw
}

// InvalidWaitTimeout is the wait-timeout error for a timeout given as JSON
// text, for callers that hold the text the model sent (1e400, -1e400),
// which a float64 cannot carry.
func InvalidWaitTimeout(raw string) error {
	return &kindError{invalidTimeoutText(raw), ErrInvalidTimeout}
}

func ownerEndedMessage(id string) string {
	return "background tasks unavailable: session " + id + " has ended"
}

func errTooMany(n int) error       { return &kindError{tooManyMessage(n), ErrTooMany} }
func errForbidden(id string) error { return &kindError{forbiddenMessage(id), ErrForbidden} }
func errUnknown(id string) error   { return &kindError{unknownMessage(id), ErrUnknown} }
func errInvalidTimeout(d time.Duration) error {
	return &kindError{invalidTimeoutText(num.MillisText(d)), ErrInvalidTimeout}
}
func errOwnerEnded(id string) error { return &kindError{ownerEndedMessage(id), ErrOwnerEnded} }
func errTooManyOnServer(limit int) error {
	return &kindError{tooManyOnServerMessage(limit), ErrTooMany}
}
