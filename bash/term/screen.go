package term

import (
	"strconv"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// maxSize bounds either dimension of a screen: a guard against a size
// nobody meant (the executor's own bounds, 500×200, are well inside), as
// x/vt keeps 112 bytes for every cell of both screens.
const maxSize = 1000

// Screen is a terminal emulator fed with a program's output: what a person
// would see. It is safe for concurrent use.
type Screen struct {
	mu         sync.Mutex
	emu        *vt.Emulator
	in         internals
	cols, rows int
	closed     bool
	appCursor  bool // DECCKM, as the program last set it
	panics     int  // how many times emu panicked

	// Output held back (see fastpath.go), and the parser state of the
	// emulator once it has it all.
	pending []byte
	track   *ansi.Parser
	noSkip  bool // for tests: draw every line
	cuts    int  // for tests: how many times lines were skipped

	replies   *replies
	drainDone chan struct{} // closed when the current emulator's drain goroutine returns
}

// New returns a screen of cols×rows cells (each clamped to 1…1000). reply receives
// what the terminal answers to the program's queries (a cursor position
// report for ESC[6n, device attributes for ESC[c, …), to be written to the
// program's input; nil drops them. reply is called from a goroutine of the
// screen's, one answer at a time, never with the screen locked; it may
// block (a program that does not read) without blocking Write.
func New(cols, rows int, reply func([]byte)) *Screen {
	s := &Screen{cols: clampSize(cols), rows: clampSize(rows), replies: newReplies(reply), track: ansi.NewParser()}
	s.track.SetDataSize(1) // the state is all it is for
	s.start()
	return s
}

func clampSize(n int) int { return min(max(n, 1), maxSize) }

// start makes a fresh emulator of the screen's size and its drain goroutine.
func (s *Screen) start() {
	s.emu, s.in = newEmulator(s.cols, s.rows)
	s.appCursor, s.panics = false, 0
	s.track.Reset()
	s.emu.SetCallbacks(vt.Callbacks{
		EnableMode:  func(m ansi.Mode) { s.modeChanged(m, true) },
		DisableMode: func(m ansi.Mode) { s.modeChanged(m, false) },
	})
	s.drainDone = make(chan struct{})
	go s.replies.drain(s.emu, s.drainDone)
}

// stop ends the current emulator's drain goroutine and waits for it.
func (s *Screen) stop() {
	closePipe(s.emu)
	<-s.drainDone
}

// modeChanged is called by the emulator, inside Write, with s.mu held.
func (s *Screen) modeChanged(m ansi.Mode, on bool) {
	if m == ansi.ModeCursorKeys {
		s.appCursor = on
	}
}

// Write feeds the program's output p to the screen. It never fails and never
// waits on reply; after Close it does nothing.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.write(p)
	}
	return len(p), nil
}

// feed writes p to the emulator. x/vt parses whatever a program prints and
// can panic on it (it did on margins past the screen's edge; see guard): the
// rest of p is then lost, and the emulator is kept unless it panics again
// and again, or a CAN (which ends any sequence) and drawing the screen make
// it panic too. Then a blank one of the same size takes its place: the
// program's modes and screen are lost, it goes on with a terminal that
// works.
func (s *Screen) feed(p []byte) {
	if s.try(func() { _, _ = s.emu.Write(p) }) {
		return
	}
	s.track.Reset() // in step with the CAN below
	s.panics++
	if s.panics < maxPanics && s.try(func() {
		_, _ = s.emu.Write([]byte{ansi.CAN})
		_ = screenText(s.emu)
	}) {
		return
	}
	s.stop()
	s.start()
}

// maxPanics is how many times an emulator may panic before it is replaced.
const maxPanics = 3

// try runs f and reports whether it returned without a panic.
func (s *Screen) try(f func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// Resize changes the screen's size, each dimension clamped as by New; after Close it
// does nothing. The content is kept where it fits, as x/vt does: lines are
// cut, not rewrapped.
func (s *Screen) Resize(cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cols, rows = clampSize(cols), clampSize(rows)
	if s.closed || cols == s.cols && rows == s.rows {
		return
	}
	s.flush(true)
	s.cols, s.rows = cols, rows
	if !s.try(func() { s.emu.Resize(cols, rows) }) {
		s.stop()
		s.start()
	}
}

// Size returns the screen's size in cells.
func (s *Screen) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cols, s.rows
}

// AltScreen reports whether the program has switched to the alternate screen
// (full-screen programs: less, vim, top) and not back.
func (s *Screen) AltScreen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.IsAltScreen()
}

// Text returns the visible screen, the alternate one when the program is in
// it, as plain text: one line a row, trailing spaces trimmed, trailing empty
// rows dropped, then a CursorLine. No colours, no escape sequences; a wide
// character appears once.
func (s *Screen) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flush(true)
	return screenText(s.emu)
}

// CursorLine is the last line of Text: the cursor's row and column, from 1.
func CursorLine(row, col int) string {
	return "[cursor: row " + strconv.Itoa(row) + ", col " + strconv.Itoa(col) + "]"
}

func screenText(e *vt.Emulator) string {
	w, h := e.Width(), e.Height()
	b := make([]byte, 0, w*h/2)
	keep := 0 // b up to the end of the last row with something on it
	for y := range h {
		if y > 0 {
			b = append(b, '\n')
		}
		start := len(b)
		for x := range w {
			// A wide character's second cell is a zero cell, with no content.
			if c := e.CellAt(x, y); c != nil && c.Content != "" {
				b = append(b, c.Content...)
			}
		}
		for len(b) > start && b[len(b)-1] == ' ' {
			b = b[:len(b)-1]
		}
		if len(b) > start {
			keep = len(b)
		}
	}
	b = b[:keep]
	if keep > 0 {
		b = append(b, '\n')
	}
	pos := e.CursorPosition()
	return string(append(b, CursorLine(pos.Y+1, pos.X+1)...))
}

// Close stops the screen: later writes do nothing, answers not yet delivered
// are dropped. It waits for the screen's goroutines, except for one inside a
// reply that has not returned: that one ends when reply returns. It always
// returns nil; a second Close does nothing.
func (s *Screen) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.flush(true)
	s.closed = true
	s.pending = nil
	s.stop()
	s.mu.Unlock()
	s.replies.close()
	return nil
}
