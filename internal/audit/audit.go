// Package audit writes dsh's audit log (docs/spec.md §15): one JSON line
// for every tool call that ends, and one for every background or yielded
// task that ends, so that whoever runs dsh for many users can say what
// each agent ran, how it was decided and how it ended.
//
// It is an observer: [Log.Call] is a [tool.Observer] on the registry and
// [Log.TaskEnd] a settled listener on the task runtime ([tasks.Service.OnSettled]);
// it changes nothing about a call. The file is opened with O_APPEND (every
// line is one write, so lines of concurrent calls never tear, and nothing
// is ever truncated) and created with mode 0600 (the commands may hold
// secrets the redaction does not know). It is opened once, before any
// command runs, and never again by its path: a command that replaced the
// file, or made its missing directory, gets no line. A write that fails,
// or a file that cannot be opened, never fails a call: the error is
// logged (the first at once, then at most one a minute with the count of
// lines lost); a later line tries the same descriptor again.
//
// [Syslog] sends each line to the local syslog daemon instead, as an RFC
// 5424 message over its socket: a command of dsh's user can edit a file
// dsh's user owns, but not what the daemon has received. A daemon that
// restarts is connected to again, at most once a second (its socket is
// root's: no command can put another in its place).
//
// Decisions where docs/spec.md is silent:
//   - A field that does not apply is left out, not null: a false
//     `background` or `timedOut`, the exit facts of a call that ran no
//     command, `command` of a task tool. `exitCode` 0 is written.
//   - `durationMs` of a call line is the call's own time, from its arrival
//     to its result (asking the user and hooks included); a task-end
//     line's is the task's, from its start to its end.
//   - `workdir` is where the command ran: the call's workdir resolved
//     against the session's cwd.
//   - `stdoutBytes` and `stderrBytes` of a call line count what the
//     foreground command wrote (for a yielded call, up to the yield); a
//     background start writes none, its task-end line has them.
//   - A task-end line also has `time` (when the task ended), `session` (its
//     owner) and `status` (completed, killed or failed), so that a line
//     read alone says whose task it was and whether it was killed.
//   - `error` is the error result's text without its `Error: ` prefix,
//     redacted like `command`; so is `decidedBy`, which names a hook by
//     its command line (a token in it would otherwise reach the log).
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/redact"
)

// Stderr is the path that sends the lines to dsh's standard error.
const Stderr = "-"

// Syslog is the path that sends the lines to the local syslog daemon.
const Syslog = "syslog"

// TimeFormat is the format of `time` (RFC 3339 with milliseconds, UTC).
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Intervals of the failure handling.
const (
	retryEvery  = time.Second // connecting again to a syslog daemon
	reportEvery = time.Minute // logging failures after the first
)

// Log appends audit lines to a file. It is safe for concurrent use.
type Log struct {
	path   string
	socket string // Options.SyslogSocket
	red    *redact.Redactor
	log    *slog.Logger
	stderr io.Writer

	mu       sync.Mutex
	w        io.Writer // the open file, stderr or syslog; nil while it fails
	c        io.Closer // the open file or syslog connection, to close
	closed   bool
	lastOpen time.Time // the last attempt to open
	failing  bool
	lost     int // lines lost since the last report
	reported time.Time
}

// Options configures a Log.
type Options struct {
	// Redactor redacts `command`, `originalCommand` and `error`; nil
	// redacts nothing.
	Redactor *redact.Redactor
	// Logger receives the write failures; nil is slog.Default().
	Logger *slog.Logger
	// Stderr is where the path "-" writes; nil is os.Stderr.
	Stderr io.Writer
	// SyslogSocket is the syslog daemon's socket; "" tries /dev/log,
	// /var/run/syslog and /var/run/log.
	SyslogSocket string
}

// Open returns the log appending to path ("-": standard error). A file
// that cannot be opened is not an error: it is logged, and tried again
// with the lines to come.
func Open(path string, opts Options) *Log {
	l := &Log{path: path, red: opts.Redactor, log: opts.Logger, stderr: opts.Stderr, socket: opts.SyslogSocket}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.stderr == nil {
		l.stderr = os.Stderr
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.openLocked(time.Now())
	return l
}

// Close closes the file; lines written after it are dropped silently.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.w = nil
	if l.c == nil {
		return nil
	}
	err := l.c.Close()
	l.c = nil
	return err
}

// openLocked opens the file (or takes stderr, or connects to syslog),
// logging a failure.
func (l *Log) openLocked(now time.Time) {
	l.lastOpen = now
	switch l.path {
	case Stderr:
		l.w = l.stderr
		return
	case Syslog:
		w, err := dialSyslog(l.socket)
		if err != nil {
			l.failedLocked(now, fmt.Errorf("connecting to syslog: %w", err))
			return
		}
		l.c, l.w = w, w
		return
	}
	// O_NONBLOCK: a FIFO no one reads (a log shipper that is down) fails
	// at once (ENXIO) instead of holding every call's line until a reader
	// comes; on a regular file it changes nothing, and a FIFO opened is
	// written through the runtime's poller, each line whole.
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		l.failedLocked(now, fmt.Errorf("opening the audit log: %w", pathErr(err)))
		return
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		// The user's file: left as it is, but they should know.
		l.log.Warn("audit: the audit log is open to group or others", "path", l.path, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()))
	}
	l.c, l.w = f, f
}

// write appends one line (v as JSON and a newline) in one write.
func (l *Log) write(v any) {
	line, err := json.Marshal(v)
	if err != nil {
		l.log.Error("audit: encoding a line", "err", err) // never: plain fields
		return
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	now := time.Now()
	if l.w == nil && l.path == Syslog && now.Sub(l.lastOpen) >= retryEvery {
		l.openLocked(now)
	}
	if l.w == nil {
		l.failedLocked(now, nil)
		return
	}
	if _, err := l.w.Write(line); err != nil {
		l.failedLocked(now, fmt.Errorf("writing the audit log: %w", pathErr(err)))
		if l.path == Syslog {
			// Connected again at a later line: the daemon may have restarted.
			_ = l.c.Close()
			l.c, l.w = nil, nil
		}
		return
	}
	if l.failing {
		l.log.Info("audit: writing the audit log again", "path", l.path, "lost", l.lost)
		l.failing, l.lost = false, 0
	}
}

// failedLocked counts a lost line and logs the failure err (nil: the one
// already logged goes on): the first at once, then at most one a minute.
func (l *Log) failedLocked(now time.Time, err error) {
	l.lost++
	if l.failing && now.Sub(l.reported) < reportEvery {
		return
	}
	if err == nil {
		err = errors.New("the audit log is not open")
	}
	l.log.Error("audit: "+err.Error()+"; tool calls go on without it", "path", l.path, "lost", l.lost)
	l.failing, l.reported, l.lost = true, now, 0
}

// pathErr is err without the path an *os.PathError repeats.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
