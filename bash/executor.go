package bash

// Helpers every executor shares, so that the seam's exact texts and the
// way collectors become Outputs live in one place.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dsh-go/dsh/internal/num"

	"github.com/dsh-go/dsh/bash/capture"
)

// ResolveTimeout is the effective timeout of a request (docs/spec.md §1):
// given, which must be finite and > 0 and is rounded up to a whole
// millisecond, else def; at most max. The error is prefixed by name, the
// executor's ("bash-local: request.timeoutMs must be …").
func ResolveTimeout(name string, given *float64, def, max int64) (int64, error) {
	ms := def
	if given != nil {
		v := *given
		if !num.PositiveFinite(v) { // NaN, zero, negative (-Inf too) or +Inf
			return 0, errors.New(name + ": request.timeoutMs must be a positive finite number")
		}
		ms = num.WholeMillis(v)
	}
	return min(ms, max), nil
}

// AbortedBeforeSpawn is the error of a Run whose context ended before
// anything was spawned (docs/spec.md §1, exact): "aborted before spawn:
// <cause>", or "aborted before spawn: aborted" for a plain cancellation.
func AbortedBeforeSpawn(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil || cause == context.Canceled {
		return errors.New("aborted before spawn: aborted")
	}
	return fmt.Errorf("aborted before spawn: %w", cause)
}

// OutputOf is the Output of a closed collector.
func OutputOf(c capture.Result) Output {
	return Output{
		Text:         c.Text,
		Head:         c.Head,
		Before:       c.Before,
		OmittedBytes: c.OmittedBytes,
		Truncated:    c.Truncated,
		SpillPath:    c.SpillPath,
		SpillCapped:  c.SpillCapped,
		SpillBytes:   c.SpillBytes,
		TotalBytes:   c.TotalBytes,
	}
}

// ReadCollectors is the consuming Read of a background process whose
// streams two collectors hold. Each stream is read after its collector's
// own bookkeeping, so a character is never split and loss is reported by
// the stream that lost.
func ReadCollectors(stdout, stderr *capture.Collector) ReadResult {
	out, errOut := readStream(stdout), readStream(stderr)
	return ReadResult{
		Delta:       JoinStreams(out.Text, errOut.Text),
		Lossy:       out.Lossy || errOut.Lossy,
		Stdout:      out,
		Stderr:      errOut,
		StdoutSpill: stdout.SpillPath(),
		StderrSpill: stderr.SpillPath(),
	}
}

func readStream(c *capture.Collector) StreamRead {
	data, before, lossy := c.ReadNewAfter()
	return StreamRead{Text: capture.Text(data), Lossy: lossy, Before: capture.Text(before)}
}

// ProcessState is the State of a background process as both executors
// report it: running until done, unless killed (with timedOut when its
// timeout killed it); once done, what exit reports — completed with its
// exit code, killed when a kill was asked or a signal ended it (even one
// it sent itself), killed with Err when exit says it never learned how the
// process ended.
func ProcessState(done <-chan struct{}, killed, timedOut bool, exit func() (code *int, signal string, err error)) State {
	select {
	case <-done:
	default:
		if killed {
			return State{Status: StatusKilled, TimedOut: timedOut}
		}
		return State{Status: StatusRunning}
	}
	code, sig, err := exit()
	if err != nil {
		return State{Status: StatusKilled, Err: err}
	}
	st := State{Status: StatusCompleted, ExitCode: code, Signal: sig, TimedOut: timedOut}
	if killed || sig != "" {
		st.Status = StatusKilled
	}
	return st
}

// SoFar is the Result of a run that yields (RunOrYield) while its
// collectors go on: no exit facts, the output so far, which the process's
// reads then go on after ([capture.Collector.Yield]), and the time since
// started.
func SoFar(timeoutMs int64, started time.Time, stdout, stderr *capture.Collector) Result {
	return Result{
		TimeoutMs: timeoutMs,
		Duration:  time.Since(started),
		Stdout:    OutputOf(stdout.Yield()),
		Stderr:    OutputOf(stderr.Yield()),
	}
}
