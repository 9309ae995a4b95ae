package bashtool

// Terminals (docs/spec.md §4.2a): a background call with tty: true runs
// its command under a pseudo-terminal. Its output feeds a terminal
// emulator (bash/term) as it arrives, so task_output can show the screen,
// and the emulator's answers to the program's queries (a cursor position
// report) go back to the program as input, as a terminal's would.

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/term"
	"github.com/dsh-go/dsh/tasks"
)

// errTTYForeground and errSizeWithoutTTY are exact (docs/spec.md §3.2).
const (
	errTTYForeground  = "tty needs run_in_background: true (a foreground call cannot be typed into)"
	errSizeWithoutTTY = "cols and rows need tty: true"
)

// invalidSize is the exact error for a cols or rows out of its bounds.
func invalidSize(name, raw string, lo, hi int) string {
	return "invalid " + name + ": expected a whole number from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi) + ", got " + raw
}

// WantsTTY reports whether the call asks for a terminal.
func (a Args) WantsTTY() bool { return string(a.TTY) == "true" }

// terminal is the size the call asks for, checked; nil without tty.
func (a Args) terminal() (*bash.Terminal, error) {
	if !a.WantsTTY() {
		if a.Cols != nil || a.Rows != nil {
			return nil, invalid(errSizeWithoutTTY)
		}
		return nil, nil
	}
	if !a.Background() {
		return nil, invalid(errTTYForeground)
	}
	t := &bash.Terminal{Cols: bash.DefaultCols, Rows: bash.DefaultRows}
	var err error
	if t.Cols, err = size("cols", a.Cols, bash.DefaultCols, bash.MinCols, bash.MaxCols); err != nil {
		return nil, err
	}
	if t.Rows, err = size("rows", a.Rows, bash.DefaultRows, bash.MinRows, bash.MaxRows); err != nil {
		return nil, err
	}
	return t, nil
}

// size is one dimension as sent (def when not sent), a whole number within
// [lo, hi].
func size(name string, raw *json.Number, def, lo, hi int) (int, error) {
	if raw == nil {
		return def, nil
	}
	f, err := raw.Float64()
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, invalid(invalidSize(name, raw.String(), lo, hi))
	}
	return int(f), nil
}

// screenTask is the terminal side of a tty task: the emulator fed with its
// output, the process it types into, and the signal of new output.
type screenTask struct {
	scr  *term.Screen
	proc bash.TerminalProcess
	size bash.Terminal
	news *signal
	// redact is the tool's redaction of screen text.
	redact func(string) string

	mu    sync.Mutex
	final string // the last screen, kept once the emulator is released
	// typed is what was written into the terminal, its last
	// tasks.MaxTyped bytes; truncated when more came before.
	typed     []byte
	truncated bool
}

// newScreenTask makes the emulator for a command of size sz; observe feeds
// it. The process comes once started (attach).
func newScreenTask(sz bash.Terminal, news *signal, redact func(string) string) *screenTask {
	st := &screenTask{size: sz, news: news, redact: redact}
	st.scr = term.New(sz.Cols, sz.Rows, st.reply)
	return st
}

// replyWait bounds the write of the emulator's answer to a program that
// does not read its input.
const replyWait = time.Second

func (st *screenTask) reply(p []byte) {
	st.mu.Lock()
	proc := st.proc
	st.mu.Unlock()
	if proc != nil {
		n, _ := proc.WriteInput(p, time.Now().Add(replyWait))
		st.record(p[:n]) // the program reads it as typed (the policy on input)
	}
}

// observe is the command's Observe: the output feeds the screen, and
// whoever waits for output is woken. (The collector's goroutine calls it
// until the run is done, before end.)
func (st *screenTask) observe(_ string, p []byte) {
	if scr := st.screen(); scr != nil {
		_, _ = scr.Write(p)
	}
	st.news.fire()
}

// screen is the emulator; nil once the task ended.
func (st *screenTask) screen() *term.Screen {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.scr
}

func (st *screenTask) attach(p bash.TerminalProcess) {
	st.mu.Lock()
	st.proc = p
	st.mu.Unlock()
}

// end keeps the last screen and releases the emulator: a finished task's
// record may be kept long, its screen need not be.
func (st *screenTask) end() {
	scr := st.screen()
	if scr == nil {
		return
	}
	text := scr.Text() // the run is done: no more output comes
	st.mu.Lock()
	st.final, st.scr = text, nil
	st.mu.Unlock()
	_ = scr.Close()
	st.news.fire()
}

// Input implements tasks.Terminal; what was written is recorded (Typed).
func (st *screenTask) Input(p []byte, deadline time.Time) error {
	n, err := st.proc.WriteInput(p, deadline)
	st.record(p[:n])
	return err
}

// record keeps what the terminal took as input, its last tasks.MaxTyped
// bytes.
func (st *screenTask) record(p []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.typed = append(st.typed, p...)
	if over := len(st.typed) - tasks.MaxTyped; over > 0 {
		st.typed, st.truncated = append(st.typed[:0], st.typed[over:]...), true
	}
}

// Typed implements tasks.Terminal.
func (st *screenTask) Typed() ([]byte, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return bytes.Clone(st.typed), st.truncated
}

// Screen implements tasks.Terminal: the screen as the model may read it,
// redacted, its rows guarded as output lines are, the cursor line last.
func (st *screenTask) Screen() string {
	text := ""
	if scr := st.screen(); scr != nil {
		text = scr.Text()
	} else {
		st.mu.Lock()
		text = st.final
		st.mu.Unlock()
	}
	rows, cursor := "", text
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		rows, cursor = text[:i], text[i+1:]
	}
	if rows == "" {
		return cursor
	}
	return shown(strings.Join(redactRows(strings.Split(rows, "\n"), st.size.Cols, st.redact), "\n")) + "\n" + cursor
}

// redactRows redacts a screen's rows line by line, a row that fills the
// width joined to the next (the program's line went on there), so a
// secret the terminal wrapped is found. A line with a secret is shown
// redacted on one row, longer than the screen is wide (cutting it again
// could cut the placeholder); the others are as they were.
func redactRows(rows []string, cols int, redact func(string) string) []string {
	out := make([]string, 0, len(rows))
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows)-1 && utf8.RuneCountInString(rows[j]) >= cols {
			j++
		}
		line := strings.Join(rows[i:j+1], "")
		if red := redact(line); red != line {
			out = append(out, red)
		} else {
			out = append(out, rows[i:j+1]...)
		}
		i = j + 1
	}
	return out
}

// Keys implements tasks.Terminal: encoded for the screen's modes while it
// runs.
func (st *screenTask) Keys(names []string) ([]byte, error) {
	if scr := st.screen(); scr != nil {
		return scr.Keys(names)
	}
	return term.Keys(names)
}

// Foreground implements tasks.Terminal.
func (st *screenTask) Foreground() []tasks.Program {
	var out []tasks.Program
	for _, p := range st.proc.Foreground() {
		out = append(out, tasks.Program{Exe: p.Exe, Args: p.Args})
	}
	return out
}

// Size implements tasks.Terminal.
func (st *screenTask) Size() (cols, rows int) { return st.size.Cols, st.size.Rows }

var _ tasks.Terminal = (*screenTask)(nil)

// signal wakes those waiting for a task's next output: each wait takes
// the current channel, and the next output closes it and makes another.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

func (s *signal) fire() {
	s.mu.Lock()
	close(s.ch)
	s.ch = make(chan struct{})
	s.mu.Unlock()
}

// next is tasks.Hooks.Changed: the channel the next output closes.
func (s *signal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}
