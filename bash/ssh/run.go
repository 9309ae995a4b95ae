package ssh

import (
	"io"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/dsh-go/dsh/bash/internal/execcore"
)

// drainSlack is how much longer than the local executor a run waits for
// output once the command's exit status has arrived: the last bytes and
// the end of the streams still have to cross the network.
const drainSlack = 250 * time.Millisecond

// run is one command on a session channel of its own, foreground or
// background. Its goroutines, started by spawn:
//
//   - requests: reads the channel's requests, records the exit status and
//     closes Exited as soon as it arrives (or once the channel ended
//     without one); when the server has confirmed the channel's close (or
//     the connection is gone), gives the channel's slot back to the pool;
//   - two readers: stdout (the wrapper's start frame first, then the
//     collector) and stderr (the collector), until the channel's EOF or
//     close;
//   - the feeder: owns the channel's stdin: the payloads, then a
//     heartbeat every keepaliveMs and the kill frame once, until supervise
//     stops it;
//   - supervise: waits for the exit status or the connection's loss,
//     drains the output until EOF or the drain deadline, closes the
//     channel, stops the feeder, closes the collectors and closes Done;
//   - the readers' watcher, started by supervise's drain: closes a
//     channel once both readers returned.
//
// All of them but requests end by the time Done closes; requests ends once
// the channel is closed on both sides, and the executor's WaitGroup counts
// it. The run's life cycle (kill request, foreground wait, yield) is the
// shared one, execcore.Run: the kill frame the feeder sends is how it
// carries out a kill request.
type run struct {
	*execcore.Run
	e   *Executor
	s   *session
	inv invocation

	frame    chan frameResult // the start frame or why none came: one value
	stopFeed chan struct{}
	readWG   sync.WaitGroup
	feedWG   sync.WaitGroup
	exitOnce sync.Once

	mu        sync.Mutex
	pgid      int
	abandoned bool // given up before its start frame: dsh closed the channel
	status    exitStatus
	exitAt    time.Time
	err       error // the run failed: its connection was lost, or no exit status came
}

// frameResult is the wrapper's start frame, or why none came.
type frameResult struct {
	f   frame
	err error
}

// Exit is how the command ended, once it has, or why that is not known
// ([execcore.Ending]).
func (r *run) Exit() (code *int, signal string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, "", r.err
	}
	code, signal = r.status.exitInfo()
	return code, signal, nil
}

// Detach lets a foreground run go on in the background (RunOrYield's
// yield) unless its exit status has come.
func (r *run) Detach() bool {
	select {
	case <-r.Exited:
		return false
	default:
		return true
	}
}

// setExit records how the command ended (an unknown status when the
// channel ended without one) and closes Exited, once.
func (r *run) setExit(st exitStatus) {
	r.exitOnce.Do(func() {
		r.mu.Lock()
		r.status = st
		r.exitAt = time.Now()
		r.mu.Unlock()
		close(r.Exited)
	})
}

// requests is the requests goroutine.
func (r *run) requests() {
	defer r.e.wg.Done()
	st := readRequests(r.s.reqs, r.setExit)
	r.setExit(st)
	r.e.pool.release(r.s.c)
}

// startIO starts the readers, the feeder and supervise.
func (r *run) startIO() {
	r.readWG.Add(2)
	go r.readStdout()
	go func() {
		defer r.readWG.Done()
		_, _ = r.Stderr.ReadFrom(r.s.ch.Stderr())
	}()
	r.feedWG.Add(1)
	go r.feed()
	go r.supervise()
}

// readStdout finds the start frame, then collects the command's stdout.
// Without a frame, or after one saying why the command did not start,
// the rest of stdout is not the command's and is dropped.
func (r *run) readStdout() {
	defer r.readWG.Done()
	rest, ok := r.awaitFrame()
	if !ok {
		_, _ = io.Copy(io.Discard, r.s.ch)
		return
	}
	if len(rest) > 0 {
		_, _ = r.Stdout.Write(rest)
	}
	_, _ = r.Stdout.ReadFrom(r.s.ch)
}

// awaitFrame reads stdout until the wrapper's start frame and sends it on
// r.frame; it returns the command's first output and whether the command
// started.
func (r *run) awaitFrame() ([]byte, bool) {
	var buf []byte
	chunk := make([]byte, 4<<10)
	for {
		n, err := r.s.ch.Read(chunk)
		buf = append(buf, chunk[:n]...)
		f, rest, ok, ferr := startFrame(buf, r.inv.nonce)
		switch {
		case ferr != nil:
			r.frame <- frameResult{err: ferr}
			return nil, false
		case ok:
			r.frame <- frameResult{f: f}
			return rest, f.problem == ""
		case err != nil:
			r.frame <- frameResult{err: errNoFrame}
			return nil, false
		}
	}
}

// feed is the feeder. A write error means the channel is closed: nobody
// reads the frames any more.
func (r *run) feed() {
	defer r.feedWG.Done()
	ch := r.s.ch
	if len(r.inv.payload) > 0 {
		if _, err := ch.Write(r.inv.payload); err != nil {
			return
		}
	}
	if _, err := ch.Write(frameHeartbeat); err != nil {
		return
	}
	t := time.NewTicker(r.e.keepalive)
	defer t.Stop()
	kill := r.Killing()
	for {
		var frame []byte
		select {
		case <-r.stopFeed:
			return
		case <-kill:
			kill, frame = nil, frameKill
		case <-t.C:
			frame = frameHeartbeat
		}
		if _, err := ch.Write(frame); err != nil {
			return
		}
	}
}

// supervise drives the run from the exit status to done: a lost
// connection fails the run at once (the remote watchdog kills the command
// when it misses the heartbeats or sees its stdin end); otherwise the
// output is drained, then everything is closed.
func (r *run) supervise() {
	defer close(r.Done)
	lost := r.s.c.lost
	select {
	case <-r.Exited:
	case <-lost:
	}
	r.mu.Lock()
	known, abandoned := r.status.known, r.abandoned
	r.mu.Unlock()
	switch {
	case known:
	case r.s.c.isLost() || !r.s.c.alive():
		r.fail(lostError(r.s.c))
	case abandoned:
		// dsh closed the channel itself: no status was to come.
	default:
		// The channel ended with no exit status on a working
		// connection: whatever ran, its end is unknown.
		r.fail(errNoStatus(r.e.target.host))
	}
	r.drain()
	close(r.stopFeed)
	r.feedWG.Wait()
	r.closeCollectors()
}

// abandon gives up a run whose start frame did not come: the remote
// login may be stuck before the wrapper (rc files that block), where
// nothing reads the kill frame. sshd is asked to send SIGKILL to the
// session's process group (RFC 4254's "signal"; OpenSSH signals the group
// its session child leads, which holds the login shell, what its rc files
// run and the wrapper), the exit status is awaited for graceMs, then the
// channel is closed, which ends the run. A server that does not signal
// still sees the channel close: a wrapper that gets that far finds its
// stdin at its end, so its watchdog kills what it started.
func (r *run) abandon() {
	r.Kill()
	r.mu.Lock()
	r.abandoned = true
	r.mu.Unlock()
	_, _ = r.s.ch.SendRequest("signal", false, gossh.Marshal(struct{ Signal string }{"KILL"}))
	t := time.NewTimer(r.e.grace)
	defer t.Stop()
	select {
	case <-r.Exited:
	case <-t.C:
	case <-r.s.c.lost:
	}
	_ = r.s.ch.Close()
}

// failure is why the run failed, if it did.
func (r *run) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *run) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// drain waits for the readers until EOF, the drain deadline or the
// connection's loss, then closes the channel, which ends the readers.
func (r *run) drain() {
	readers := make(chan struct{})
	go func() { r.readWG.Wait(); close(readers) }()
	t := time.NewTimer(time.Until(r.drainDeadline()))
	defer t.Stop()
	select {
	case <-readers:
	case <-t.C:
	case <-r.s.c.lost:
	}
	_ = r.s.ch.Close()
	<-readers
}

// drainDeadline is when collection stops waiting for the end of the
// output: graceMs after the exit, or, when a kill was requested, after the
// kill's SIGKILL if that is later (as for the local executor: an escaped
// process holding the output cannot hold the run beyond timeout plus
// grace), plus drainSlack for the network.
func (r *run) drainDeadline() time.Time {
	killAt := r.KillAt()
	r.mu.Lock()
	defer r.mu.Unlock()
	deadline := r.exitAt.Add(r.e.grace)
	if !killAt.IsZero() {
		deadline = killAt.Add(r.e.grace)
		if deadline.Before(r.exitAt) {
			deadline = r.exitAt
		}
	}
	return deadline.Add(drainSlack)
}

// closeCollectors closes the collectors and records what they kept.
func (r *run) closeCollectors() {
	r.CloseCollectors(func(err error) {
		r.e.log.Warn("ssh: spill file withheld", "host", r.e.target.host, "err", err)
	})
}

// exitInfo is the exit code (nil for a signal death) and the signal name.
func (st exitStatus) exitInfo() (*int, string) {
	if !st.known {
		return nil, ""
	}
	if st.signal != "" {
		return nil, st.signal
	}
	code := st.code
	return &code, ""
}
