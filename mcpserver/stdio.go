package mcpserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one stdio message, as the SDK's stdio transport does.
const maxLine = mcp.DefaultMaxLineLength

// lineTransport is newline-delimited JSON-RPC over a reader and a writer
// that survives bad input. The SDK's own stdio connection ends the session
// on the first line it cannot decode; here such a line is answered and
// skipped, and the session goes on with the next line: one that is not
// JSON, or is longer than maxLine, gets a parse error (-32700, id null),
// and one that is JSON but not a single JSON-RPC 2.0 message the SDK
// takes gets an invalid request error (-32600) echoing its id as written,
// or null ([checkMessage]). A call the client cancelled gets no response
// (cancel.go). dsh's own requests go out with ids of their own, and an
// answer to none of them is dropped (ids.go).
//
// stop ends the copying once the session is over. filterLines may be
// blocked reading in, which only in can end: a reader with read deadlines
// (an *os.File pipe, a net.Conn) gets one in the past, stop waits (up to
// a second) for the copy to end and clears the deadline; any other reader
// ends the copy at its next return (for os.Stdin that is the process's
// exit).
func lineTransport(in io.Reader, out io.Writer) (t mcp.Transport, stop func()) {
	w := &lockedWriter{w: out, watch: newStdioWatch(), ids: newRequestIDs()}
	pr, pw := io.Pipe()
	copied, quit := make(chan struct{}), make(chan struct{})
	go func() { defer close(copied); filterLines(in, pw, w, quit) }()
	var once sync.Once
	stop = func() {
		once.Do(func() { close(quit) })         // a drain ends
		_ = pr.CloseWithError(io.ErrClosedPipe) // a pending write fails
		d, ok := in.(interface{ SetReadDeadline(time.Time) error })
		if !ok || d.SetReadDeadline(time.Now()) != nil {
			return
		}
		select {
		case <-copied:
			_ = d.SetReadDeadline(time.Time{})
		case <-time.After(time.Second):
			// Stuck writing a parse error to an output nobody reads.
		}
	}
	return &mcp.IOTransport{Reader: pr, Writer: w}, stop
}

// filterLines copies the valid JSON lines of in to pw, answers the others
// on w, and closes pw at the end of in, once every call it passed on has
// been answered (drain.go) unless quit closes first.
func filterLines(in io.Reader, pw *io.PipeWriter, w *lockedWriter, quit <-chan struct{}) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			bad := &badMessage{code: codeParseError, why: "message longer than 16 MiB"}
			if !tooLong {
				bad = checkMessage(line)
			}
			if bad != nil {
				_, _ = w.Write(bad.reply())
			} else if line, err := w.ids.incoming(line); err == nil {
				w.watch.incoming(line)
				w.watch.clientAnswer(line)
				if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return // the session is gone
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				w.watch.drain(pw, quit)
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line without its newline; a line over maxLine is
// consumed and reported as too long. At the end of input err is io.EOF
// (with the last unterminated line, if any).
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// lockedWriter serializes the SDK's writes and the parse errors, so a
// message is never interleaved with another. It sends nothing of a call
// the client cancelled (cancel.go), and dsh's requests with their own ids
// (ids.go); the SDK writes one message a Write.
type lockedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	watch *watch
	ids   *requestIDs
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.watch != nil && !l.watch.outgoing(p) {
		return len(p), nil
	}
	msg := p
	if l.ids != nil {
		msg = l.ids.outgoing(p)
	}
	l.mu.Lock()
	_, err := l.w.Write(msg)
	l.mu.Unlock()
	if l.watch != nil {
		l.watch.changed()
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (l *lockedWriter) Close() error { return nil }
