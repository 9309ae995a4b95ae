// Package safe contains panics: [Call] runs a function that is not dsh's
// own (a middleware, a listener, a presenter, a hook) and turns a panic into a
// logged error, so one bad piece of code cannot take the server down.
//
//	if err := safe.Call(log, "finish listener", func() { l(snap) }, "task", id); err != nil {
//		// already logged at ERROR with the panic value and the stack
//	}
//
// [runtime.Goexit] (t.FailNow in a test) is not a panic: Call lets it go on
// unwinding, as the caller's own defers expect.
package safe

import (
	"fmt"
	"log/slog"
	"runtime/debug"
)

// PanicError is a contained panic: its value and the stack where it was
// raised.
type PanicError struct {
	Value any
	Stack []byte
}

// Error is the panic value as text.
func (e *PanicError) Error() string { return fmt.Sprint(e.Value) }

// Call runs fn. When fn panics, the panic is logged at ERROR on log (the
// default logger when nil) as "<what> panicked", with attrs, the value and
// the stack, and returned as a *PanicError; otherwise Call returns nil.
func Call(log *slog.Logger, what string, fn func(), attrs ...any) (err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			if log == nil {
				log = slog.Default()
			}
			log.Error(what+" panicked", append(attrs, "panic", v, "stack", string(pe.Stack))...)
			err = pe
		}
	}()
	fn()
	return nil
}
