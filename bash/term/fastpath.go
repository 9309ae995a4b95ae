package term

import (
	"bytes"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// Scrolling is what makes x/vt slow: it scrolls a line by moving every cell
// of the screen up one row (112 bytes a cell, ~9 µs at 80×24), so a program
// printing short lines costs over 1 µs a byte. Most of those lines are never
// seen: they scroll off before anyone looks. So the screen holds back
// "plain" output — printable text, CR, LF, TAB, BS, SGR colours, UTF-8 —
// which can neither query the terminal nor move the cursor up, and when it
// draws it (before Text, Resize, any other output, or every maxPending
// bytes) it skips the lines that the rest would push off the screen anyway,
// feeding the emulator only what they leave behind in its state. See
// forward for why the result is exactly what feeding every byte gives.

// maxPending bounds the plain output held back.
const maxPending = 64 << 10

// plainLen returns the length of the longest prefix of p made of whole plain
// tokens, stopping at the first token boundary at or after limit.
func plainLen(p []byte, limit int) int {
	i := 0
	for i < len(p) && i < limit {
		if c := p[i]; c >= 0x20 && c < 0x7f || c == '\r' || c == '\n' || c == '\t' || c == '\b' {
			i++
			continue
		}
		n := plainToken(p[i:])
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

// plainToken returns the length of the plain token p starts with, 0 if it
// does not start with one (or with only part of one).
func plainToken(p []byte) int {
	switch c := p[0]; {
	case c >= 0x20 && c < 0x7f, c == '\r', c == '\n', c == '\t', c == '\b':
		return 1
	case c == ansi.ESC: // SGR: ESC [ digits ; : m
		if len(p) < 3 || p[1] != '[' {
			return 0
		}
		for i := 2; i < len(p); i++ {
			switch c := p[i]; {
			case c == 'm':
				return i + 1
			case c < '0' || c > ';': // digits, ':' and ';' only
				return 0
			}
		}
		return 0
	case c >= 0xc2 && c <= 0xf4:
		// A UTF-8 character, as the parser takes it: the lead byte says the
		// length, and the parser takes that many bytes whatever they are; so
		// we take only continuation bytes as plain.
		n := 2
		if c >= 0xf0 {
			n = 4
		} else if c >= 0xe0 {
			n = 3
		}
		if len(p) < n {
			return 0
		}
		for _, b := range p[1:n] {
			if b < 0x80 || b > 0xbf {
				return 0
			}
		}
		return n
	}
	return 0
}

// tokenLen is plainToken, at least 1: output held back is made of plain
// tokens, but a loop over it should not rely on that to end.
func tokenLen(p []byte) int { return max(plainToken(p), 1) }

// write feeds p, holding plain output back in s.pending. s.track follows the
// emulator's parser state through everything that is not held back (plain
// tokens leave the parser in its ground state, where they found it), so
// that output is held back only when the parser is in its ground state.
func (s *Screen) write(p []byte) {
	for len(p) > 0 {
		if s.track.State() == parser.GroundState {
			if n := plainLen(p, maxPending-len(s.pending)); n > 0 {
				s.pending = append(s.pending, p[:n]...)
				p = p[n:]
				if len(s.pending) >= maxPending {
					s.flush(false)
				}
				continue
			}
		}
		s.flush(true)
		n := s.otherLen(p)
		s.feed(p[:n])
		p = p[n:]
	}
}

// otherLen advances s.track over p until the parser is back in its ground
// state before plain output, and returns how far that is.
func (s *Screen) otherLen(p []byte) int {
	for i, c := range p {
		s.track.Advance(c)
		if s.track.State() == parser.GroundState && i+1 < len(p) && plainToken(p[i+1:]) > 0 {
			return i + 1
		}
	}
	return len(p)
}

// flush draws the output held back: all of it, or (when there is much of it)
// up to its last line feed, so that the characters of a line, which may
// combine, are fed in one piece; a line of more than maxPending/2 is not.
func (s *Screen) flush(all bool) {
	if len(s.pending) == 0 {
		return
	}
	end := len(s.pending)
	if i := bytes.LastIndexByte(s.pending, '\n'); !all && i >= 0 && end-(i+1) < maxPending/2 {
		end = i + 1
	}
	s.forward(s.pending[:end])
	s.pending = s.pending[:copy(s.pending, s.pending[end:])]
}

// forward feeds plain output to the emulator, skipping what would scroll off
// the screen.
//
// Take a point P in data just after a CR LF, such that data after P holds
// at least rows LFs, and before P enough LFs to have brought the cursor to
// the bottom row. With the scroll region the whole screen, plain output
// never moves the cursor up, so from P on each LF scrolls, and the rows
// there are at P are all pushed off: what the screen shows in the end
// depends on the emulator's state at P but not on its cells. That state,
// after CR LF, is: cursor at column 0 of the bottom row, no pending wrap,
// nothing half-composed; the pen set by the SGRs before P; the single
// shift (SS2/SS3) used by the first character printed before P, if any; and
// the last character, for REP, set by the last line before P that prints an
// ASCII character on its own. So instead of the bytes before P the emulator
// gets: their SGRs, the first line that prints anything and that last line
// (whole, in order), a CR, and LFs down to the bottom row.
func (s *Screen) forward(data []byte) {
	if p := s.cutPoint(data); p > 0 {
		s.cuts++
		s.feed(s.stand(data[:p]))
		if _, y := s.cursor(); y < s.rows-1 {
			s.feed(bytes.Repeat([]byte{'\n'}, s.rows-1-y))
		}
		data = data[p:]
	}
	s.feed(data)
}

// cutPoint returns the point P of forward in data, 0 if there is none.
func (s *Screen) cutPoint(data []byte) int {
	rows := s.rows
	if s.noSkip || s.in.screens == nil || bytes.Count(data, []byte{'\n'}) <= rows {
		return 0
	}
	scr := &s.in.screens[0]
	if s.emu.IsAltScreen() {
		scr = &s.in.screens[1]
	}
	if scr.ScrollRegion() != scr.Bounds() {
		return 0
	}
	i := len(data)
	for range rows {
		i = bytes.LastIndexByte(data[:i], '\n')
	}
	// data[i:] holds rows LFs; P is after the last CR LF before i.
	for {
		j := bytes.LastIndexByte(data[:i], '\n')
		if j < 0 {
			return 0
		}
		if j > 0 && data[j-1] == '\r' {
			i = j + 1
			break
		}
		i = j
	}
	if _, y := s.cursor(); y+bytes.Count(data[:i], []byte{'\n'}) < rows-1 {
		return 0
	}
	return i
}

func (s *Screen) cursor() (x, y int) {
	pos := s.emu.CursorPosition()
	return pos.X, pos.Y
}

// stand returns what stands in for a, plain output ending in CR LF: see
// forward.
func (s *Screen) stand(a []byte) []byte {
	first, last := -1, -1 // starts of the lines
	for start := 0; start < len(a); {
		end := start + bytes.IndexByte(a[start:], '\n') + 1
		line := a[start:end]
		if first < 0 && prints(line) {
			first = start
		}
		if setsLastChar(line) {
			last = start
		}
		start = end
	}
	var b []byte
	seg := 0 // where the SGRs since the last line kept whole start in b
	for start := 0; start < len(a); {
		end := start + bytes.IndexByte(a[start:], '\n') + 1
		if start == first || start == last {
			b = append(b, a[start:end]...)
			seg = len(b)
		} else {
			b = appendSGRs(b, a[start:end], seg)
		}
		start = end
	}
	return append(b, '\r')
}

// prints reports whether the plain line prints a character.
func prints(line []byte) bool {
	for i := 0; i < len(line); {
		c := line[i]
		if c >= 0x20 && c < 0x7f || c >= 0xc2 {
			return true
		}
		i += tokenLen(line[i:])
	}
	return false
}

// appendSGRs appends the SGR sequences of the plain line to b; one that
// resets the pen first (no parameter or 0 first) drops the ones since seg,
// which it makes moot.
func appendSGRs(b, line []byte, seg int) []byte {
	for i := 0; i < len(line); {
		n := tokenLen(line[i:])
		if line[i] == ansi.ESC && n > 1 {
			if resetsPen(line[i : i+n]) {
				b = b[:seg]
			}
			b = append(b, line[i:i+n]...)
		}
		i += n
	}
	return b
}

// resetsPen reports whether the SGR sequence sgr starts by resetting the
// pen: its first parameter is 0 or missing.
func resetsPen(sgr []byte) bool {
	for _, c := range sgr[2:] {
		if c != '0' {
			return c == ';' || c == ':' || c == 'm'
		}
	}
	return false
}

// setsLastChar reports whether the plain line prints an ASCII character that
// is a grapheme cluster of its own: x/vt keeps it as the last character,
// which REP (CSI b) repeats. An ASCII character followed by ASCII, a control
// or a sequence is one; followed by other characters, it is one unless they
// combine with it, as x/vt's segmenter decides on the runes it collected.
func setsLastChar(line []byte) bool {
	var buf []byte
	for i := 0; i < len(line); {
		c := line[i]
		n := tokenLen(line[i:])
		if c >= 0x20 && c < 0x7f {
			j := i + 1
			for j < len(line) && line[j] >= 0x80 {
				j += tokenLen(line[j:])
			}
			if j == i+1 {
				return true
			}
			buf = append(buf[:0], c)
			for k := i + 1; k < j; {
				// One rune a token, as the parser decodes it: RuneError
				// for a malformed one.
				m := tokenLen(line[k:j])
				r, _ := utf8.DecodeRune(line[k : k+m])
				buf = utf8.AppendRune(buf, r)
				k += m
			}
			if cluster, _ := ansi.FirstGraphemeCluster(buf, ansi.GraphemeWidth); len(cluster) == 1 {
				return true
			}
			n = j - i
		}
		i += n
	}
	return false
}
