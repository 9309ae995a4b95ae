package local

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/bash/internal/execcore"
)

// run is one spawned command, foreground or background. Its goroutines,
// all started by start but the last:
//
//   - waiter (wait): cmd.Wait, then closes Exited;
//   - two readers: one per stream, pipe → collector, until EOF or the
//     drain deadline (a terminal's master is the stdout "pipe", whose
//     EIO is its EOF; stderr is then an empty pipe);
//   - feeders: one per input pipe (stdin bytes, a long command), until
//     written or the run ends;
//   - supervise: owns the kill sequence and the end of collection, and
//     closes Done when nothing of the run is left but its result;
//   - the readers' watcher, started by supervise's drain: closes a channel
//     once both readers returned, which they do by the drain deadline.
//
// Every one of them ends by the time Done is closed. The run's life cycle
// (kill request, foreground wait, yield) is the shared one, execcore.Run.
type run struct {
	*execcore.Run
	grace time.Duration

	cmd *exec.Cmd
	// status and reaped are the launcher's (a sandbox's): the shell's
	// real wait status, and what to release once it was reaped.
	status func() (syscall.WaitStatus, bool)
	reaped func()
	grp    container
	// keep: a foreground command under keepDetached, whose processes stay
	// (guarded by mu: a yield clears it, supervise reads it)
	// when it exits by itself; onKept then takes its container.
	keep   bool
	onKept func(container)
	log    *slog.Logger

	outR, errR *os.File
	term       *terminal  // the input side of outR, a terminal's master; nil without
	feeds      []*os.File // parent ends of the input pipes
	feedWG     sync.WaitGroup
	readers    atomic.Int32  // the output readers still reading
	readDone   chan struct{} // closed when none is

	mu    sync.Mutex
	state *syscall.WaitStatus // nil until reaped (then Exited closes)
}

// Exit is how the command ended, once it has ([execcore.Ending]).
func (r *run) Exit() (code *int, signal string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	code, signal = exitInfo(r.state)
	return code, signal, nil
}

// Detach turns a foreground run into one that goes on in the background
// (RunOrYield's yield), unless its leader has already exited; it reports
// whether it did. What a detached command leaves behind ends with it, as
// for a background one: keepDetached no longer applies. Deciding under mu,
// which the waiter holds to record the exit, keeps this from racing
// supervise's look at keep.
func (r *run) Detach() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != nil {
		return false
	}
	r.keep = false
	return true
}

// start starts the run's goroutines: a feeder per input pipe, the two
// readers, the waiter and supervise.
func (r *run) start(cc *commandContainer, feeds []feed) {
	for _, f := range feeds {
		r.feeds = append(r.feeds, f.w)
		r.feedWG.Add(1)
		go r.feed(f.w, f.data)
	}
	r.readers.Store(2)
	go func() { collect(r.outR, r.Stdout); r.readerDone() }()
	go func() { collect(r.errR, r.Stderr); r.readerDone() }()
	go r.wait(cc)
	go r.supervise()
}

// readerDone counts a reader out; the last closes readDone (one wake-up
// for the supervisor, where a goroutine awaiting a WaitGroup was two).
func (r *run) readerDone() {
	if r.readers.Add(-1) == 0 {
		close(r.readDone)
	}
}

// wait is the waiter: it reaps the shell, records its wait status (in a
// sandbox the one its starter reported, when it did) and closes Exited.
func (r *run) wait(cc *commandContainer) {
	awaitChildExit(r.cmd.Process.Pid)
	_ = r.cmd.Wait() // at once: the shell has exited
	cc.leaderReaped()
	ws, _ := r.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if r.status != nil {
		if reported, ok := r.status(); ok {
			ws = reported
		}
	}
	if r.reaped != nil {
		r.reaped()
	}
	r.mu.Lock()
	r.state = &ws
	r.mu.Unlock()
	close(r.Exited)
}

// supervise drives the run from spawn to done, in phases: await the
// leader, decide about what it left, drain the pipes, finish the kill,
// release the container, close the collectors. The kill sequence: SIGTERM
// to the container, SIGKILL graceMs later unless no live member is left.
// Collection: once the leader is reaped, the pipes are drained until EOF or
// graceMs later, whichever comes first, so a descendant that escaped the
// group and holds a pipe open cannot hold the run forever.
func (r *run) supervise() {
	defer close(r.Done)
	k := &killer{grp: r.grp, grace: r.grace, req: r.Killing()}
	r.awaitLeader(k)
	exitedAt := time.Now()
	kept := r.leftovers(k)
	r.drain(k, exitedAt)
	k.finish()
	if kept && !k.started {
		r.onKept(r.grp)
	} else {
		r.grp.release()
	}
	r.stopFeeders()
	r.closeCollectors()
}

// killer is the kill sequence of one run, driven by supervise alone.
type killer struct {
	grp   container
	grace time.Duration
	// req delivers the kill request; nil once the sequence started (or
	// when a request came with nothing left to kill), so that a closed
	// channel does not spin a select.
	req         <-chan struct{}
	sigkillAt   <-chan time.Time // fires when the SIGKILL is due
	sigkillTime time.Time
	started     bool
	sigkilled   bool
	// late ticks while the SIGTERM may have missed members that appear
	// later (a sandbox's processes, which bwrap starts after it was
	// sent): each tick sends it to the new ones. Until the SIGKILL.
	late     *time.Ticker
	lateTick <-chan time.Time
}

// lateEvery is how often a SIGTERM that spared bwrap looks for the
// sandbox's processes that it missed.
const lateEvery = 10 * time.Millisecond

// start sends SIGTERM and sets the SIGKILL graceMs later.
func (k *killer) start() {
	k.req, k.started = nil, true
	k.grp.signal(syscall.SIGTERM)
	k.sigkillTime = time.Now().Add(k.grace)
	k.sigkillAt = time.NewTimer(k.grace).C
	if k.grp.lateMembers() {
		k.late = time.NewTicker(lateEvery)
		k.lateTick = k.late.C
	}
}

func (k *killer) sigkill() {
	k.sigkillAt = nil
	k.sigkilled = true
	k.stopLate()
	k.grp.signal(syscall.SIGKILL)
}

func (k *killer) stopLate() {
	if k.late != nil {
		k.late.Stop()
		k.late, k.lateTick = nil, nil
	}
}

// finish awaits the members that outlive the SIGTERM (a TERM-trapping
// child whose output is redirected, say) until the SIGKILL is due, then
// kills and awaits them again, so nothing of the group still runs when
// done closes.
func (k *killer) finish() {
	k.stopLate()
	if k.started && !k.sigkilled && !k.grp.await(k.sigkillTime) {
		k.sigkill()
	}
	if k.sigkilled {
		k.grp.await(time.Now().Add(k.grace))
	}
}

// awaitLeader waits until the leader is reaped, starting the kill sequence
// when it is requested and sending its SIGKILL when due.
func (r *run) awaitLeader(k *killer) {
	for {
		select {
		case <-r.Exited:
			return
		case <-k.req:
			k.start()
		case <-k.sigkillAt:
			k.sigkill()
		case <-k.lateTick:
			k.grp.resignal()
		}
	}
}

// leftovers decides about what the leader left in its container, once it
// is gone: members end with it (a command's processes live as long as the
// command) unless the run keeps them; it reports whether it keeps them.
// (Signalling only a group that still has live members also keeps the kill
// off a pgid that was freed and reused.)
func (r *run) leftovers(k *killer) (kept bool) {
	if k.started || !r.grp.live() {
		return false
	}
	r.mu.Lock()
	keep := r.keep
	r.mu.Unlock()
	if keep {
		return true
	}
	k.start()
	return false
}

// drain waits for the readers until EOF, or until graceMs after the
// leader's exit, or, when a kill is under way, until its SIGKILL is due if
// that is later: a process that escaped the group and holds a pipe open
// cannot keep the run going beyond timeout plus grace. Kill requests and
// the SIGKILL are served meanwhile.
func (r *run) drain(k *killer, exitedAt time.Time) {
	deadline := exitedAt.Add(r.grace)
	if k.started {
		deadline = k.sigkillTime
	}
	_ = r.outR.SetReadDeadline(deadline)
	_ = r.errR.SetReadDeadline(deadline)
	for {
		select {
		case <-r.readDone:
			return
		case <-k.req:
			if r.grp.live() {
				k.start()
			} else {
				k.req = nil // nothing to kill
			}
		case <-k.sigkillAt:
			k.sigkill()
		case <-k.lateTick:
			k.grp.resignal()
		}
	}
}

// stopFeeders cuts short the writes still going into the input pipes and
// waits for the feeders.
func (r *run) stopFeeders() {
	for _, f := range r.feeds {
		_ = f.SetWriteDeadline(time.Now())
	}
	r.feedWG.Wait()
}

// closeCollectors closes the output pipes and the collectors and records
// the results.
func (r *run) closeCollectors() {
	_ = r.outR.Close()
	_ = r.errR.Close()
	r.CloseCollectors(func(err error) {
		r.log.Warn("bash-local: spill file withheld", "err", err)
	})
}

// collect copies a pipe into its collector. When the drain deadline cuts
// it short, what is already buffered in the pipe is still taken, with
// non-blocking reads and up to maxFinalDrain bytes, so a deadline never
// loses output that was written before it.
func collect(f *os.File, c *capture.Collector) {
	_, err := c.ReadFrom(f)
	if endOfTerminal(err) || !errors.Is(err, os.ErrDeadlineExceeded) {
		return
	}
	if f.SetReadDeadline(time.Time{}) != nil {
		return
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	_ = raw.Read(func(fd uintptr) bool {
		for taken := 0; taken < maxFinalDrain; {
			n, err := unix.Read(int(fd), buf)
			if n <= 0 || err != nil {
				break
			}
			if _, err := c.Write(buf[:n]); err != nil {
				break
			}
			taken += n
		}
		return true // never wait for more
	})
}

// maxFinalDrain bounds the last non-blocking drain, so a process that
// keeps writing cannot hold it.
const maxFinalDrain = 1 << 20

// feed writes data to w and closes it. A write error (EPIPE when the
// command exits without reading, or the deadline set when the run ends) is
// ignored: the command's own exit status is what counts.
func (r *run) feed(w *os.File, data []byte) {
	defer r.feedWG.Done()
	_, _ = w.Write(data)
	_ = w.Close()
}

// exitInfo returns the exit code (nil for a signal death) and the signal
// name from a reaped process's wait status.
func exitInfo(ws *syscall.WaitStatus) (*int, string) {
	if ws == nil {
		return nil, ""
	}
	if ws.Signaled() {
		return nil, signalName(ws.Signal())
	}
	code := ws.ExitStatus()
	return &code, ""
}

func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return "SIG" + sig.String()
}
