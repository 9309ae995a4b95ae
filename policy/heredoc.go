package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Where bash and the parser end a here-document differently, what follows
// the body is read by one as data and by the other as commands
// (`cat <<EOF` … `EO\` `F` … `rm x` … `EOF`: bash joins the split line,
// ends the body there and runs rm). Such a here-document is opaque.
const reasonHeredoc = "here-document bash ends elsewhere"

// heredocMisread says why bash may end the here-document of r elsewhere
// than the parser did, or "".
func heredocMisread(sc *scope, r *syntax.Redirect) string {
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		return ""
	}
	delim, quoted, ok := heredocDelimiter(r.Word)
	if !ok {
		return reasonHeredoc // a delimiter bash decodes ($'…', $"…") or expands
	}
	body := rawBody(sc, r)
	if body == "" {
		return ""
	}
	if !quoted && strings.Contains(body, "\\\n") {
		body = strings.ReplaceAll(body, "\\\n", "") // bash joins the lines before it compares
	}
	for line := range strings.Lines(body) {
		line = strings.TrimSuffix(line, "\n")
		if r.Op == syntax.DashHdoc {
			line = strings.TrimLeft(line, "\t")
		}
		// bash 5.2 also ends a body inside $( ) at a line `EOF)`.
		if line == delim || strings.HasPrefix(line, delim+")") {
			return reasonHeredoc
		}
	}
	return ""
}

// heredocDelimiter is the delimiter as bash compares it: the word with its
// quotes removed, whether it had any, and ok false for a word with an
// expansion or an ANSI-C string, which bash and the parser may read apart.
func heredocDelimiter(w *syntax.Word) (delim string, quoted, ok bool) {
	if w == nil {
		return "", false, false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			quoted = quoted || strings.Contains(p.Value, `\`)
			b.WriteString(strings.ReplaceAll(p.Value, `\`, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false, false
			}
			quoted = true
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false, false
			}
			quoted = true
			for _, q := range p.Parts {
				l, isLit := q.(*syntax.Lit)
				if !isLit {
					return "", false, false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false, false
		}
	}
	return b.String(), quoted, true
}

// rawBody is a here-document's body as written, without the line that
// ended it for the parser (its end position is that line's), "" when it
// is empty or its place is not known.
func rawBody(sc *scope, r *syntax.Redirect) string {
	if r.Hdoc == nil || !r.Hdoc.Pos().IsValid() {
		return ""
	}
	start, end := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
	if start < 0 || start > end || end > len(sc.src) {
		return ""
	}
	body := sc.src[start:end]
	if i := strings.LastIndexByte(body, '\n'); i >= 0 {
		return body[:i+1]
	}
	return ""
}
