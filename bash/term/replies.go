package term

import (
	"io"
	"sync"

	"github.com/charmbracelet/x/vt"
)

// maxQueuedReplies bounds the answers waiting for a reply func that does not
// return: beyond it answers are dropped. A program that floods a terminal
// with queries while not reading its input gets nothing more from it.
const maxQueuedReplies = 64 << 10

// replies carries the emulator's answers to the program. x/vt writes them
// into an io.Pipe from inside Emulator.Write, where they block until read;
// so a reader goroutine per emulator drains the pipe at all times and queues
// what it reads, and a deliverer goroutine hands the queue to reply. Screen
// writes therefore never wait on reply, and reply is never called with the
// Screen's lock held.
type replies struct {
	reply func([]byte) // nil: answers are drained and dropped

	mu     sync.Mutex
	queue  []byte
	busy   bool // the deliverer is in reply
	closed bool

	wake chan struct{} // a queue to deliver, capacity 1
	stop chan struct{} // closed by close
	done chan struct{} // closed when the deliverer returns
}

func newReplies(reply func([]byte)) *replies {
	r := &replies{reply: reply, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if reply != nil {
		go r.deliver()
	} else {
		close(r.done)
	}
	return r
}

// drain reads e's answers until its pipe is closed, then closes done. It
// blocks on nothing but the pipe and r.mu, so waiting for done is safe with
// the Screen's lock held.
func (r *replies) drain(e *vt.Emulator, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 1024)
	for {
		n, err := e.Read(buf)
		if n > 0 {
			r.push(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (r *replies) push(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reply == nil || r.closed || len(r.queue)+len(p) > maxQueuedReplies {
		return
	}
	r.queue = append(r.queue, p...)
	select {
	case r.wake <- struct{}{}:
	default: // already woken
	}
}

func (r *replies) deliver() {
	defer close(r.done)
	for {
		select {
		case <-r.stop:
			return
		case <-r.wake:
		}
		for {
			r.mu.Lock()
			if r.closed || len(r.queue) == 0 {
				r.busy = false
				r.mu.Unlock()
				break
			}
			p := r.queue
			r.queue, r.busy = nil, true
			r.mu.Unlock()
			r.reply(p)
		}
	}
}

// close stops delivering: queued answers are dropped. It waits for the
// deliverer to return, unless it is inside reply: then it returns at once,
// and the deliverer ends when reply does.
func (r *replies) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed, r.queue = true, nil
	busy := r.busy
	r.mu.Unlock()
	close(r.stop)
	if !busy {
		<-r.done
	}
}

// closePipe ends e's answers, and so its drain goroutine, without
// Emulator.Close: that sets a field Emulator.Read reads unlocked, a data race
// with the drain goroutine. Closing the pipe's writer is what it does
// besides.
func closePipe(e *vt.Emulator) {
	switch pw, ok := e.InputPipe().(*io.PipeWriter); {
	case !ok:
		_ = e.Close()
	case pw != nil:
		_ = pw.CloseWithError(io.EOF)
	}
}
