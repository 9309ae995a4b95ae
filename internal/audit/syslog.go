package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// syslogPri is the priority of every line: facility authpriv (10), which
// daemons keep readable to root only (a command line may hold a secret
// the redaction does not know), severity info (6).
const syslogPri = 10*8 + 6

// maxSyslogLine bounds a line sent to syslog: a datagram larger than the
// socket takes would be refused whole, so a command padded past it would
// leave no line. Longer lines are shortened (shorten).
const maxSyslogLine = 64 << 10

// syslogSockets are where syslog daemons listen (Linux, macOS, BSD).
var syslogSockets = []string{"/dev/log", "/var/run/syslog", "/var/run/log"}

// syslogWriter writes each line as one RFC 5424 message.
type syslogWriter struct {
	conn   net.Conn
	stream bool // a stream socket: messages end with a newline
	host   string
	pid    int
}

// dialSyslog connects to socket ("": the first of syslogSockets that
// answers), as a datagram socket, else a stream socket.
func dialSyslog(socket string) (*syslogWriter, error) {
	paths := syslogSockets
	if socket != "" {
		paths = []string{socket}
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "-"
	}
	var errs []error
	for _, p := range paths {
		for _, network := range []string{"unixgram", "unix"} {
			c, err := net.Dial(network, p)
			if err == nil {
				return &syslogWriter{conn: c, stream: network == "unix", host: host, pid: os.Getpid()}, nil
			}
			errs = append(errs, err)
		}
	}
	return nil, errors.Join(errs...)
}

// Write sends line (one JSON line and its newline) as one message:
// `<86>1 TIME HOST dsh PID audit - LINE`.
func (w *syslogWriter) Write(p []byte) (int, error) {
	line := shorten(bytes.TrimSuffix(p, []byte("\n")), maxSyslogLine)
	msg := fmt.Appendf(nil, "<%d>1 %s %s dsh %d audit - ", syslogPri, time.Now().UTC().Format(TimeFormat), w.host, w.pid)
	msg = append(msg, line...)
	if w.stream {
		msg = append(msg, '\n')
	}
	if _, err := w.conn.Write(msg); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *syslogWriter) Close() error { return w.conn.Close() }

// shorten returns line when it fits limit; else the line with each
// string longer than limit/8 cut to its first and last limit/16 bytes
// around "…" (a command padded past the limit keeps what ends it), and
// "truncated": true, still one JSON object; else its first limit bytes.
func shorten(line []byte, limit int) []byte {
	if len(line) <= limit {
		return line
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v map[string]any
	if d.Decode(&v) == nil {
		for k, x := range v {
			if s, ok := x.(string); ok && len(s) > limit/8 {
				v[k] = headAndTail(s, limit/16)
			}
		}
		v["truncated"] = true
		if out, err := json.Marshal(v); err == nil && len(out) <= limit {
			return out
		}
	}
	return line[:limit]
}

// headAndTail is the first and last n bytes of s around "…", cut on
// whole characters.
func headAndTail(s string, n int) string {
	head := bytes.ToValidUTF8([]byte(s[:n]), nil)
	tail := bytes.ToValidUTF8([]byte(s[len(s)-n:]), nil)
	return string(head) + "…" + string(tail)
}
