package term

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// newScreen is New, closed when the test ends.
func newScreen(t testing.TB, cols, rows int, reply func([]byte)) *Screen {
	t.Helper()
	s := New(cols, rows, reply)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func write(t testing.TB, s *Screen, out string) {
	t.Helper()
	if n, err := s.Write([]byte(out)); n != len(out) || err != nil {
		t.Fatalf("Write(%q) = %d, %v", out, n, err)
	}
}

func TestText(t *testing.T) {
	for _, c := range []struct{ name, out, want string }{
		{"empty", "", "[cursor: row 1, col 1]"},
		{"lines", "hello  \r\nworld", "hello\nworld\n[cursor: row 2, col 6]"},
		{"inner spaces kept", "a   b", "a   b\n[cursor: row 1, col 6]"},
		{"empty row inside kept", "a\r\n\r\nb", "a\n\nb\n[cursor: row 3, col 2]"},
		{"trailing empty rows dropped", "a\r\n\r\n\r\n", "a\n[cursor: row 4, col 1]"},
		{"cursor moved", "x\x1b[4;7H", "x\n[cursor: row 4, col 7]"},
		{"only spaces", "   ", "[cursor: row 1, col 4]"},
		{"colours dropped", "\x1b[1;31mred\x1b[0m \x1b[38;5;82mgreen\x1b[m", "red green\n[cursor: row 1, col 10]"},
		{"wide characters once", "日本x", "日本x\n[cursor: row 1, col 6]"},
		{"combining mark with its letter", "e\u0301!", "e\u0301!\n[cursor: row 1, col 3]"},
		{"wrapped", strings.Repeat("ab", 15), strings.Repeat("ab", 10) + "\n" + strings.Repeat("ab", 5) + "\n[cursor: row 2, col 11]"},
		{"overwritten", "hello\rJ", "Jello\n[cursor: row 1, col 2]"},
		{"erased", "hello\x1b[2J", "[cursor: row 1, col 6]"},
		{"tab", "a\tb", "a       b\n[cursor: row 1, col 10]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScreen(t, 20, 5, nil)
			write(t, s, c.out)
			if got := s.Text(); got != c.want {
				t.Errorf("Text() =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func TestCursorLine(t *testing.T) {
	if got, want := CursorLine(3, 5), "[cursor: row 3, col 5]"; got != want {
		t.Errorf("CursorLine(3, 5) = %q, want %q", got, want)
	}
}

func TestSize(t *testing.T) {
	s := newScreen(t, 80, 24, nil)
	if c, r := s.Size(); c != 80 || r != 24 {
		t.Errorf("Size() = %d, %d; want 80, 24", c, r)
	}
	s.Resize(100, 30)
	if c, r := s.Size(); c != 100 || r != 30 {
		t.Errorf("after Resize(100, 30): Size() = %d, %d", c, r)
	}
	s.Resize(0, -3)
	if c, r := s.Size(); c != 1 || r != 1 {
		t.Errorf("after Resize(0, -3): Size() = %d, %d; want 1, 1", c, r)
	}
}

func TestScrolling(t *testing.T) {
	s := newScreen(t, 80, 24, nil)
	var out, want strings.Builder
	for i := 1; i <= 100000; i++ {
		out.WriteString(strconv.Itoa(i) + "\r\n")
	}
	for i := 100000 - 22; i <= 100000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	want.WriteString("[cursor: row 24, col 1]")
	for p := []byte(out.String()); len(p) > 0; {
		n := min(len(p), 4096)
		_, _ = s.Write(p[:n])
		p = p[n:]
	}
	if got := s.Text(); got != want.String() {
		t.Errorf("after seq 1 100000, Text() =\n%s\nwant\n%s", got, want.String())
	}
}

func TestAltScreen(t *testing.T) {
	s := newScreen(t, 20, 5, nil)
	write(t, s, "main\r\n")
	if s.AltScreen() {
		t.Fatal("AltScreen() before ESC[?1049h")
	}
	write(t, s, "\x1b[?1049halt")
	if !s.AltScreen() {
		t.Fatal("!AltScreen() after ESC[?1049h")
	}
	if got, want := s.Text(), "alt\n[cursor: row 1, col 4]"; got != want {
		t.Errorf("in the alternate screen, Text() = %q, want %q", got, want)
	}
	write(t, s, "\x1b[?1049l")
	if s.AltScreen() {
		t.Fatal("AltScreen() after ESC[?1049l")
	}
	if got, want := s.Text(), "main\n[cursor: row 2, col 1]"; got != want {
		t.Errorf("back in the main screen, Text() = %q, want %q", got, want)
	}
}

// A program that enters the alternate screen and never leaves it, printing
// lines: the screen shows the last of them.
func TestAltScreenNeverLeft(t *testing.T) {
	for _, noSkip := range []bool{false, true} {
		s := newScreen(t, 20, 5, nil)
		s.noSkip = noSkip
		write(t, s, "\x1b[?1049h")
		for i := 1; i <= 20000; i++ {
			write(t, s, "line "+strconv.Itoa(i)+"\r\n")
		}
		if !s.AltScreen() {
			t.Fatal("!AltScreen()")
		}
		if got, want := s.Text(), "line 19997\nline 19998\nline 19999\nline 20000\n[cursor: row 5, col 1]"; got != want {
			t.Errorf("noSkip=%v: Text() = %q, want %q", noSkip, got, want)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		want   string // the screen's first line
	}{
		// A UTF-8 lead byte takes as many bytes as it says (x/vt's parser).
		{"invalid UTF-8", []string{"\xff\xfe\xc3(\xe2\x82ok\x80\xbf"}, "\ufffd\ufffdk"},
		{"escape split", []string{"\x1b[", "31mX"}, "X"},
		{"escape split at ESC", []string{"A\x1b", "[1mB"}, "AB"},
		{"CSI split in its parameters", []string{"\x1b[3", "8;5;2", "08mC"}, "C"},
		{"UTF-8 split", []string{"\xe4\xb8", "\x96"}, "世"},
		{"huge parameter list", []string{"\x1b[" + strings.Repeat("1;", 100000) + "mok"}, "ok"},
		{"huge parameter", []string{"\x1b[99999999999999999999999999mok"}, "ok"},
		{"OSC never terminated", []string{"\x1b]0;title", strings.Repeat("a", 1<<20)}, ""},
		{"OSC terminated late", []string{"\x1b]0;", strings.Repeat("a", 1<<20), "\x07seen"}, "seen"},
		{"DCS never terminated", []string{"\x1bPq", strings.Repeat("#0;2;0;0;0", 100000)}, ""},
		{"zero-length writes", []string{"", "x", ""}, "x"},
		{"C1 controls", []string{"a\x9b31mb\x9dtitle\x9cc"}, "abc"},
		{"NUL and DEL", []string{"a\x00b\x7fc"}, "abc"},
		{"REP of 2^31-2", []string{"ab\x1b[2147483646b"}, strings.Repeat("b", 20)},
		{"CHT, CBT, ECH of 2^31-2", []string{"ab\x1b[2147483646I\x1b[2147483646Z\x1b[2147483646X"}, ""},
		{"margins past the edges, then scrolling", []string{"\x1b[?69h\x1b[5;1000s\x1b[1;1000r\x1b[3S\x1b[3T\x1b[3L\x1b[3Mok"}, "ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScreen(t, 20, 5, nil)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for _, w := range c.writes {
					write(t, s, w)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("writes did not return")
			}
			text := s.Text()
			if first, _, _ := strings.Cut(text, "\n"); strings.HasPrefix(first, "[cursor:") && c.want != "" || !strings.HasPrefix(text, c.want) {
				t.Errorf("Text() = %q, want it to start with %q", text, c.want)
			}
			if s.panics != 0 {
				t.Errorf("the emulator panicked %d times", s.panics)
			}
		})
	}
}

func TestWriteAfterClose(t *testing.T) {
	s := New(20, 5, nil)
	write(t, s, "before")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Write([]byte("after")); n != 5 || err != nil {
		t.Errorf("Write after Close = %d, %v; want 5, nil", n, err)
	}
	s.Resize(30, 10)
	if got, want := s.Text(), "before\n[cursor: row 1, col 7]"; got != want {
		t.Errorf("Text() after Close = %q, want %q", got, want)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// Resizing to the bounds of the executor's terminals while a program writes,
// and the model reads: run with -race.
func TestResizeWhileWriting(t *testing.T) {
	s := newScreen(t, 80, 24, func([]byte) {})
	out := append(scrollingOutput(16<<10), coloredOutput(16<<10)...)
	out = append(out, fullScreenOutput(16<<10, 80, 24)...)
	out = append(out, "\x1b[?1049h日本語\x1b[6n\x1b[?1h"...)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for p := out; len(p) > 0; {
			n := min(len(p), 997)
			_, _ = s.Write(p[:n])
			p = p[n:]
		}
	}()
	sizes := [][2]int{{20, 5}, {500, 200}, {20, 200}, {500, 5}, {80, 24}}
	for i := 0; ; i++ {
		select {
		case <-written:
			if !s.AltScreen() {
				t.Error("!AltScreen() after ESC[?1049h")
			}
			return
		default:
		}
		s.Resize(sizes[i%len(sizes)][0], sizes[i%len(sizes)][1])
		cols, rows := s.Size()
		lines := strings.Split(s.Text(), "\n")
		if len(lines) > rows+1 {
			t.Errorf("%d×%d: %d lines", cols, rows, len(lines))
		}
		for _, l := range lines[:len(lines)-1] {
			if n := utf8.RuneCountInString(l); n > cols {
				t.Errorf("%d×%d: a line of %d characters", cols, rows, n)
			}
		}
		_, _ = s.Keys([]string{"Up"})
	}
}

func TestInternalsReachable(t *testing.T) {
	e, in := newEmulator(80, 24)
	defer closePipe(e)
	if in.screens == nil || in.parser == nil {
		t.Fatalf("x/vt's screens or parser not found (%+v): was x/vt upgraded? Scrollback is on, and scrolling slow", in)
	}
	if in.screens[0].Scrollback() != nil || in.screens[1].Scrollback() != nil {
		t.Error("a screen has a scrollback")
	}
	_, _ = e.Write([]byte("m\x1b[?1049ha"))
	if c := in.screens[0].CellAt(0, 0); c == nil || c.Content != "m" {
		t.Errorf("main screen: %+v", c)
	}
	if c := in.screens[1].CellAt(0, 0); c == nil || c.Content != "a" {
		t.Errorf("alternate screen: %+v", c)
	}
}

// x/vt can panic; the screen goes on, with the same emulator if it works,
// and a new one if it goes on panicking.
func TestPanicRecovered(t *testing.T) {
	s := newScreen(t, 20, 5, nil)
	s.emu.RegisterCsiHandler('y', func(ansi.Params) bool { panic("boom") })
	first := s.emu
	write(t, s, "a\x1b[yb")
	if got, want := s.Text(), "ab\n[cursor: row 1, col 3]"; got != want {
		t.Errorf("after a panic, Text() = %q, want %q", got, want)
	}
	if s.emu != first {
		t.Fatal("the emulator was replaced after one panic")
	}
	write(t, s, "\x1b[y")
	write(t, s, "\x1b[y")
	if s.emu == first {
		t.Fatal("the emulator was kept after three panics")
	}
	write(t, s, "c")
	if got, want := s.Text(), "c\n[cursor: row 1, col 2]"; got != want {
		t.Errorf("with a new emulator, Text() = %q, want %q", got, want)
	}
}

func TestReplyCursorPosition(t *testing.T) {
	got := make(chan []byte, 10)
	s := newScreen(t, 80, 24, func(p []byte) { got <- p })
	write(t, s, "\x1b[3;5H\x1b[6n")
	expectReply(t, got, "\x1b[3;5R")
	// Plain output held back is drawn before the question is answered.
	write(t, s, strings.Repeat("line\r\n", 100)+"abc\x1b[6n")
	expectReply(t, got, "\x1b[24;4R")
	write(t, s, "\x1b[c")
	if p := <-got; !bytes.HasPrefix(p, []byte("\x1b[?")) {
		t.Errorf("device attributes: %q", p)
	}
}

func expectReply(t *testing.T, got <-chan []byte, want string) {
	t.Helper()
	select {
	case p := <-got:
		if string(p) != want {
			t.Errorf("reply %q, want %q", p, want)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("no reply, want %q", want)
	}
}

// A program that asks and does not read: reply blocks, Write does not, and
// neither does Close.
func TestReplyBlocked(t *testing.T) {
	unblock := make(chan struct{})
	called := make(chan struct{}, 1)
	s := New(80, 24, func([]byte) {
		select {
		case called <- struct{}{}:
		default:
		}
		<-unblock
	})
	defer close(unblock) // after Close: the deliverer then ends
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10000 {
			_, _ = s.Write([]byte("\x1b[6n\x1b[c"))
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Write blocked on a blocked reply")
	}
	<-called
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a blocked reply")
	}
}

func TestReplyNil(t *testing.T) {
	s := newScreen(t, 80, 24, nil)
	for range 1000 {
		write(t, s, "\x1b[6n")
	}
}
