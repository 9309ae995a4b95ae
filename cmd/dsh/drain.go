package main

// dsh serve's metrics and draining (docs/spec.md §15.2, §15.3).

import (
	"time"

	"github.com/dsh-go/dsh/internal/metrics"
)

// drainPoll is how often a drain looks whether the work is done: it waits
// for calls and tasks of other sessions, which signal nothing it could
// wait on together.
const drainPoll = 50 * time.Millisecond

// abortSlack is how long, beyond the kill sequence's grace, a drain waits
// for the calls it cut to return their results.
const abortSlack = 5 * time.Second

// metrics makes the server's metrics and makes them see every call and
// every task end, once: the Prometheus endpoint and the OTLP export read
// the same.
func (fe *frontEnd) metrics() *metrics.Metrics {
	if fe.m != nil {
		return fe.m
	}
	st := fe.stack
	var names []string
	for _, t := range st.Tools.List() {
		names = append(names, t.Name)
	}
	src := metrics.Sources{Sessions: fe.srv.Sessions, Foreground: st.ForegroundRunning, NetConnections: st.NetConnections}
	if st.Tasks != nil {
		src.Background = st.Tasks.Live
	}
	if st.Hooks != nil {
		src.HookFailures = st.Hooks.Failures
	}
	if st.Local != nil {
		src.SpillBytes, src.Swept = st.Local.SpillBytes, st.Local.Swept
	}
	m := metrics.New(names, src)
	st.Tools.Observe(m.Call)
	if st.Tasks != nil {
		st.Tasks.OnSettled(m.TaskEnd)
	}
	fe.m = m
	return m
}

// commandsRunning counts the foreground commands and background tasks
// that run now, in all sessions.
func (fe *frontEnd) commandsRunning() int {
	n := int(fe.stack.ForegroundRunning())
	if fe.stack.Tasks != nil {
		n += fe.stack.Tasks.Live()
	}
	return n
}

// busy reports whether calls or background tasks still run.
func (fe *frontEnd) busy() bool {
	return fe.srv.CallsRunning() > 0 || (fe.stack.Tasks != nil && fe.stack.Tasks.Live() > 0)
}

// drain stops taking sessions and waits up to timeout for the running
// calls and tasks, or until SIGINT or a second SIGTERM. The caller then
// cuts the calls still running (abortCalls: each returns `Error: command
// aborted`) and ends the sessions, which kills their tasks.
func (fe *frontEnd) drain(timeout time.Duration) {
	fe.srv.Drain()
	fe.log.Info("draining: no new sessions; waiting for running calls and tasks", "timeout", timeout.String())
	if !fe.waitIdle(timeout) {
		if fe.ctx.Err() != nil {
			fe.log.Info("stopping at once")
			return
		}
		// The caller cuts them (abortCalls), once for both ways out.
		fe.log.Warn("drain timeout: cutting the calls still running and ending the sessions",
			"calls", fe.srv.CallsRunning(), "tasks", fe.tasksLive())
		return
	}
	fe.log.Info("drained: no call or task runs")
}

// waitIdle waits until nothing runs (true), the timeout passes or the
// front end's context ends (false).
func (fe *frontEnd) waitIdle(timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for fe.busy() {
		select {
		case <-fe.ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// abortCalls cuts the calls still running and waits until they have
// returned their `Error: command aborted`, at most the kill sequence's
// grace and abortSlack: the sessions must not end under them, or their
// clients get no result at all. Called when dsh stops, at once or after a
// drain.
func (fe *frontEnd) abortCalls() {
	fe.srv.AbortCalls()
	deadline := time.NewTimer(fe.cfg.WithDefaults().Local.Grace + abortSlack)
	defer deadline.Stop()
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for fe.srv.CallsRunning() > 0 {
		select {
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

func (fe *frontEnd) tasksLive() int {
	if fe.stack.Tasks == nil {
		return 0
	}
	return fe.stack.Tasks.Live()
}
