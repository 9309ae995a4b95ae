package execcore

import (
	"context"
	"sync"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/capture"
)

// Ending is what only the executor knows of its run.
type Ending interface {
	// Exit is how the command ended, once Exited is closed: its exit
	// code (nil for a death by a signal) and the signal's name, or err
	// when the executor never learned (the SSH connection was lost).
	Exit() (code *int, signal string, err error)
	// Detach makes a foreground run one that goes on in the background
	// (RunOrYield's yield), unless its end is already known; it reports
	// whether it did.
	Detach() bool
}

// Run is the part of one command's run, foreground or background, that
// does not depend on where the command runs. Its only goroutine is
// KeepTimeout's, which Await starts for a yielded run.
type Run struct {
	Command        string
	Started        time.Time
	Stdout, Stderr *capture.Collector
	// Exited is closed by the executor once the command's end is known
	// (or known to be unknowable); Done once its output is collected and
	// everything of it is closed.
	Exited chan struct{}
	Done   chan struct{}

	end      Ending
	killCh   chan struct{} // closed by the first kill request
	killOnce sync.Once

	mu       sync.Mutex
	killAt   time.Time
	timedOut bool // the timeout of a yielded run killed it
	ended    time.Time
	outRes   capture.Result
	errRes   capture.Result
}

// NewRun is the run of command, spawned at started, whose streams stdout
// and stderr collect, and whose end end tells.
func NewRun(command string, started time.Time, stdout, stderr *capture.Collector, end Ending) *Run {
	return &Run{
		Command: command,
		Started: started,
		Stdout:  stdout,
		Stderr:  stderr,
		Exited:  make(chan struct{}),
		Done:    make(chan struct{}),
		end:     end,
		killCh:  make(chan struct{}),
	}
}

// Kill requests the kill, which the executor carries out on seeing
// Killing close. It reports whether this call was the first request.
func (r *Run) Kill() bool {
	first := false
	r.killOnce.Do(func() {
		first = true
		r.mu.Lock()
		r.killAt = time.Now()
		r.mu.Unlock()
		close(r.killCh)
	})
	return first
}

// Killing is closed by the first kill request.
func (r *Run) Killing() <-chan struct{} { return r.killCh }

// KillRequested reports whether a kill was requested.
func (r *Run) KillRequested() bool {
	select {
	case <-r.killCh:
		return true
	default:
		return false
	}
}

// KillAt is when the kill was first requested; zero if it was not.
func (r *Run) KillAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killAt
}

// KillUnlessExited requests the kill of a run whose end is not known, and
// reports whether it did: one that ended in the same instant ended by
// itself.
func (r *Run) KillUnlessExited() bool {
	select {
	case <-r.Exited:
		return false
	default:
		r.Kill()
		return true
	}
}

// TimedOut reports that the timeout of a yielded run killed it.
func (r *Run) TimedOut() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.timedOut
}

// Await waits for a started foreground run's end, its timeout or its
// caller's context, killing it for either of these; it reports which
// ended it (aborted also when Close killed it). When yield closes first
// (nil: never) and the run detaches, it goes on in the background, still
// bound to its timeout, and Await reports yielded.
func (r *Run) Await(ctx context.Context, timeout time.Duration, yield <-chan struct{}) (timedOut, aborted, yielded bool) {
	timer := time.NewTimer(timeout)
	select {
	case <-r.Exited:
	case <-r.Done:
	case <-r.killCh: // Close
		aborted = true
	case <-ctx.Done():
		aborted = r.KillUnlessExited()
	case <-timer.C:
		timedOut = r.KillUnlessExited()
	case <-yield:
		if r.end.Detach() {
			go r.keepTimeout(timer)
			return false, false, true
		}
		// It ended in the same instant: its result, as if no yield came.
	}
	timer.Stop()
	return timedOut, aborted, false
}

// keepTimeout is the goroutine that keeps a yielded run bound to its
// timeout: when timer fires before the run's end is known, the run is
// marked timed out and killed. It ends when the run exits (Close, Kill
// and a lost connection lead there too) or the timer fires.
func (r *Run) keepTimeout(timer *time.Timer) {
	defer timer.Stop()
	select {
	case <-r.Exited:
	case <-r.Done:
	case <-timer.C:
		select {
		case <-r.Exited:
		default:
			r.mu.Lock()
			r.timedOut = true
			r.mu.Unlock()
			r.Kill()
		}
	}
}

// Foreground is the end of a started foreground run (Await): its Result
// once it is done, or, when yield closed first, the output so far and
// the live Process (docs/spec.md §12).
func (r *Run) Foreground(ctx context.Context, timeout time.Duration, yield <-chan struct{}) (bash.Result, bash.Process, error) {
	timedOut, aborted, yielded := r.Await(ctx, timeout, yield)
	if yielded {
		return r.soFar(timeout), r.Process(), nil
	}
	res, err := r.Result(timeout, timedOut, aborted)
	return res, nil, err
}

// Result waits until the run is done and is its Result, or the error
// of a run whose end the executor never learned.
func (r *Run) Result(timeout time.Duration, timedOut, aborted bool) (bash.Result, error) {
	<-r.Done
	code, sig, err := r.end.Exit()
	if err != nil {
		return bash.Result{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return bash.Result{
		ExitCode: code,
		Signal:   sig,
		TimedOut: timedOut,
		Aborted:  aborted,
		Timeout:  timeout,
		Duration: r.ended.Sub(r.Started),
		Stdout:   outputOf(r.outRes),
		Stderr:   outputOf(r.errRes),
	}, nil
}

// soFar is the Result of a run that yields while its collectors go on:
// no exit facts, the output so far, which the process's reads then go on
// after ([capture.Collector.Yield]), and the time since it started.
func (r *Run) soFar(timeout time.Duration) bash.Result {
	return bash.Result{
		Timeout:  timeout,
		Duration: time.Since(r.Started),
		Stdout:   outputOf(r.Stdout.Yield()),
		Stderr:   outputOf(r.Stderr.Yield()),
	}
}

// CloseCollectors closes the collectors and records what they kept and
// when; warn hears why a spill file was withheld (the result says
// "(unavailable)", the log says why).
func (r *Run) CloseCollectors(warn func(err error)) {
	outRes, errRes := r.Stdout.Close(), r.Stderr.Close()
	for _, res := range []capture.Result{outRes, errRes} {
		if res.SpillErr != nil {
			warn(res.SpillErr)
		}
	}
	r.mu.Lock()
	r.outRes, r.errRes = outRes, errRes
	r.ended = time.Now()
	r.mu.Unlock()
}

// Collected is what the closed collectors kept.
func (r *Run) Collected() (stdout, stderr capture.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outRes, r.errRes
}
