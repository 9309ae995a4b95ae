// Package sanitize removes from text what a terminal would act on rather
// than show: ANSI and other escape sequences (CSI, OSC, DCS, SOS, PM,
// APC, the two-byte ones), C1 controls (U+0080–U+009F, which some
// terminals also act on), DEL, and every C0 control but newline and tab
// (docs/spec.md §3.4). Command output reaches a model, and through `dsh
// run` a terminal: colour codes waste the model's context, and a crafted
// sequence could retitle a terminal, hide text from its reader, rewrite
// lines (carriage return, backspace) or, through OSC 52, write the
// clipboard.
//
// It shows as escapes the characters that hide or reorder text without
// being seen: the bidi controls (U+202A–U+202E, U+2066–U+2069, and the
// marks U+200E, U+200F, U+061C), the zero-width ones (U+200B–U+200D,
// U+2060, U+FEFF) and the tags (U+E0000–U+E007F, which models read as
// ASCII no reader sees): the model and a reviewer of the transcript read
// the same text, in the order it has.
//
//	sanitize.Text("\x1b[31mFAIL\x1b[0m\r\n") // "FAIL\n"
//	sanitize.Text("a\u202eb")                 // `a\u202eb`
//
// Decisions:
//   - A sequence is removed whole: ESC [ parameters, intermediates and its
//     final byte; ESC ] (OSC) and ESC P, X, ^, _ up to and including their
//     terminator (BEL or ST, ESC \); ESC, intermediates (0x20–0x2F) and
//     one final byte; the 8-bit forms (U+009B CSI, U+009D OSC, U+0090,
//     U+0098, U+009E, U+009F) likewise.
//   - A string sequence (OSC and the others) also ends at a newline, which
//     is kept: a stray ESC ] must not swallow the rest of a command's
//     output. A sequence cut by the end of the text is removed to its end.
//   - A carriage return is removed like any other control: "\r\n" reads
//     as "\n", and a progress bar's redraws run together on one line.
//   - An escape is \u and four lower-case hex digits (`\u202e`, `\ufeff`),
//     or \U and eight past U+FFFF (`\U000e0041`), as Go quotes them. Text
//     that already reads `\u202e` is left as it is: what matters is that
//     nothing is hidden, not that the escape can be told from such text.
//   - Characters are escaped after the controls are removed, since removing
//     one can join the bytes around it into a character to escape. Text that
//     is not valid UTF-8 is scanned byte by byte past each invalid one.
//   - Text is StripControls, then ShowInvisible. Redaction (package redact)
//     goes between the two: after the first, so that an escape sequence
//     inside a token cannot hide it; before the second, as an escape ends
//     in a hex digit, which would make a token right after it part of a
//     longer word, not redacted.
//   - An escape takes at most three times the bytes of its character (six
//     for the two of U+061C), as U+FFFD does for an invalid byte: output
//     limits count the command's bytes, and Text makes at most 3n bytes
//     of n.
//   - Text without any of these is returned as it is, without copying.
package sanitize

import (
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
)

// Text returns s without escape sequences and control characters other
// than "\n" and "\t", with bidi controls, zero-width characters and tags
// shown as escapes: ShowInvisible(StripControls(s)).
func Text(s string) string {
	return ShowInvisible(StripControls(s))
}

// StripControls returns s without escape sequences and control characters
// other than "\n" and "\t".
func StripControls(s string) string {
	// In text that is not valid UTF-8, removing a control can join the
	// bytes around it into a new C1 character: go again until none is
	// left. Each pass removes a byte at least.
	for firstControl(s) >= 0 {
		s = strip(s)
	}
	return s
}

// ShowInvisible returns s with each bidi control, zero-width character and
// tag as its escape.
func ShowInvisible(s string) string {
	i, r, n := firstInvisible(s)
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)/2)
	for i >= 0 {
		b = appendEscape(append(b, s[:i]...), r)
		s = s[i+n:]
		i, r, n = firstInvisible(s)
	}
	return string(append(b, s...))
}

// firstInvisible returns the index, the character and the length in bytes
// of the first invisible character of s, or -1. Only these lead bytes
// start one: 0xd8 (U+061C), 0xe2 (U+2000–U+2FFF), 0xef (U+FEFF) and 0xf3
// (the tags).
func firstInvisible(s string) (int, rune, int) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != 0xd8 && c != 0xe2 && c != 0xef && c != 0xf3 {
			continue
		}
		if r, n := utf8.DecodeRuneInString(s[i:]); invisible(r) {
			return i, r, n
		}
	}
	return -1, 0, 0
}

// invisible reports whether Text shows r as an escape.
func invisible(r rune) bool {
	switch {
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069: // bidi embeddings, overrides, isolates
	case 0x200b <= r && r <= 0x200f, r == 0x2060, r == 0xfeff: // zero width, and the bidi marks LRM, RLM
	case r == 0x061c: // the Arabic letter mark
	case 0xe0000 <= r && r <= 0xe007f: // tags
	default:
		return false
	}
	return true
}

// appendEscape appends the escape of r (exact, docs/spec.md §3.4): \u and
// four lower-case hex digits, or \U and eight past U+FFFF.
func appendEscape(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	digits := 4
	b = append(b, '\\', 'u')
	if r > 0xffff {
		digits = 8
		b[len(b)-1] = 'U'
	}
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b = append(b, hex[r>>shift&0xf])
	}
	return b
}

// strip removes the controls of s, in one pass.
func strip(s string) string {
	i := firstControl(s)
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[skipControl(s, i):]
		i = firstControl(s)
	}
	b.WriteString(s)
	return b.String()
}

// firstControl is the index of the first byte of s that starts a control
// (C0 but \t and \n, DEL, or a C1 character in UTF-8), or -1.
func firstControl(s string) int {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 && c != '\n' && c != '\t', c == 0x7f:
			return i
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			return i
		}
	}
	return -1
}

// skipControl returns the index just after the control that starts at i,
// with the sequence it introduces.
func skipControl(s string, i int) int {
	if s[i] == esc {
		return skipEscape(s, i+1)
	}
	if s[i] == 0xc2 { // a C1 control, two bytes in UTF-8
		return skipC1(s, rune(s[i+1]), i+2)
	}
	return i + 1
}

// skipEscape skips what follows an ESC that ended at i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1)
	case c >= 0x20 && c <= 0x2f: // intermediates, then one final byte
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	case c >= 0x30 && c <= 0x7e:
		return i + 1
	}
	return i // a lone ESC
}

// skipC1 skips the C1 control r, which ended at i, and what it introduces.
func skipC1(s string, r rune, i int) int {
	switch r {
	case 0x9b:
		return skipCSI(s, i)
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f:
		return skipString(s, i)
	}
	return i
}

// skipCSI skips a control sequence's parameter and intermediate bytes
// (0x20–0x3F) and its final byte (0x40–0x7E) from i.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips a control string from i through its terminator: BEL,
// ESC \ or U+009C; it also ends before a newline or at the end of s.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == bel:
			return i + 1
		case s[i] == '\n':
			return i
		case s[i] == esc && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + utf8.RuneLen(0x9c)
		}
		i++
	}
	return i
}

// Cut is what StripMarked leaves where it removed a control: a byte that
// stripped text never holds (NUL is a control), and that no secret's
// pattern takes for a letter or a digit, so redaction reads a removed
// escape sequence as the word boundary a terminal shows.
const Cut = "\x00"

// StripMarked is StripControls with a Cut where each control was
// removed. Removing the cuts may join bytes into a control again (in text
// that is not valid UTF-8): Unmark removes them and strips once more.
func StripMarked(s string) string {
	i := firstControl(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		b.WriteString(Cut)
		s = s[skipControl(s, i):]
		i = firstControl(s)
	}
	b.WriteString(s)
	return b.String()
}

// Unmark is s, made by StripMarked (and redacted, say), without its cuts.
func Unmark(s string) string {
	return StripControls(strings.ReplaceAll(s, Cut, ""))
}

// maxUnfinished bounds the escape sequence SplitUnfinished carries over:
// a control string (OSC) with no end is removed as it comes.
const maxUnfinished = 4 << 10

// SplitUnfinished splits s, a stream's text so far, before an escape
// sequence its end cuts short (`\x1b[3`), which the next text may finish:
// removed in two halves, its second half (`2m`) would read as text.
func SplitUnfinished(s string) (done, rest string) {
	last := -1
	for pos := 0; pos < len(s); {
		k := firstControl(s[pos:])
		if k < 0 {
			break
		}
		start := pos + k
		end := skipControl(s, start)
		if end >= len(s) {
			last = start
		}
		pos = max(end, start+1)
	}
	if last < 0 || len(s)-last > maxUnfinished || skipControl(s+"x", last) <= len(s) {
		return s, ""
	}
	return s[:last], s[last:]
}
