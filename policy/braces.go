package policy

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Brace expansion as bash 5.2 does it (braces.c), not as the parser's
// syntax.SplitBraces reads it: the two differ where a brace pair is no
// expansion. In `{x},.,-exec,rm,{},\;}` bash finds no comma in `{x}`, so
// the first `{` pairs with the last `}` and the word expands to
// `x}`, `.`, `-exec`, `rm`, `{}` and `;`; SplitBraces kept it one word
// (issue 25). The algorithm below follows braces.c step by step, over the
// word's characters: quoted strings and expansions are single tokens that
// brace expansion passes over, as brace_gobbler skips them.

// btok is one character of a word, or a part brace expansion passes over.
type btok struct {
	c    byte
	esc  bool            // escaped by a backslash: never special, quoted in the result
	part syntax.WordPart // a quoted string or an expansion (c is unused)
	null bool            // the empty quoted word a `\` of a letter sequence leaves
	lone bool            // a backslash that ended its text, written alone
}

// braceTokens splits a word into tokens.
func braceTokens(parts []syntax.WordPart) []btok {
	var out []btok
	for _, p := range parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			out = append(out, btok{part: p})
			continue
		}
		s := l.Value
		for i := 0; i < len(s); i++ {
			if s[i] != '\\' {
				out = append(out, btok{c: s[i]})
				continue
			}
			if i+1 == len(s) {
				out = append(out, btok{c: '\\', esc: true, lone: true})
				break
			}
			i++
			out = append(out, btok{c: s[i], esc: true})
			for i+1 < len(s) && s[i+1]&0xC0 == 0x80 { // the rest of an escaped UTF-8 character
				i++
				out = append(out, btok{c: s[i], esc: true})
			}
		}
	}
	return out
}

// plain reports whether t[i] is the unescaped character c.
func plain(t []btok, i int, c byte) bool {
	return i < len(t) && t[i].part == nil && !t[i].esc && !t[i].null && t[i].c == c
}

// braceBlank is brace_whitespace: a blank, or the end of the word (NUL).
func braceBlank(t []btok, i int, before bool) bool {
	if i < 0 || i >= len(t) {
		return true
	}
	k := t[i]
	if k.part != nil || k.null || (k.esc && !before) { // after: the raw character is the backslash
		return false
	}
	return k.c == ' ' || k.c == '\t' || k.c == '\n'
}

// gobble is brace_gobbler: from t[i], the index of the first satisfy at
// brace level 0 (for `}`, only once a comma or `..` was seen at level 0),
// and whether there is one.
func gobble(t []btok, i int, satisfy byte) (int, bool) {
	level, commas := 0, 1
	if satisfy == '}' {
		commas = 0
	}
	for ; i < len(t); i++ {
		if t[i].part != nil || t[i].esc || t[i].null {
			continue
		}
		c := t[i].c
		if c == satisfy && level == 0 && commas > 0 {
			// An open brace with a blank (or the word's end) before it, and
			// a blank or a close brace after it, is text.
			if c == '{' && braceBlank(t, i-1, true) && (braceBlank(t, i+1, false) || plain(t, i+1, '}')) {
				continue
			}
			return i, true
		}
		switch {
		case c == '{':
			level++
		case c == '}' && level > 0:
			level--
		case satisfy == '}' && level == 0 && c == ',':
			commas++
		case satisfy == '}' && level == 0 && c == '.' && plain(t, i+1, '.') && !plain(t, i+2, satisfy):
			commas++
		}
	}
	return len(t), false
}

// braceExpand is brace_expand: the words a word's tokens expand to; ok is
// false past maxFields.
func braceExpand(t []btok) ([][]btok, bool) {
	i := 0
	found := false
	for {
		j, ok := gobble(t, i, '{')
		if !ok {
			break
		}
		if _, ok := gobble(t, j+1, '}'); ok {
			i, found = j, true
			break
		}
		i = j + 1
	}
	if !found {
		return [][]btok{t}, true
	}
	start := i + 1
	end, ok := gobble(t, start, '}')
	if !ok {
		return [][]btok{t}, true
	}
	amble := t[start:end]
	var tack [][]btok
	if hasComma(amble) {
		if tack, ok = expandAmble(amble); !ok {
			return nil, false
		}
	} else if seq, isSeq := seqTerm(amble); isSeq && seq == nil {
		return nil, false // a sequence of more than maxFields words
	} else if tack = seq; tack == nil {
		if end+1 == len(t) {
			return [][]btok{t}, true
		}
		tack = [][]btok{t[start-1 : end+1]} // the braces stay, as text
	}
	result := concat([][]btok{t[:i]}, tack)
	if end+1 < len(t) {
		post, ok := braceExpand(t[end+1:])
		if !ok || len(result)*len(post) > maxFields {
			return nil, false
		}
		result = concat(result, post)
	}
	return result, len(result) <= maxFields
}

// hasComma is the amble's search for a comma: escaped characters are
// skipped, but not quotes (bash looks inside them here).
func hasComma(amble []btok) bool {
	for _, k := range amble {
		switch {
		case k.part != nil:
			if strings.Contains(printPart(k.part), ",") {
				return true
			}
		case !k.esc && !k.null && k.c == ',':
			return true
		}
	}
	return false
}

// printPart is a part as written.
func printPart(p syntax.WordPart) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{p}})
	return b.String()
}

// expandAmble is expand_amble: each comma-separated element at level 0,
// brace-expanded.
func expandAmble(amble []btok) ([][]btok, bool) {
	var out [][]btok
	for start := 0; ; {
		j, more := gobble(amble, start, ',')
		sub, ok := braceExpand(amble[start:j])
		if !ok || len(out)+len(sub) > maxFields {
			return nil, false
		}
		out = append(out, sub...)
		if !more {
			return out, true
		}
		start = j + 1
	}
}

// concat is array_concat: each of a joined with each of b, in order.
func concat(a, b [][]btok) [][]btok {
	out := make([][]btok, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			w := make([]btok, 0, len(x)+len(y))
			out = append(out, append(append(w, x...), y...))
		}
	}
	return out
}

// seqTerm is expand_seqterm: {X..Y[..INCR]} of integers or of single
// letters; isSeq is false when the amble is not one, and the words are
// nil when they would be more than maxFields.
func seqTerm(amble []btok) (words [][]btok, isSeq bool) {
	var b strings.Builder
	for _, k := range amble {
		if k.part != nil || k.esc || k.null {
			return nil, false
		}
		b.WriteByte(k.c)
	}
	vals, isSeq := sequence(b.String())
	if vals == nil {
		return nil, isSeq
	}
	out := make([][]btok, len(vals))
	for i, v := range vals {
		if v == `\` { // {Z..a} makes a backslash, which quote removal takes away
			out[i] = []btok{{null: true}}
			continue
		}
		for j := 0; j < len(v); j++ {
			out[i] = append(out[i], btok{c: v[j]})
		}
	}
	return out, true
}

// sequence expands the text of a sequence expression; isSeq is false
// when it is none, and the words nil when they would be too many.
func sequence(text string) (words []string, isSeq bool) {
	lhs, rhs, ok := strings.Cut(text, "..")
	if !ok || lhs == "" || rhs == "" {
		return nil, false
	}
	lv, lint := legalNumber(lhs)
	lchar := !lint && len(lhs) == 1 && isLetter(lhs[0])
	rnum, rest := rhs, ""
	rint, rchar := false, false
	switch {
	case isDigit(rhs[0]) || (len(rhs) > 1 && (rhs[0] == '+' || rhs[0] == '-') && isDigit(rhs[1])):
		end := 1
		for end < len(rhs) && isDigit(rhs[end]) {
			end++
		}
		rnum, rest, rint = rhs[:end], rhs[end:], true
	case isLetter(rhs[0]) && (len(rhs) == 1 || rhs[1] == '.'):
		rnum, rest, rchar = rhs[:1], rhs[1:], true
	}
	step := int64(1)
	if rest != "" {
		incr, ok := strings.CutPrefix(rest, "..")
		n, err := strconv.ParseInt(incr, 10, 64)
		if !ok || err != nil {
			return nil, false
		}
		step = n
	}
	step = max(step, -step)
	if step == 0 {
		step = 1
	}
	switch {
	case lint && rint:
		rv, err := strconv.ParseInt(rnum, 10, 64)
		if err != nil {
			return nil, false
		}
		return numberSequence(lv, rv, step, zeroWidth(lhs, rnum)), true
	case lchar && rchar:
		return numberSequence(int64(lhs[0]), int64(rnum[0]), step, -1), true
	}
	return nil, false
}

// legalNumber is bash's legal_number: a whole decimal integer.
func legalNumber(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// zeroWidth is the width a sequence's numbers are padded to: that of an
// end written with a leading zero (-0 for a negative one), else none.
func zeroWidth(lhs, rhs string) int {
	width := 0
	for _, s := range []string{lhs, rhs} {
		if (len(s) > 1 && s[0] == '0') || (len(s) > 2 && s[0] == '-' && s[1] == '0') {
			width = max(width, len(lhs), len(rhs))
		}
	}
	return width
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// tokenField turns expanded tokens into a field.
func tokenField(t []btok) field {
	var f field
	var text strings.Builder
	kind := segUnquoted
	flush := func() {
		if text.Len() > 0 {
			f = append(f, seg{kind: kind, text: text.String()})
			text.Reset()
		}
	}
	for _, k := range t {
		switch {
		case k.part != nil:
			flush()
			f = append(f, partSegs(k.part)...)
		case k.null:
			flush()
			f = append(f, seg{kind: segQuoted})
		default:
			want := segUnquoted
			if k.esc {
				want = segQuoted
			}
			if want != kind {
				flush()
				kind = want
			}
			text.WriteByte(k.c)
		}
	}
	flush()
	return f
}

// The token algorithm above passes over quoted strings and expansions as
// units. bash's brace_gobbler instead reads the word as written and keeps
// track of quotes itself, and it gets them wrong where a double-quoted
// backquote substitution or ${…} holds a quote of its own, or $'…' an
// escaped one: in "`find "{-exec,x}" …`" bash expands the braces inside
// the substitution and runs find once for each. rawBraces follows
// brace_gobbler on the text as written; where it and the tokens disagree,
// the word is opaque (braceMisread).

// reasonBraces: bash's brace expansion reads quotes in the word otherwise
// than bash's parser.
const reasonBraces = "brace expansion bash reads across quotes"

// braceMisread reports whether bash's own brace expansion of the word as
// written (src) differs from the tokens' (words).
func braceMisread(sc *scope, parts []syntax.WordPart, src string, words [][]btok) bool {
	raw, ok := rawBraces(src)
	if !ok || len(raw) != len(words) {
		return true
	}
	for i, w := range words {
		if renderTokens(sc, w) != raw[i] {
			return true
		}
	}
	return false
}

// renderTokens writes tokens as they were written.
func renderTokens(sc *scope, t []btok) string {
	var b strings.Builder
	for _, k := range t {
		switch {
		case k.part != nil:
			b.WriteString(source(sc, k.part))
		case k.null:
			b.WriteByte('\\')
		case k.esc && !k.lone:
			b.WriteByte('\\')
			b.WriteByte(k.c)
		default:
			b.WriteByte(k.c)
		}
	}
	return b.String()
}

// rawBraces is bash's brace_expand on a word as written.
func rawBraces(text string) ([]string, bool) {
	i, found := rawOpen(text)
	if !found {
		return []string{text}, true
	}
	start := i + 1
	end, _ := rawGobble(text, start, '}')
	amble := text[start:end]
	var tack []string
	ok := true
	if rawHasComma(amble) {
		if tack, ok = rawAmble(amble); !ok {
			return nil, false
		}
	} else if vals, isSeq := sequence(amble); isSeq && vals == nil {
		return nil, false
	} else if tack = vals; tack == nil {
		if end+1 == len(text) {
			return []string{text}, true
		}
		tack = []string{text[start-1 : end+1]}
	}
	result := make([]string, len(tack))
	for k, s := range tack {
		result[k] = text[:i] + s
	}
	if end+1 == len(text) {
		return result, len(result) <= maxFields
	}
	post, ok := rawBraces(text[end+1:])
	if !ok || len(result)*len(post) > maxFields {
		return nil, false
	}
	joined := make([]string, 0, len(result)*len(post))
	for _, r := range result {
		for _, p := range post {
			joined = append(joined, r+p)
		}
	}
	return joined, true
}

// rawOpen finds the `{` that starts the word's first brace expansion:
// the first one a `}` closes.
func rawOpen(text string) (int, bool) {
	for i := 0; ; i++ {
		j, ok := rawGobble(text, i, '{')
		if !ok {
			return 0, false
		}
		if _, ok := rawGobble(text, j+1, '}'); ok {
			return j, true
		}
		i = j
	}
}

// rawHasComma is the amble's comma search: backslash escapes skipped.
func rawHasComma(amble string) bool {
	for j := 0; j < len(amble); j++ {
		switch amble[j] {
		case '\\':
			j++
		case ',':
			return true
		}
	}
	return false
}

// rawAmble is expand_amble on text as written.
func rawAmble(amble string) ([]string, bool) {
	var out []string
	for start := 0; ; {
		j, more := rawGobble(amble, start, ',')
		sub, ok := rawBraces(amble[start:j])
		if !ok || len(out)+len(sub) > maxFields {
			return nil, false
		}
		out = append(out, sub...)
		if !more {
			return out, true
		}
		start = j + 1
	}
}

// rawGobble is brace_gobbler on text as written, quotes as bash 5.2
// tracks them there.
func rawGobble(t string, i int, satisfy byte) (int, bool) {
	level, commas := 0, 1
	if satisfy == '}' {
		commas = 0
	}
	var quoted byte
	for ; i < len(t); i++ {
		if skip, next := rawQuotes(t, i, &quoted, &level); skip {
			i = next
			continue
		}
		c := t[i]
		if c == satisfy && level == 0 && commas > 0 {
			blankBefore := i == 0 || strings.IndexByte(" \t\n", t[i-1]) >= 0
			blankAfter := i+1 >= len(t) || strings.IndexByte(" \t\n}", t[i+1]) >= 0
			if c == '{' && blankBefore && blankAfter {
				continue
			}
			return i, true
		}
		switch {
		case c == '{':
			level++
		case c == '}' && level > 0:
			level--
		case satisfy == '}' && level == 0 && c == ',':
			commas++
		case satisfy == '}' && level == 0 && strings.HasPrefix(t[i:], "..") && (i+2 >= len(t) || t[i+2] != satisfy):
			commas++
		}
	}
	return len(t), false
}

// rawQuotes is brace_gobbler's reading of quotes, escapes and
// substitutions at t[i]: whether the character is passed over, and the
// index of the last one passed.
func rawQuotes(t string, i int, quoted *byte, level *int) (bool, int) {
	c := t[i]
	next := func(k int) byte {
		if k < len(t) {
			return t[k]
		}
		return 0
	}
	switch q := *quoted; {
	case c == '\\' && (q == 0 || q == '"' || q == '`'):
		if q == '"' && next(i+1) == '$' && next(i+2) == '(' { // bash still skips "\$(…)"
			return true, skipComsub(t, i+3)
		}
		return true, i + 1
	case c == '$' && next(i+1) == '{' && q != '\'':
		if q == 0 {
			*level++
		}
		return true, i + 1
	case q == '"' && c == '$' && next(i+1) == '(':
		return true, skipComsub(t, i+2)
	case q != 0:
		if c == q {
			*quoted = 0
		}
		return true, i
	case c == '"' || c == '\'' || c == '`':
		*quoted = c
		return true, i
	case (c == '$' || c == '<' || c == '>') && next(i+1) == '(':
		return true, skipComsub(t, i+2)
	}
	return false, i
}

// skipComsub returns the index of the `)` closing a command substitution
// whose text starts at i, quotes and nested parentheses minded; the end of
// t when there is none.
func skipComsub(t string, i int) int {
	depth := 1
	for ; i < len(t); i++ {
		switch t[i] {
		case '\\':
			i++
		case '\'':
			i = closing(t, i+1, '\'')
		case '"':
			i = closing(t, i+1, '"')
		case '`':
			i = closing(t, i+1, '`')
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(t)
}
