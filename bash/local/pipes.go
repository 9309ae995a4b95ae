package local

import (
	"fmt"
	"os"

	"github.com/dsh-go/dsh/bash"
)

// pipes are a command's pipes, both ends of each: the parent's ends stay
// with the run, the child's are closed once the shell is spawned (it has
// its own copies then).
type pipes struct {
	outR, errR     *os.File // ours: the command's stdout and stderr
	stdout, stderr *os.File // the child's write ends
	stdin, script  *os.File // the child's read ends of the input pipes, or nil
	feeds          []feed   // ours: the input pipes' write ends
	// tty is the terminal's master when the command has one (outR too);
	// stdin, stdout and stderr are then its slave (terminal.go).
	tty *os.File

	parent, child []*os.File // every end, by side, for closing
}

// feed is an input pipe's write end and what a feeder writes to it.
type feed struct {
	w    *os.File
	data []byte
}

// openPipes makes the output pipes and, when spec needs them, the input
// pipes: stdin bytes, and a command too long for an argument.
func openPipes(spec bash.Spec) (*pipes, error) {
	p := &pipes{}
	var err error
	if p.outR, p.stdout, err = p.output(); err != nil {
		return nil, err
	}
	if p.errR, p.stderr, err = p.output(); err != nil {
		return nil, err
	}
	if spec.Stdin != nil {
		if p.stdin, err = p.input(spec.Stdin); err != nil {
			return nil, err
		}
	}
	if len(spec.Command) > maxArgCommand {
		if p.script, err = p.input([]byte(spec.Command)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// output makes a pipe the child writes and the run reads. On failure, every
// pipe made so far is closed.
func (p *pipes) output() (r, w *os.File, err error) {
	r, w, err = p.pipe()
	if err != nil {
		return nil, nil, err
	}
	p.parent, p.child = append(p.parent, r), append(p.child, w)
	return r, w, nil
}

// input makes a pipe the child reads and a feeder fills with data; it
// returns the child's end. On failure, every pipe made so far is closed.
func (p *pipes) input(data []byte) (*os.File, error) {
	r, w, err := p.pipe()
	if err != nil {
		return nil, err
	}
	p.parent, p.child = append(p.parent, w), append(p.child, r)
	p.feeds = append(p.feeds, feed{w, data})
	return r, nil
}

func (p *pipes) pipe() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		p.closeAll()
		return nil, nil, fmt.Errorf("%s: pipe: %w", Name, err)
	}
	return r, w, nil
}

// closeAll closes both ends of every pipe: the launch failed.
func (p *pipes) closeAll() {
	closeAll(p.parent)
	closeAll(p.child)
}

func closeAll(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
