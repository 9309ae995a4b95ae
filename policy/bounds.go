package policy

import "strings"

// Bounds on what is parsed at all (docs/spec.md §9.3 "Bad input"). The
// parser's tree costs some 300 bytes a node and the walk recurses as deep
// as the tree, so a command longer than maxCommand, whose brackets nest
// deeper than maxNesting, or that would make more than maxNodes nodes is
// one opaque part, decided without parsing: hostile input costs bounded
// time and memory. No command a person or a model writes comes near them.
const (
	maxCommand = 1 << 20 // bytes
	maxNesting = 256     // ( { [ and backquotes
	maxNodes   = 20000   // words, operators and separators, quotes and here-document bodies not counted
)

// Why a command is not parsed.
const (
	reasonTooLong  = "command longer than 1 MiB"
	reasonTooDeep  = "brackets nested deeper than 256"
	reasonTooLarge = "more than 20000 words and operators"
)

// tooBig says why text is not to be parsed, or "".
func tooBig(text string) string {
	switch {
	case len(text) > maxCommand:
		return reasonTooLong
	case nesting(text) > maxNesting:
		return reasonTooDeep
	case nodes(text) > maxNodes:
		return reasonTooLarge
	}
	return ""
}

// nesting is how deep the brackets of text nest, quotes not minded: an
// upper bound of how deep the parser recurses into them.
func nesting(text string) int {
	depth, deepest, backquoted := 0, 0, false
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth = max(depth-1, 0)
		case '`':
			if backquoted = !backquoted; backquoted {
				depth++
			} else {
				depth = max(depth-1, 0)
			}
		}
		deepest = max(deepest, depth)
	}
	return deepest
}

// nodeChars each start a node of the tree, or a chain one deeper (`~`,
// `!`, `-` are unary operators, which nest).
const nodeChars = ";|&()!<>=+-*/%^~,?:[]{}$`\n"

// nodes estimates how many nodes the parser would make of text: words,
// operators and separators, but inside double quotes and here-document
// bodies only those of their expansions, since the rest is one node, and
// none inside single quotes.
// It is a lexer's guess, not a parse: a wrong guess costs memory or an
// ask, never a missed part.
func nodes(text string) int {
	n := 0
	var pending []string // delimiters of here-documents whose bodies come after this line
	expanded := false    // one of them expands its body
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\':
			i++
		case c == '\'':
			i = closing(text, i+1, '\'')
			n++
		case c == '"':
			end := closing(text, i+1, '"')
			n += 1 + expansionNodes(text[i+1:end])
			i = end
		case c == '<' && strings.HasPrefix(text[i:], "<<") && !strings.HasPrefix(text[i:], "<<<"):
			delim, quoted, end := heredocDelim(text, i+2)
			pending = append(pending, delim)
			expanded = expanded || !quoted
			n, i = n+2, end-1
		case c == '\n' && len(pending) > 0:
			end := skipBodies(text, i+1, pending)
			if n++; expanded {
				n += expansionNodes(text[i:end])
			}
			i, pending, expanded = end-1, nil, false
		case strings.IndexByte(nodeChars, c) >= 0:
			n++
		case (c == ' ' || c == '\t') && i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\t':
			n++
		}
	}
	return n
}

// expansionNodes counts the nodes of the expansions in quoted text or a
// here-document body: inside `$(…)`, `${…}`, `$((…))` and backquotes as
// nodes does; the text around them is one node.
func expansionNodes(s string) int {
	n, depth, backquoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
		case c == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			depth++
			n, i = n+1, i+1
		case c == '`':
			backquoted = !backquoted
			n++
		case depth == 0 && !backquoted:
		case c == ')' || c == '}':
			depth = max(depth-1, 0)
			n++
		case c == '(' || c == '{':
			depth++
			n++
		case strings.IndexByte(nodeChars, c) >= 0 || c == ' ':
			n++
		}
	}
	return n
}

// closing is the index of the quote that closes a string opened before
// i (backslashes escape in double quotes), or the end of text.
func closing(text string, i int, q byte) int {
	for ; i < len(text); i++ {
		switch {
		case text[i] == q:
			return i
		case q == '"' && text[i] == '\\':
			i++
		}
	}
	return len(text)
}

// heredocDelim reads a here-document's delimiter word at i (after `<<`):
// the word without quotes, whether it had any, and where it ends.
func heredocDelim(text string, i int) (delim string, quoted bool, end int) {
	if i < len(text) && text[i] == '-' {
		i++
	}
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	var b strings.Builder
	for ; i < len(text) && strings.IndexByte(" \t\n;|&<>()", text[i]) < 0; i++ {
		if strings.IndexByte(`'"\`, text[i]) < 0 {
			b.WriteByte(text[i])
		} else {
			quoted = true
		}
	}
	return b.String(), quoted, i
}

// skipBodies skips here-document bodies starting at i, each ending with
// a line that is its delimiter (leading tabs allowed, for <<-).
func skipBodies(text string, i int, delims []string) int {
	for _, d := range delims {
		for i < len(text) {
			end := strings.IndexByte(text[i:], '\n')
			line := text[i:]
			if end >= 0 {
				line = text[i : i+end]
			}
			i += len(line) + 1
			if strings.TrimLeft(line, "\t") == d {
				break
			}
		}
	}
	return min(i, len(text))
}
