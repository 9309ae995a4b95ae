package local

// Terminals (docs/spec.md §2.7): a background command may run under a
// pseudo-terminal, so that the model can type into it. The child gets the
// pty's slave as stdin, stdout and stderr, and as its controlling terminal
// (a session of its own: a typed C-c is SIGINT to its foreground process
// group). The run reads the master into the stdout collector, so bounds,
// spill files, redaction and Observe are those of any output; the stderr
// collector gets an empty pipe. The line discipline's ONLCR stays on: the
// output has "\r\n" line ends, which the terminal emulator downstream
// expects.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/procfs"
)

// TerminalType is TERM for a command under a terminal: what the emulator
// that renders its output understands.
const TerminalType = "xterm-256color"

var (
	errTerminalForeground = errors.New(Name + ": a terminal needs a background start (Start), not a foreground run")
	errTerminalStdin      = errors.New(Name + ": a terminal command takes no stdin bytes: type them with WriteInput")
	errNoDeadline         = errors.New(Name + ": terminal input needs a deadline")
	// errTerminalEnded wraps os.ErrClosed, for callers that tell it apart.
	errTerminalEnded = fmt.Errorf("%s: the terminal's command has ended: %w", Name, os.ErrClosed)
)

// checkTerminal refuses a terminal spec that cannot run: a size out of
// bounds, or stdin bytes, which a terminal has no place for.
func checkTerminal(t *bash.Terminal, stdin []byte) error {
	if err := checkSize(*t); err != nil {
		return err
	}
	if stdin != nil {
		return errTerminalStdin
	}
	return nil
}

// checkSize refuses a size out of bash's bounds, naming them.
func checkSize(t bash.Terminal) error {
	if t.Valid() {
		return nil
	}
	return fmt.Errorf("%s: terminal size %dx%d is out of bounds: columns %d–%d, rows %d–%d",
		Name, t.Cols, t.Rows, bash.MinCols, bash.MaxCols, bash.MinRows, bash.MaxRows)
}

// openTerminal makes the pipes of spec, a command under a terminal: the
// master is ours (outR, read into stdout, and the input side), the slave
// the child's stdin, stdout and stderr; errR is a pipe whose write end is
// closed at once, so the stderr collector sees EOF. A command too long
// for an argument comes on fd 3, as without a terminal.
func openTerminal(spec bash.Spec) (*pipes, error) {
	p, err := openPty(*spec.TTY)
	if err != nil {
		return nil, err
	}
	errR, errW, err := p.pipe()
	if err != nil {
		return nil, err
	}
	errW.Close()
	p.errR, p.parent = errR, append(p.parent, errR)
	if len(spec.Command) > maxArgCommand {
		if p.script, err = p.input([]byte(spec.Command)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// openPty opens a pty pair of size t: the master pollable, the slave the
// child's stdio.
func openPty(t bash.Terminal) (*pipes, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: terminal: %w", Name, err)
	}
	ws := &pty.Winsize{Cols: uint16(t.Cols), Rows: uint16(t.Rows)}
	if err := pty.Setsize(master, ws); err != nil {
		master.Close()
		slave.Close()
		return nil, fmt.Errorf("%s: terminal size: %w", Name, err)
	}
	m, err := pollable(master)
	if err != nil {
		slave.Close()
		return nil, err
	}
	p := &pipes{outR: m, tty: m, stdin: slave, stdout: slave, stderr: slave}
	p.parent, p.child = []*os.File{m}, []*os.File{slave}
	return p, nil
}

// pollable makes the master a file the runtime's poller serves, so that
// read and write deadlines hold (the drain's, WriteInput's): pty.Open
// leaves it blocking, its ioctls going through Fd. A non-blocking
// duplicate goes to NewFile, and master is closed. One that still cannot
// be polled is refused: its input could not be bounded by a deadline.
func pollable(master *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(master.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	name := master.Name()
	master.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: terminal: %w", Name, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: terminal: %w", Name, err)
	}
	m := os.NewFile(uintptr(fd), name)
	if err := m.SetWriteDeadline(time.Time{}); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: terminal: this system's pty cannot be polled, so its input could not be bounded by a deadline: %w", Name, err)
	}
	return m, nil
}

// terminal is the input side of a run's terminal: its master, which the
// run closes once it is done.
type terminal struct {
	m    *os.File
	done <-chan struct{} // the run's Done
	// wmu makes each WriteInput's deadline and write one step: a
	// deadline is the file's, not the call's.
	wmu sync.Mutex
}

// writeInput writes p to the master by deadline, as typed. A program that
// reads nothing fills the line discipline's buffer, and the write then
// waits; the deadline cuts it short with what was written.
func (t *terminal) writeInput(p []byte, deadline time.Time) (int, error) {
	if deadline.IsZero() {
		return 0, errNoDeadline
	}
	if t.ended() {
		return 0, errTerminalEnded
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if err := t.m.SetWriteDeadline(deadline); err != nil {
		return 0, t.inputError(0, len(p), err)
	}
	n, err := t.m.Write(p)
	if err != nil {
		return n, t.inputError(n, len(p), err)
	}
	return n, nil
}

// inputError says why a write of want bytes stopped after n.
func (t *terminal) inputError(n, want int, err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%s: terminal input: %d of %d bytes written by the deadline, the program is not reading: %w", Name, n, want, os.ErrDeadlineExceeded)
	case errors.Is(err, os.ErrClosed) || t.ended():
		return errTerminalEnded
	case errors.Is(err, syscall.EIO): // the program closed the slave, or is gone
		return fmt.Errorf("%s: terminal input: no process has the terminal open any more: %w", Name, os.ErrClosed)
	}
	return fmt.Errorf("%s: terminal input: %w", Name, err)
}

// resize sets the terminal's size; the kernel sends SIGWINCH to its
// foreground process group. The ioctl goes through SyscallConn, which
// holds the master open meanwhile: the run may close it at any time.
func (t *terminal) resize(size bash.Terminal) error {
	if err := checkSize(size); err != nil {
		return err
	}
	if t.ended() {
		return errTerminalEnded
	}
	raw, err := t.m.SyscallConn()
	if err != nil {
		return errTerminalEnded
	}
	ws := &unix.Winsize{Col: uint16(size.Cols), Row: uint16(size.Rows)}
	var ioErr error
	if err := raw.Control(func(fd uintptr) { ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) }); err != nil {
		return errTerminalEnded
	}
	if ioErr != nil {
		return fmt.Errorf("%s: terminal size: %w", Name, ioErr)
	}
	return nil
}

func (t *terminal) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// terminalProcess is the Process of a command under a terminal.
type terminalProcess struct {
	bash.Process
	t *terminal
}

var _ bash.TerminalProcess = terminalProcess{}

func (p terminalProcess) WriteInput(b []byte, deadline time.Time) (int, error) {
	return p.t.writeInput(b, deadline)
}

func (p terminalProcess) Resize(size bash.Terminal) error { return p.t.resize(size) }

func (p terminalProcess) Foreground() []bash.Program { return p.t.foreground() }

// maxForeground bounds the processes Foreground lists.
const maxForeground = 64

// foreground lists the terminal's foreground process group (TIOCGPGRP on
// the master, then the processes of that group in /proc), with their
// executables and arguments: the programs typed input goes to. nil when
// it cannot be told, or when the group has more than maxForeground.
func (t *terminal) foreground() []bash.Program {
	raw, err := t.m.SyscallConn()
	if err != nil {
		return nil
	}
	pgrp := 0
	if raw.Control(func(fd uintptr) { pgrp, err = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }) != nil || err != nil || pgrp <= 0 {
		return nil
	}
	procs, err := procfs.Table()
	if err != nil {
		return nil
	}
	var out []bash.Program
	for _, p := range procs {
		if p.Pgrp != pgrp || p.Dead() {
			continue
		}
		if len(out) == maxForeground {
			return nil // more than are read: unknown, not "these"
		}
		pid := "/proc/" + strconv.Itoa(p.Pid)
		exe, _ := os.Readlink(pid + "/exe")
		cmdline, _ := os.ReadFile(pid + "/cmdline")
		var args []string
		if len(cmdline) > 0 {
			args = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		}
		out = append(out, bash.Program{Exe: exe, Args: args})
	}
	return out
}

// endOfTerminal reports whether a read error of the master is its end:
// EIO once no process holds the slave open any more.
func endOfTerminal(err error) bool { return errors.Is(err, syscall.EIO) }
