package tool

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Progress receives a running call's progress: a number that only grows
// and a short message. A front end puts one in the call's context (MCP,
// when the request carries a progress token); tools that can report
// progress look for it with [ProgressFrom].
type Progress func(progress float64, message string)

type progressKey struct{}

// WithProgress returns ctx carrying p.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the Progress in ctx, or nil.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// HeartbeatEvery is how long a call with a [Heartbeat] goes without a
// notification at most, and ProgressEvery the least time between two
// (docs/spec.md §6.4, §12).
const (
	HeartbeatEvery = time.Second
	ProgressEvery  = 250 * time.Millisecond
)

// Heartbeat turns the progress a tool reports into notifications that
// never stop for long: a client that resets its request timeout on
// progress (resetTimeoutOnProgress) then waits for a quiet command, and
// for the hooks and the user's answer before it (docs/spec.md §12).
//
// A front end starts one when a call arrives, puts [Heartbeat.Report] in
// the call's context as its Progress, and stops it before it sends the
// result. Each notification carries progress = the output bytes the tool
// last reported + the number of notifications already sent, so the
// values strictly increase (as MCP requires) even when nothing new was
// printed, and message = the tool's last non-empty message, or `running
// for Ns` (whole seconds since the call arrived) when it has none.
// Whenever HeartbeatEvery passes without a notification, one is sent; a
// report comes out at once, or ProgressEvery after the previous
// notification. Notifications are sent one at a time, in order; none
// after Stop.
type Heartbeat struct {
	send    Progress
	arrived time.Time

	mu      sync.Mutex
	stopped bool
	bytes   float64
	message string
	sent    int
	sentAt  time.Time
	pending bool          // a report waits for ProgressEvery to pass
	kick    chan struct{} // a report came: the next notification is due sooner

	stop chan struct{}
	done chan struct{}
}

// StartHeartbeat starts the heartbeat of a call that arrived at arrived;
// send delivers each notification (on the heartbeat's goroutine or the
// reporting tool's, one at a time). Its goroutine ends with Stop.
func StartHeartbeat(send Progress, arrived time.Time) *Heartbeat {
	h := &Heartbeat{send: send, arrived: arrived, sentAt: arrived,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go h.beat()
	return h
}

// Report is the call's Progress: progress is the output bytes so far,
// message the last non-empty line ("" when there is none yet).
func (h *Heartbeat) Report(progress float64, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	h.bytes = max(h.bytes, progress)
	if message != "" {
		h.message = message
	}
	if now := time.Now(); now.Sub(h.sentAt) >= ProgressEvery {
		h.notifyLocked(now)
	} else {
		h.pending = true
	}
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// Stop ends the heartbeat and waits for its goroutine; nothing is sent
// after it returns. When a notification went out less than settleTime
// ago, Stop waits until that much time has passed, so that the result does
// not reach the client in the same read as it: the TypeScript SDK handles
// a notification a moment after the read it came in and the response at
// once, and would then find the request gone ("Received a progress
// notification for an unknown token").
func (h *Heartbeat) Stop() {
	h.mu.Lock()
	h.stopped = true
	sentAt, sent := h.sentAt, h.sent
	h.mu.Unlock()
	close(h.stop)
	<-h.done
	if wait := settleTime - time.Since(sentAt); sent > 0 && wait > 0 {
		time.Sleep(wait)
	}
}

// settleTime is how long after its last notification a call's result
// waits at most.
const settleTime = 20 * time.Millisecond

// beat is the heartbeat's goroutine: it sends a notification whenever
// one is due, until Stop.
func (h *Heartbeat) beat() {
	defer close(h.done)
	t := time.NewTimer(time.Until(h.arrived.Add(HeartbeatEvery)))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.kick:
		case <-t.C:
		}
		h.mu.Lock()
		now := time.Now()
		if !h.stopped && !now.Before(h.dueLocked()) {
			h.notifyLocked(now)
		}
		next := h.dueLocked()
		h.mu.Unlock()
		t.Reset(next.Sub(now))
	}
}

// dueLocked is when the next notification is due: ProgressEvery after the
// last one for a waiting report, else HeartbeatEvery after it.
func (h *Heartbeat) dueLocked() time.Time {
	if h.pending {
		return h.sentAt.Add(ProgressEvery)
	}
	return h.sentAt.Add(HeartbeatEvery)
}

// notifyLocked sends one notification. Called with mu held, so that
// notifications go out in the order of their progress.
func (h *Heartbeat) notifyLocked(now time.Time) {
	message := h.message
	if message == "" {
		message = "running for " + strconv.Itoa(int(now.Sub(h.arrived)/time.Second)) + "s"
	}
	progress := h.bytes + float64(h.sent)
	h.sent++
	h.sentAt, h.pending = now, false
	h.send(progress, message)
}

// Yielding. A front end whose client times requests out lets a long
// foreground call hand its work to the background before that happens
// (docs/spec.md §12): the bash tool yields only for a call whose context
// allows it, counting from the call's arrival. MCP allows it; an ACP agent
// that wants it calls AllowYield itself; dsh run does not.

type yieldKey struct{}

// AllowYield returns ctx letting the call it carries yield to the
// background, counting its deadline from arrived.
func AllowYield(ctx context.Context, arrived time.Time) context.Context {
	return context.WithValue(ctx, yieldKey{}, arrived)
}

// YieldAllowed reports whether the call of ctx may yield, and when it
// arrived.
func YieldAllowed(ctx context.Context) (arrived time.Time, ok bool) {
	arrived, ok = ctx.Value(yieldKey{}).(time.Time)
	return arrived, ok
}
