package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// quotedCode checks static text that bash may run later: an array
// subscript in `[ -v 'a[$(cmd)]' ]`, `printf -v`, `$((x))`, `${!x}`,
// `${x@P}` or PS4 expands what it holds as if in double quotes
// (docs/spec.md §9.3 "Quoted code"). The text is read as a here-document
// body (which finds $(…) and backquotes, as bash does there) and, when it
// holds <( or >(, as a script. What runs there counts only when a deny or
// ask rule matches it (then it may match) or it is opaque. Text that ends
// inside a construct is ignored: bash cannot run it either.
func (c *checker) quotedCode(sc *scope, text string) {
	doc := strings.Contains(text, "$(") || strings.Contains(text, "`")
	proc := strings.Contains(text, "<(") || strings.Contains(text, ">(")
	if !doc && !proc {
		return
	}
	inner := &scope{src: hideCR(text), depth: sc.depth + 1, quoted: true}
	if sc.depth >= maxDepth {
		c.opaquePart(inner, []string{text}, reasonDepth)
		return
	}
	if why := tooBig(text); why != "" {
		c.opaquePart(inner, []string{text}, why)
		return
	}
	if doc {
		w, err := newParser().Document(strings.NewReader(inner.src))
		c.quotedParsed(inner, text, w, err, true)
	}
	if proc {
		f, err := newParser().Parse(strings.NewReader(inner.src), "")
		c.quotedParsed(inner, text, f, err, !doc)
	}
}

// quotedParsed walks the substitutions of parsed quoted code; cmdSubst
// false leaves command substitutions to the here-document reading.
func (c *checker) quotedParsed(sc *scope, text string, n syntax.Node, err error, cmdSubst bool) {
	switch {
	case err != nil && syntax.IsIncomplete(err):
	case err != nil:
		c.opaquePart(sc, []string{text}, reasonParse)
	default:
		syntax.Walk(n, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CmdSubst:
				if cmdSubst {
					c.stmts(sc, n.Stmts, false)
				}
				return !cmdSubst
			case *syntax.ProcSubst:
				c.stmts(sc, n.Stmts, false)
				return false
			}
			return true
		})
	}
}
