package local

import (
	"github.com/dsh-go/dsh/bash"
)

// process is the handle of a background run.
type process struct{ run *run }

var _ bash.Process = (*process)(nil)

func (p *process) Command() string       { return p.run.command }
func (p *process) Done() <-chan struct{} { return p.run.done }

// State: running until done, unless killed. Killed at once on Kill (or the
// executor's Close); also when a signal ended the process, even one it sent
// itself.
func (p *process) State() bash.State {
	st := p.state()
	st.StdoutBytes, st.StderrBytes = p.run.stdout.Total(), p.run.stderr.Total()
	return st
}

// state is the process's status and how it ended, if it has.
func (p *process) state() bash.State {
	killed := p.run.killRequested()
	p.run.mu.Lock()
	timedOut := p.run.timedOut
	p.run.mu.Unlock()
	return bash.ProcessState(p.run.done, killed, timedOut, p.exit)
}

// exit is how the process ended, once it has.
func (p *process) exit() (code *int, signal string, err error) {
	p.run.mu.Lock()
	code, sig := exitInfo(p.run.state)
	p.run.mu.Unlock()
	return code, sig, nil
}

// Kill marks the process killed and starts the kill sequence, once, and
// only while it runs.
func (p *process) Kill() bool {
	select {
	case <-p.run.done:
		return false
	default:
		return p.run.kill()
	}
}

// Read consumes new output of both streams (bash.ReadCollectors).
func (p *process) Read() bash.ReadResult {
	return bash.ReadCollectors(p.run.stdout, p.run.stderr)
}

func (p *process) SpillPaths() (stdout, stderr string) {
	return p.run.stdout.SpillPath(), p.run.stderr.SpillPath()
}
