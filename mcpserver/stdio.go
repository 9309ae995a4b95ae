package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one stdio message, as the SDK's stdio transport does.
const maxLine = mcp.DefaultMaxLineLength

// lineTransport is newline-delimited JSON-RPC over a reader and a writer
// that survives bad input. The SDK's own stdio connection ends the session
// on the first line that is not JSON; here such a line (or one longer than
// maxLine) is answered with a JSON-RPC parse error (-32700, id null) and
// skipped, and the session goes on with the next line.
func lineTransport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	go filterLines(in, pw, w)
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

// filterLines copies the valid JSON lines of in to pw, answers the others
// on w, and closes pw at the end of in.
func filterLines(in io.Reader, pw *io.PipeWriter, w *lockedWriter) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			switch {
			case tooLong:
				w.parseError("message longer than 16 MiB")
			case !json.Valid(line):
				w.parseError("not valid JSON")
			default:
				if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return // the session is gone
				}
			}
		}
		if err != nil {
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
// message is never interleaved with another.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

func (l *lockedWriter) parseError(why string) {
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": -32700, "message": "Parse error: " + why},
	})
	_, _ = l.Write(append(msg, '\n'))
}
