package execcore

import (
	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/capture"
)

// Process is the handle of a run in the background: started so, or
// yielded by RunOrYield.
func (r *Run) Process() bash.Process { return process{r} }

type process struct{ r *Run }

func (p process) Command() string       { return p.r.Command }
func (p process) Done() <-chan struct{} { return p.r.Done }

// State: running until done, unless killed. Killed at once on Kill (or
// the executor's Close); also when a signal ended the process, even one
// it sent itself; killed with Err when the executor lost it before it
// ended.
func (p process) State() bash.State {
	r := p.r
	st := processState(r.Done, r.KillRequested(), r.TimedOut(), r.end.Exit)
	st.StdoutBytes, st.StderrBytes = r.Stdout.Total(), r.Stderr.Total()
	return st
}

// Kill requests the kill, once, and only while the process runs.
func (p process) Kill() bool {
	select {
	case <-p.r.Done:
		return false
	default:
		return p.r.Kill()
	}
}

// Read consumes the new output of both streams. Each stream is read
// after its collector's own bookkeeping, so a character is never split
// and loss is reported by the stream that lost.
func (p process) Read() bash.ReadResult {
	out, errOut := readStream(p.r.Stdout), readStream(p.r.Stderr)
	return bash.ReadResult{
		Delta:       bash.JoinStreams(out.Text, errOut.Text),
		Lossy:       out.Lossy || errOut.Lossy,
		Stdout:      out,
		Stderr:      errOut,
		StdoutSpill: p.r.Stdout.SpillPath(),
		StderrSpill: p.r.Stderr.SpillPath(),
	}
}

func (p process) SpillPaths() (stdout, stderr string) {
	return p.r.Stdout.SpillPath(), p.r.Stderr.SpillPath()
}

func readStream(c *capture.Collector) bash.StreamRead {
	r := c.ReadNewHead()
	return bash.StreamRead{Text: capture.Text(r.Data), Lossy: r.Lossy, Before: capture.Text(r.Before),
		Head: capture.Text(r.Head), OmittedBytes: r.Omitted}
}

// processState is the State of a background process: running until
// done, unless killed (with timedOut when its timeout killed it); once
// done, what exit reports — completed with its exit code, killed when a
// kill was asked or a signal ended it (even one it sent itself), killed
// with Err when exit says it never learned how the process ended.
func processState(done <-chan struct{}, killed, timedOut bool, exit func() (code *int, signal string, err error)) bash.State {
	select {
	case <-done:
	default:
		if killed {
			return bash.State{Status: bash.StatusKilled, TimedOut: timedOut}
		}
		return bash.State{Status: bash.StatusRunning}
	}
	code, sig, err := exit()
	if err != nil {
		return bash.State{Status: bash.StatusKilled, Err: err}
	}
	st := bash.State{Status: bash.StatusCompleted, ExitCode: code, Signal: sig, TimedOut: timedOut}
	if killed || sig != "" {
		st.Status = bash.StatusKilled
	}
	return st
}

// outputOf is the Output of a closed collector.
func outputOf(c capture.Result) bash.Output {
	return bash.Output{
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

// Collectors are a run's stdout and stderr collectors, made from opts,
// which carries the executor's caps and spill files; the rest is set here.
// Both keep headBytes of each stream's start besides the tail: a
// foreground run's result shows it, and a background run's read that
// missed output shows what it missed of it (bash.StreamRead.Head). A
// background run is consumed by reads and parked when it ends
// (capture.Options.Consumed). Both keep bash.ContextBytes before the
// tail. observe, when set, sees every chunk with its stream's name.
func Collectors(opts capture.Options, foreground bool, headBytes int64, observe func(stream string, p []byte)) (stdout, stderr *capture.Collector) {
	opts.ContextBytes = bash.ContextBytes
	opts.Consumed = !foreground
	opts.HeadBytes = headBytes
	collector := func(stream string) *capture.Collector {
		o := opts
		o.Stream = stream
		if observe != nil {
			o.Observe = func(p []byte) { observe(stream, p) }
		}
		return capture.New(o)
	}
	return collector("stdout"), collector("stderr")
}
