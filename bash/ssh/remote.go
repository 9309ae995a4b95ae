package ssh

// Small remote commands of the executor's own: making the spill
// directory, writing a spill file, removing spill files, dsh doctor's
// probe. They run `exec /bin/sh -c SCRIPT dsh-ssh ARGS…` on a channel of
// the pool, without the wrapper: they are short, and the executor waits
// for them.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	gossh "golang.org/x/crypto/ssh"
)

// maxRemoteOutput bounds what is kept of a remote command's stdout and
// stderr.
const maxRemoteOutput = 64 << 10

// remoteCmd is a running remote command. Its goroutines, started by
// startRemote: one per output stream (channel → buffer, until EOF) and
// the requests reader (records the exit status, gives the channel's slot
// back once the channel is closed). All end when the channel closes, which
// wait does, or when the connection is lost.
type remoteCmd struct {
	s      *session
	out    limitedBuffer
	errOut limitedBuffer
	outWG  sync.WaitGroup
	ended  chan struct{} // the requests reader is done
	status exitStatus    // set before ended closes
}

// startRemote opens a channel (waiting for one when wait is set) and runs
// script with args. The executor's WaitGroup counts the command's
// goroutines until wait returns.
func (e *Executor) startRemote(ctx context.Context, wait bool, script string, args ...string) (*remoteCmd, error) {
	s, err := e.pool.acquire(ctx, wait)
	if err != nil {
		return nil, err
	}
	rc := &remoteCmd{s: s, ended: make(chan struct{})}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(rc.ended)
		rc.status = readRequests(s.reqs, nil)
		e.pool.release(s.c)
	}()
	line := "exec /bin/sh -c " + shellQuote(script) + " dsh-ssh"
	for _, a := range args {
		line += " " + shellQuote(a)
	}
	if err := execRequest(s.ch, line); err != nil {
		_ = s.ch.Close()
		<-rc.ended
		return nil, e.lostOr(s.c, err)
	}
	rc.outWG.Add(2)
	go func() { defer rc.outWG.Done(); rc.out.fill(s.ch) }()
	go func() { defer rc.outWG.Done(); rc.errOut.fill(s.ch.Stderr()) }()
	return rc, nil
}

// wait closes the command's stdin, waits for it to end and returns its
// stdout; an exit status other than 0 is an error with its stderr.
func (rc *remoteCmd) wait() (string, error) {
	_ = rc.s.ch.CloseWrite()
	rc.outWG.Wait()
	_ = rc.s.ch.Close()
	<-rc.ended
	st := rc.status
	switch {
	case !st.known && (rc.s.c.isLost() || !rc.s.c.alive()):
		return "", lostError(rc.s.c)
	case !st.known:
		return "", fmt.Errorf("ended without an exit status")
	case st.signal != "":
		return "", fmt.Errorf("killed by %s: %s", st.signal, rc.errOut.text())
	case st.code != 0:
		return "", fmt.Errorf("exit code %d: %s", st.code, rc.errOut.text())
	}
	return rc.out.String(), nil
}

// runRemote runs script with args and returns its stdout.
func (e *Executor) runRemote(ctx context.Context, script string, args ...string) (string, error) {
	rc, err := e.startRemote(ctx, true, script, args...)
	if err != nil {
		return "", err
	}
	return rc.wait()
}

// execRequest asks sshd to run line on ch.
func execRequest(ch gossh.Channel, line string) error {
	ok, err := ch.SendRequest("exec", true, gossh.Marshal(struct{ Command string }{line}))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the server refused to run a command")
	}
	return nil
}

// exitStatus is how a remote command ended, as sshd reported it.
type exitStatus struct {
	known  bool
	code   int
	signal string // "SIGTERM"
}

// readRequests reads a channel's requests until the channel closes,
// recording the exit status; got, when set, is called once with it as
// soon as it arrives (before the channel closes). Requests that want a
// reply get false: the executor asks for nothing else.
func readRequests(reqs <-chan *gossh.Request, got func(exitStatus)) exitStatus {
	var st exitStatus
	for req := range reqs {
		if parsed, ok := parseExit(req); ok && !st.known {
			st = parsed
			if got != nil {
				got(st)
			}
		}
		if req.WantReply {
			_ = req.Reply(false, nil)
		}
	}
	return st
}

// parseExit reads an exit-status or exit-signal request (RFC 4254 §6.10).
func parseExit(req *gossh.Request) (exitStatus, bool) {
	switch req.Type {
	case "exit-status":
		var m struct{ Status uint32 }
		if gossh.Unmarshal(req.Payload, &m) != nil {
			return exitStatus{}, false
		}
		return exitStatus{known: true, code: int(m.Status)}, true
	case "exit-signal":
		var m struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}
		if gossh.Unmarshal(req.Payload, &m) != nil {
			return exitStatus{}, false
		}
		return exitStatus{known: true, signal: "SIG" + m.Signal}, true
	}
	return exitStatus{}, false
}

// limitedBuffer keeps the first maxRemoteOutput bytes written to it and
// drops the rest.
type limitedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := maxRemoteOutput - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// fill copies r into the buffer until r ends.
func (l *limitedBuffer) fill(r io.Reader) {
	buf := make([]byte, 8<<10)
	for {
		k, err := r.Read(buf)
		if k > 0 {
			_, _ = l.Write(buf[:k])
		}
		if err != nil {
			return
		}
	}
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// text is the buffer's first line, for an error message.
func (l *limitedBuffer) text() string {
	first, _, _ := strings.Cut(strings.TrimSpace(l.String()), "\n")
	return first
}
