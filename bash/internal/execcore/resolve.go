// Package execcore is what the local and the SSH executor share of running
// one command, so that both keep the seam's contract (package bash) the
// same way and each keeps only what depends on where the command runs:
// the timeout rule and its exact texts, the life cycle of a run (kill
// request, foreground wait, yield, the timeout of a yielded run), the
// background Process handle, and how collectors become Outputs, Reads and
// Results.
//
// An executor's run embeds a [*Run] made by [NewRun] and tells it, through
// [Ending], the two things only it knows: how the command ended and
// whether a foreground command can still go on in the background. It
// closes [Run.Exited] once the end is known and [Run.Done] once
// everything is collected, after [Run.CloseCollectors].
package execcore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/num"
)

// ResolveTimeout is the effective timeout of a request (docs/spec.md §1):
// given, which must be finite and > 0 and is rounded up to a whole
// millisecond, else defMs; at most maxMs. The error is prefixed by name,
// the executor's ("bash-local: request.timeoutMs must be …"). given stays
// the model's JSON number up to here, so that every value it can send is
// judged by this one rule.
func ResolveTimeout(name string, given *float64, defMs, maxMs int64) (time.Duration, error) {
	ms := defMs
	if given != nil {
		v := *given
		if !num.PositiveFinite(v) { // NaN, zero, negative (-Inf too) or +Inf
			return 0, errors.New(name + ": request.timeoutMs must be a positive finite number")
		}
		ms = num.WholeMillis(v)
	}
	return time.Duration(min(ms, maxMs)) * time.Millisecond, nil
}

// Resolve is the Spec of r as both executors make it: the timeout by
// ResolveTimeout, the working directory r's, else cwd (the executor's
// configured one, maybe empty), the rest as r has it. An executor adds
// what only it uses (the local one: Owner and Unsandboxed, and its own
// default directory).
func Resolve(name string, r bash.Request, cwd string, defMs, maxMs int64) (bash.Spec, error) {
	timeout, err := ResolveTimeout(name, r.TimeoutMs, defMs, maxMs)
	if err != nil {
		return bash.Spec{}, err
	}
	wd := r.Workdir
	if wd == "" {
		wd = cwd
	}
	return bash.Spec{
		Command: r.Command,
		Timeout: timeout,
		Workdir: wd,
		Stdin:   r.Stdin,
		Env:     r.Env,
		Observe: r.Observe,
		TTY:     r.TTY,
	}, nil
}

// CheckForeground refuses a foreground run that must not spawn: its
// context has ended (AbortedBeforeSpawn), or its spec has no timeout (one
// that did not go through Resolve).
func CheckForeground(name string, ctx context.Context, spec bash.Spec) error {
	if ctx.Err() != nil {
		return AbortedBeforeSpawn(ctx)
	}
	if spec.Timeout <= 0 {
		return fmt.Errorf("%s: spec.Timeout must be > 0 (resolve the request first)", name)
	}
	return nil
}

// AbortedBeforeSpawn is the error of a Run or Start whose context ended
// before anything was spawned (docs/spec.md §1, exact): "aborted before
// spawn: <cause>", or "aborted before spawn: aborted" for a plain
// cancellation.
func AbortedBeforeSpawn(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil || cause == context.Canceled {
		return errors.New("aborted before spawn: aborted")
	}
	return fmt.Errorf("aborted before spawn: %w", cause)
}
