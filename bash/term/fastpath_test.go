package term

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// sameScreens fails t where a, which skips lines, and b, which draws them
// all, differ: their text, every cell (content, width, style, link), the
// cursor, the modes; then again after a probe that shows the state that is
// not on screen: REP repeats the last character, q is printed with the pen
// and any single shift (q is a line in the DEC graphics set).
func sameScreens(t testing.TB, a, b *Screen, what string) {
	t.Helper()
	for _, probe := range []string{"", "\x1b[2bq"} {
		if probe != "" {
			_, _ = a.Write([]byte(probe))
			_, _ = b.Write([]byte(probe))
		}
		if ta, tb := a.Text(), b.Text(); ta != tb {
			t.Fatalf("%s, probe %q: Text() differs:\n%q\nwhen drawing every line:\n%q", what, probe, ta, tb)
		}
		a.mu.Lock()
		b.mu.Lock()
		ea, eb := a.emu, b.emu
		if ea.IsAltScreen() != eb.IsAltScreen() || a.appCursor != b.appCursor || ea.CursorPosition() != eb.CursorPosition() {
			t.Errorf("%s, probe %q: alt %v/%v, DECCKM %v/%v, cursor %v/%v", what, probe,
				ea.IsAltScreen(), eb.IsAltScreen(), a.appCursor, b.appCursor, ea.CursorPosition(), eb.CursorPosition())
		}
		for y := range ea.Height() {
			for x := range ea.Width() {
				if ca, cb := ea.CellAt(x, y), eb.CellAt(x, y); !ca.Equal(cb) && !(ca.IsZero() && cb.IsZero()) {
					t.Errorf("%s, probe %q: cell %d,%d is %+v, drawing every line %+v", what, probe, x, y, *ca, *cb)
				}
			}
		}
		b.mu.Unlock()
		a.mu.Unlock()
		if t.Failed() {
			t.FailNow()
		}
	}
}

// program writes what a program might: runs of lines (plain output, which
// the screen skips through) mixed with everything that changes how they are
// drawn, or that they must not hide.
func program(r *rand.Rand, n int) string {
	text := []string{"x", "hello", "a\tb", "ab\bc", "日本語", "e\u0301", "👩\u200d💻", "\u0301", "λ", " ",
		strings.Repeat("w", 25), strings.Repeat("字", 13), "\x1b[31m", "\x1b[0m", "\x1b[m", "\x1b[1;4m",
		"\x1b[38;5;202m", "\x1b[48;2;1;2;3m", "\x1b[;32m", "\x1b[0;7m", "\x1b[4:3m", "\x1b[00m"}
	other := []string{"\x8e", "\x8f", "\x1b*0", "\x1b+0", "\x1b(0", "\x1b(B", "\x0e", "\x0f", "\x1b[3b",
		"\x1b[20h", "\x1b[20l", "\x1b[?7l", "\x1b[?7h", "\x1b[2;4r", "\x1b[r", "\x1b[?1049h", "\x1b[?1049l",
		"\x1b[H", "\x1b[2A", "\x1b[3;8H", "\x1b[2J", "\x1b[K", "\x1b[?6h", "\x1b[?6l", "\x1b[4h", "\x1b[4l",
		"\x1b]8;;http://x\x07", "\x1b]8;;\x07", "\a", "\x1b[?1h", "\x1b[?1l", "\x1bc", "\x1b[5S", "\x1b[2T",
		"\x1bM", "\x1bD", "\x1bE", "\x1b[?69h\x1b[3;9s", "\x1b[?69l", "\xff", "\xe2\x28", "\x1b[6n", "\x1b7", "\x1b8"}
	var b strings.Builder
	for b.Len() < n {
		switch k := r.IntN(10); {
		case k < 6: // lines
			for range r.IntN(40) {
				for range r.IntN(4) {
					b.WriteString(text[r.IntN(len(text))])
				}
				switch r.IntN(8) {
				case 0:
					b.WriteString("\n")
				case 1:
					b.WriteString("\r")
				default:
					b.WriteString("\r\n")
				}
			}
		case k < 9:
			b.WriteString(text[r.IntN(len(text))])
		default:
			b.WriteString(other[r.IntN(len(other))])
		}
	}
	return b.String()
}

// writeBoth writes out to both screens in the same pieces, reading their
// text at the same points.
func writeBoth(a, b *Screen, out []byte, r *rand.Rand) {
	for len(out) > 0 {
		n := min(len(out), 1+r.IntN(300))
		_, _ = a.Write(out[:n])
		_, _ = b.Write(out[:n])
		out = out[n:]
		if r.IntN(20) == 0 {
			_ = a.Text()
			_ = b.Text()
		}
	}
}

func TestSkipSameAsDrawing(t *testing.T) {
	cuts, seeds := 0, uint64(300)
	if raceEnabled || testing.Short() {
		seeds = 60
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 1))
		cols, rows := 20+r.IntN(10), 5+r.IntN(4)
		a, b := newScreen(t, cols, rows, nil), newScreen(t, cols, rows, nil)
		b.noSkip = true
		out := program(r, 20000)
		writeBoth(a, b, []byte(out), r)
		if a.panics+b.panics > 0 {
			t.Fatalf("seed %d: the emulator panicked", seed)
		}
		sameScreens(t, a, b, fmt.Sprintf("seed %d", seed))
		cuts += a.cuts
		_ = a.Close()
		_ = b.Close()
	}
	if cuts < int(seeds)*3 {
		t.Errorf("lines were skipped %d times only", cuts)
	}
}

// The cases the skipping has to get right, one by one.
func TestSkipState(t *testing.T) {
	lines := strings.Repeat("line\r\n", 30)
	cjk := strings.Repeat("字字\r\n", 30)
	for _, c := range []struct {
		name string
		out  func(rows int) string
	}{
		{"pen", func(int) string { return "\x1b[31m" + lines + "x\x1b[1m" + lines }},
		{"pen reset", func(int) string { return "\x1b[31;1m" + lines + "\x1b[m\x1b[4m" + lines }},
		{"last character", func(int) string { return "q\r\n" + cjk }},
		{"last character not combined", func(int) string { return "字\r\nq\r\ne\u0301\r\n" + cjk }},
		{"last character before a wide one", func(int) string { return "字\r\nq\r\ne字\r\n" + cjk }},
		{"last character in the last line", func(int) string { return lines + "k\r\n" + cjk }},
		{"single shift", func(rows int) string {
			// (SS2 is the C1 byte: x/vt does not take ESC N.) The first
			// line to print uses it: q after the skipped lines must not.
			// (The first line after the cut is pushed off too: let it be
			// empty.)
			return "\x1b*0\x8e\r\n" + cjk + "\r\n" + strings.Repeat("q\r\n", rows-1)
		}},
		{"single shift, ASCII", func(int) string { return "\x1b*0\x8e\r\n" + lines }},
		{"nothing printed before the cut", func(rows int) string {
			// The column the lines after it start at is 0, as after CR LF.
			return "abc\x1b[K" + strings.Repeat("\r\n", rows) + strings.Repeat("x\n", rows+2)
		}},
		{"pending wrap", func(int) string { return strings.Repeat("w", 20) + lines }},
		{"no CR", func(int) string { return strings.Repeat("line\n", 40) }},
		{"LNM", func(int) string { return "\x1b[20h" + strings.Repeat("line\n", 40) }},
		{"no autowrap", func(int) string { return "\x1b[?7l" + strings.Repeat(strings.Repeat("w", 30)+"\r\n", 30) }},
		{"scroll region", func(int) string { return "\x1b[2;4r" + lines }},
		{"alternate screen", func(int) string { return "\x1b[?1049h" + lines + "\x1b[?1049l" + lines }},
		{"cursor up, short lines", func(rows int) string {
			// From the top, rows+1 lines do not push the old rows off: what
			// the short lines do not cover stays.
			return strings.Repeat("XXXXXXXXXX\r\n", rows) + "\x1b[H" + strings.Repeat("a\r\n", rows+1)
		}},
		{"wide at the edge", func(int) string { return strings.Repeat("字", 30) + "\r\n" + lines }},
		{"hyperlink", func(int) string { return "\x1b]8;;http://x\x07" + lines + "\x1b]8;;\x07" + lines }},
		{"tabs and backspaces", func(int) string { return strings.Repeat("a\tb\bc\r\n", 30) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, size := range [][2]int{{20, 5}, {80, 24}} {
				a, b := newScreen(t, size[0], size[1], nil), newScreen(t, size[0], size[1], nil)
				b.noSkip = true
				out := c.out(size[1])
				write(t, a, out)
				write(t, b, out)
				sameScreens(t, a, b, c.name)
			}
		})
	}
}

// FuzzScreenWrite feeds anything, in pieces, to a screen that skips lines and
// one that draws them all: neither may panic or hang, and they must agree.
func FuzzScreenWrite(f *testing.F) {
	for _, s := range []string{
		"",
		"hello\r\nworld",
		strings.Repeat("12345\r\n", 20) + "\x1b[6n",
		"\x1b[31m" + strings.Repeat("red\r\n", 12) + "\x1b[bZ",
		"\x1b[?1049h" + strings.Repeat("alt\r\n", 12),
		"\x1b*0\x8e\r\n" + strings.Repeat("字\r\n", 12) + "q\r\n",
		"\x1b]0;never terminated" + strings.Repeat("a", 300),
		"\x1b[" + strings.Repeat("9;", 50) + "m\xff\xc3(",
		"\x1b[?69h\x1b[5;1000s\x1b[1;1000r\x1b[3S",
		"ab\x1b[2147483646b",
	} {
		f.Add([]byte(s), uint64(len(s)))
	}
	f.Fuzz(func(t *testing.T, out []byte, seed uint64) {
		a, b := newScreen(t, 20, 5, nil), newScreen(t, 20, 5, nil)
		b.noSkip = true
		writeBoth(a, b, out, rand.New(rand.NewPCG(seed, 2)))
		if a.panics+b.panics > 0 {
			t.Skip("x/vt panicked") // recovered; the screens may differ
		}
		sameScreens(t, a, b, "fuzz")
	})
}
