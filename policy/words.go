package policy

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/internal/lazyre"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Words are computed from the syntax tree, never by mvdan.cc/sh/v3/expand:
// expansion needs handlers for substitutions (a nil one panics), and what
// the policy needs is not the value of a dynamic word but the fact that it
// is dynamic (docs/spec.md §9.3 "Words").

// segKind says where a piece of a word came from.
type segKind uint8

const (
	segUnquoted segKind = iota // bare text: a `*` in it is a star, `{`, `~` and patterns apply
	segQuoted                  // quoted or backslash-escaped text: always literal
	segDynamic                 // a parameter, substitution, arithmetic or pattern: unknown until run time
)

// seg is one piece of a word after quote removal.
type seg struct {
	kind  segKind
	text  string
	multi bool // a dynamic piece that may stand for any number of words
}

// field is one word after brace expansion.
type field []seg

// maxFields bounds what brace expansion may produce from one word; a word
// that would produce more is taken as dynamic, which is the cautious reading.
const maxFields = 256

// arg is one argument of a part as the policy sees it.
type arg struct {
	text  string // the value after quote removal; for a dynamic word, the word as written
	dyn   bool
	multi bool         // dynamic and may stand for any number of arguments, zero included
	word  *syntax.Word // where it came from; nil when the policy made it (xargs' trailing input)
}

// static returns a static argument.
func static(s string) arg { return arg{text: s} }

// expandWord returns the fields of a word: brace expansion, quote removal
// and ~. ok is false when brace expansion would exceed maxFields. As in
// bash, a field that is empty and was never quoted is no word at all.
func expandWord(w *syntax.Word, home string) (fields []field, ok bool) {
	alts, ok := braceFields(w.Parts)
	if !ok {
		return nil, false
	}
	out := alts[:0]
	for _, f := range alts {
		if f = tilde(merge(f), home); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out, true
}

// merge joins neighbouring bare pieces and drops empty ones, so that a
// tilde prefix is read across the pieces brace expansion left.
func merge(f field) field {
	out := f[:0:0]
	for _, s := range f {
		switch {
		case s.kind == segUnquoted && s.text == "":
		case s.kind == segUnquoted && len(out) > 0 && out[len(out)-1].kind == segUnquoted:
			out[len(out)-1].text += s.text
		default:
			out = append(out, s)
		}
	}
	return out
}

// bracesChange reports whether brace expansion changes a word (dash, for
// one, leaves it as it is).
func bracesChange(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			toks := braceTokens(w.Parts)
			words, ok := braceExpand(toks)
			return !ok || len(words) != 1 || len(words[0]) != len(toks)
		}
	}
	return false
}

// noBraces is the one field of a word's parts without brace expansion.
func noBraces(parts []syntax.WordPart) ([]field, bool) {
	var f field
	for _, p := range parts {
		f = append(f, partSegs(p)...)
	}
	return []field{f}, true
}

// maxBraceWord bounds the length of a word brace expansion reads.
const maxBraceWord = 4096

// braceFields returns the fields of a word's brace expansion (braces.go).
func braceFields(parts []syntax.WordPart) ([]field, bool) {
	hasBrace := false
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			hasBrace = true
			break
		}
	}
	if !hasBrace {
		return noBraces(parts)
	}
	size := 0
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok {
			size += len(l.Value)
		} else {
			size++
		}
	}
	if size > maxBraceWord {
		return nil, false // bash's expansion is quadratic in the braces of a word: dynamic
	}
	words, ok := braceExpand(braceTokens(parts))
	if !ok {
		return nil, false
	}
	out := make([]field, len(words))
	for i, w := range words {
		out[i] = tokenField(w)
	}
	return out, true
}

// numberSequence counts from x to y by step; width -1 makes characters,
// width > 0 pads numbers with zeros. nil when it would exceed maxFields.
func numberSequence(x, y, step int64, width int) []string {
	span := y - x
	if span < 0 {
		span = -span
	}
	if span < 0 || span/step >= maxFields {
		return nil
	}
	var out []string
	for v := x; ; {
		switch {
		case width < 0:
			out = append(out, string(rune(v)))
		case width > 0:
			s := strconv.FormatInt(max(v, -v), 10)
			for len(s) < width-boolInt(v < 0) {
				s = "0" + s
			}
			if v < 0 {
				s = "-" + s
			}
			out = append(out, s)
		default:
			out = append(out, strconv.FormatInt(v, 10))
		}
		if v == y || (x < y && v+step > y) || (x > y && v-step < y) {
			return out
		}
		if x < y {
			v += step
		} else {
			v -= step
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// partSegs returns the pieces of one word part outside double quotes.
func partSegs(p syntax.WordPart) []seg {
	switch p := p.(type) {
	case *syntax.Lit:
		return unquoteLit(p.Value)
	case *syntax.SglQuoted:
		if p.Dollar {
			return []seg{{kind: segQuoted, text: ansiC(p.Value)}}
		}
		return []seg{{kind: segQuoted, text: p.Value}}
	case *syntax.DblQuoted:
		return dblQuotedSegs(p)
	case *syntax.ProcSubst:
		// A process substitution is one path, never split.
		return []seg{{kind: segDynamic}}
	default:
		// $x, $(…), $((…)), @(…): split and globbed when unquoted.
		return []seg{{kind: segDynamic, multi: true}}
	}
}

// dblQuotedSegs returns the pieces of "…": literal text and dynamic
// pieces that stand for one word, except "$@" and its kin.
func dblQuotedSegs(q *syntax.DblQuoted) []seg {
	var out []seg
	for _, p := range q.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			out = append(out, seg{kind: segQuoted, text: dqUnescape(p.Value, '"')})
		case *syntax.ParamExp:
			out = append(out, seg{kind: segDynamic, multi: quotedMulti(p)})
		default:
			out = append(out, seg{kind: segDynamic})
		}
	}
	return out
}

// quotedMulti reports whether a quoted parameter expansion may still make
// several words: "$@", "${a[@]}", "${!p@}", and, to be safe, "$*" and its
// kin (docs/spec.md §9.3 "Words").
func quotedMulti(p *syntax.ParamExp) bool {
	if p.Length || p.Width {
		return false
	}
	if p.Names != 0 {
		return true
	}
	if p.Param != nil && (p.Param.Value == "@" || p.Param.Value == "*") {
		return true
	}
	if w, ok := p.Index.(*syntax.Word); ok {
		if s := w.Lit(); s == "@" || s == "*" {
			return true
		}
	}
	return false
}

// unquoteLit removes backslashes from bare text: an escaped character is
// quoted, the rest stays bare.
func unquoteLit(s string) []seg {
	if s == "" {
		return nil
	}
	if !strings.Contains(s, `\`) {
		return []seg{{kind: segUnquoted, text: s}}
	}
	var out []seg
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i > start {
			out = append(out, seg{kind: segUnquoted, text: s[start:i]})
		}
		if i+1 == len(s) {
			out = append(out, seg{kind: segQuoted, text: `\`})
			start = len(s)
			break
		}
		_, size := utf8.DecodeRuneInString(s[i+1:])
		out = append(out, seg{kind: segQuoted, text: s[i+1 : i+1+size]})
		i += size
		start = i + 1
	}
	if start < len(s) {
		out = append(out, seg{kind: segUnquoted, text: s[start:]})
	}
	return out
}

// dqUnescape removes the backslashes bash removes inside double quotes
// (quote is '"') or in an unquoted here-document body (quote is 0).
func dqUnescape(s string, quote byte) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch c := s[i+1]; {
			case c == '$' || c == '`' || c == '\\' || (quote != 0 && c == quote):
				b.WriteByte(c)
				i++
				continue
			case c == '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// assignLike matches a word bash treats as an assignment for ~: NAME=.
var assignLike = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*=`)

// tilde applies the tilde prefixes of a field's first bare piece: at its
// start and, in a word like NAME=…, after the = and after each colon. A
// prefix ends at a / or a colon; ~ and ~/… become home (when it is known),
// ~user, ~+ and ~- are dynamic. A prefix running into a quoted or dynamic
// piece stays literal, as in bash.
func tilde(f field, home string) field {
	if len(f) == 0 || f[0].kind != segUnquoted || !strings.Contains(f[0].text, "~") {
		return f
	}
	t := f[0].text
	starts := []int{0}
	if m := assignLike().FindStringIndex(t); m != nil {
		starts = []int{m[1]}
		for i := m[1]; i < len(t); i++ {
			if t[i] == ':' {
				starts = append(starts, i+1)
			}
		}
	}
	var out []seg
	done := 0
	for _, i := range starts {
		if i >= len(t) || t[i] != '~' {
			continue
		}
		end := strings.IndexAny(t[i:], "/:")
		if end < 0 && len(f) > 1 {
			continue
		}
		if end < 0 {
			end = len(t) - i
		}
		rep, ok := tildePrefix(t[i:i+end], home)
		if !ok {
			continue
		}
		if i > done {
			out = append(out, seg{kind: segUnquoted, text: t[done:i]})
		}
		out = append(out, rep)
		done = i + end
	}
	if out == nil {
		return f
	}
	if done < len(t) {
		out = append(out, seg{kind: segUnquoted, text: t[done:]})
	}
	return append(out, f[1:]...)
}

// tildePrefix is what a tilde prefix expands to: home (quoted, it is not a
// pattern) or a dynamic piece; ok is false when it stays literal.
func tildePrefix(prefix, home string) (seg, bool) {
	switch {
	case prefix != "~":
		return seg{kind: segDynamic}, true
	case home == "":
		return seg{}, false
	}
	return seg{kind: segQuoted, text: home}, true
}

// fieldArg makes an argument of a field; src is the word as written.
func fieldArg(f field, src string, w *syntax.Word) arg {
	var b, pat strings.Builder
	dyn, multi := false, false
	for _, s := range f {
		switch s.kind {
		case segDynamic:
			dyn = true
			multi = multi || s.multi
		case segUnquoted:
			b.WriteString(s.text)
			pat.WriteString(s.text)
		case segQuoted:
			b.WriteString(s.text)
			pat.WriteString(pattern.QuoteMeta(s.text, 0))
		}
	}
	if pattern.HasMeta(pat.String(), 0) {
		// A pattern bash would expand to any number of names, also
		// beside a quoted expansion ("$X"/*).
		dyn, multi = true, true
	}
	if dyn {
		return arg{text: src, dyn: true, multi: multi, word: w}
	}
	return arg{text: showCR(b.String()), word: w}
}

// staticText returns the literal text of a field, dynamic pieces left out:
// what the quoted-code check reads.
func staticText(f field) string {
	if len(f) == 1 && f[0].kind != segDynamic {
		return f[0].text
	}
	var b strings.Builder
	for _, s := range f {
		if s.kind != segDynamic {
			b.WriteString(s.text)
		}
	}
	return b.String()
}

// ansiC decodes the body of $'…'. A NUL ends the string, as in bash.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		r, isByte, n, ok := ansiEscape(s[i+1:])
		switch {
		case !ok:
			b.WriteByte('\\')
			continue
		case r == 0:
			return b.String()
		case isByte:
			b.WriteByte(byte(r))
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// ansiSimple are the one-letter escapes of $'…'.
var ansiSimple = map[byte]rune{'a': 7, 'b': 8, 'e': 27, 'E': 27, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11,
	'\\': '\\', '\'': '\'', '"': '"', '?': '?'}

// ansiEscape decodes one escape after the backslash: the value, whether it
// is a byte (\x, octal) rather than a code point (\u, \U), and how many
// bytes of s it used.
func ansiEscape(s string) (r rune, isByte bool, n int, ok bool) {
	c := s[0]
	if r, found := ansiSimple[c]; found {
		return r, true, 1, true
	}
	switch {
	case c >= '0' && c <= '7':
		v, k := digits(s, 0, 3, 8)
		return rune(v & 0xff), true, k, true
	case c == 'x':
		v, k := digits(s, 1, 2, 16)
		return rune(v), true, k, k > 1
	case c == 'u':
		v, k := digits(s, 1, 4, 16)
		return rune(v), false, k, k > 1
	case c == 'U':
		v, k := digits(s, 1, 8, 16)
		return rune(v), false, k, k > 1
	case c == 'c' && len(s) > 1:
		return rune(s[1] & 0x1f), true, 2, true
	}
	return 0, false, 0, false
}

// digits reads up to max digits of base starting at s[from]; it returns
// the value and the index after the last digit.
func digits(s string, from, maxN, base int) (int64, int) {
	end := from
	for end < len(s) && end-from < maxN {
		if _, err := strconv.ParseInt(s[end:end+1], base, 64); err != nil {
			break
		}
		end++
	}
	if end == from {
		return 0, from
	}
	v, _ := strconv.ParseInt(s[from:end], base, 64)
	return v, end
}
