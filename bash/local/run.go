package local

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/capture"
)

// run is one spawned command, foreground or background. Its goroutines:
//
//   - waiter: cmd.Wait, then closes exited;
//   - two readers: one per stream, pipe → collector, until EOF or the
//     drain deadline;
//   - feeders: one per input pipe (stdin bytes, a long command), until
//     written or the run ends;
//   - supervise: owns the kill sequence and the end of collection, and
//     closes done when nothing of the run is left but its result.
//
// Every one of them ends by the time done is closed.
type run struct {
	command string
	grace   time.Duration
	started time.Time

	cmd *exec.Cmd
	grp container
	// keep: a foreground command under keepDetached, whose processes stay
	// when it exits by itself; onKept then takes its container.
	keep   bool
	onKept func(container)

	stdout, stderr *capture.Collector
	outR, errR     *os.File
	feeds          []*os.File // parent ends of the input pipes
	feedWG         sync.WaitGroup
	readWG         sync.WaitGroup

	exited chan struct{} // leader reaped; state is set
	done   chan struct{} // everything collected and cleaned up
	killCh chan struct{} // closed by the first kill request

	killOnce sync.Once
	mu       sync.Mutex
	state    *os.ProcessState
	ended    time.Time
	outRes   capture.Result
	errRes   capture.Result
}

// kill requests the kill sequence. It reports whether this call was the
// first request.
func (r *run) kill() bool {
	first := false
	r.killOnce.Do(func() {
		first = true
		close(r.killCh)
	})
	return first
}

func (r *run) killRequested() bool {
	select {
	case <-r.killCh:
		return true
	default:
		return false
	}
}

// supervise drives the run from spawn to done. The kill sequence: SIGTERM
// to the container, SIGKILL graceMs later unless no live member is left.
// Collection: once the leader is reaped, the pipes are drained until EOF or
// graceMs later, whichever comes first, so a descendant that escaped the
// group and holds a pipe open cannot hold the run forever.
func (r *run) supervise() {
	defer close(r.done)

	var (
		killReq     = r.killCh
		sigkillAt   <-chan time.Time
		sigkillTime time.Time
		killStarted bool
		sigkilled   bool
	)
	startKill := func() {
		killReq, killStarted = nil, true
		r.grp.signal(syscall.SIGTERM)
		sigkillTime = time.Now().Add(r.grace)
		sigkillAt = time.NewTimer(r.grace).C
	}
	sigkill := func() {
		sigkillAt = nil
		sigkilled = true
		r.grp.signal(syscall.SIGKILL)
	}

	for exited := r.exited; exited != nil; {
		select {
		case <-exited:
			exited = nil
		case <-killReq:
			startKill()
		case <-sigkillAt:
			sigkill()
		}
	}

	// The leader is gone. Members it left in its group end with it: a
	// command's processes live as long as the command. (Signalling only a
	// group that still has live members also keeps the kill off a pgid
	// that was freed and reused.)
	exitedAt := time.Now()
	kept := false
	if !killStarted && r.grp.live() {
		if r.keep {
			kept = true
		} else {
			startKill()
		}
	}
	// Drain until EOF, or until graceMs after the leader's exit, or, when
	// a kill is under way, until its SIGKILL is due if that is later: a
	// process that escaped the group and holds a pipe open cannot keep the
	// run going beyond timeout plus grace.
	deadline := exitedAt.Add(r.grace)
	if killStarted {
		deadline = sigkillTime
	}
	_ = r.outR.SetReadDeadline(deadline)
	_ = r.errR.SetReadDeadline(deadline)
	readers := make(chan struct{})
	go func() { r.readWG.Wait(); close(readers) }()
	for readers != nil {
		select {
		case <-readers:
			readers = nil
		case <-killReq:
			if r.grp.live() {
				startKill()
			} else {
				killReq = nil // nothing to kill; do not spin on the closed channel
			}
		case <-sigkillAt:
			sigkill()
		}
	}
	// Members that outlive the SIGTERM (a TERM-trapping child whose output
	// is redirected, say) are awaited until the SIGKILL is due, then
	// killed and awaited again, so nothing of the group still runs when
	// done closes.
	if killStarted && !sigkilled && !r.grp.await(sigkillTime) {
		sigkill()
	}
	if sigkilled {
		r.grp.await(time.Now().Add(r.grace))
	}

	if kept && !killStarted {
		r.onKept(r.grp)
	} else {
		r.grp.release()
	}

	for _, f := range r.feeds {
		_ = f.SetWriteDeadline(time.Now())
	}
	r.feedWG.Wait()
	_ = r.outR.Close()
	_ = r.errR.Close()

	outRes, errRes := r.stdout.Close(), r.stderr.Close()
	for _, res := range []capture.Result{outRes, errRes} {
		if res.SpillErr != nil {
			// The result says "(unavailable)"; the log says why.
			slog.Warn("bash-local: spill file withheld", "err", res.SpillErr)
		}
	}
	r.mu.Lock()
	r.outRes, r.errRes = outRes, errRes
	r.ended = time.Now()
	r.mu.Unlock()
}

// collect copies a pipe into its collector. When the drain deadline cuts
// it short, what is already buffered in the pipe is still taken, with
// non-blocking reads and up to maxFinalDrain bytes, so a deadline never
// loses output that was written before it.
func collect(f *os.File, c *capture.Collector) {
	_, err := c.ReadFrom(f)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
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
// name from a reaped process state.
func exitInfo(st *os.ProcessState) (*int, string) {
	if st == nil {
		return nil, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return nil, signalName(ws.Signal())
	}
	code := st.ExitCode()
	return &code, ""
}

func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return "SIG" + sig.String()
}

func output(c capture.Result) bash.Output {
	return bash.Output{
		Text:        c.Text,
		Truncated:   c.Truncated,
		SpillPath:   c.SpillPath,
		SpillCapped: c.SpillCapped,
		SpillBytes:  c.SpillBytes,
		TotalBytes:  c.TotalBytes,
	}
}
