package redact

import (
	"regexp/syntax"
	"unicode/utf8"
)

// The end of a text is open when the stream goes on after it unseen (a
// head, a read so far): a rule's match there may not be decided yet. Go's
// regexp cannot say so, so a rule's expression is also compiled to a
// program that undecided runs over: a Pike machine that follows every way
// the expression can go, in regexp's order (leftmost-first), and at the
// end of the text reports whether a way is still alive that ranks above
// any match found. Then more text could still make or change the match.

// program compiles expr for undecided; it panics on an expression that
// regexp.MustCompile accepted, which cannot happen.
func program(expr string) *syntax.Prog {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		panic(err)
	}
	return prog
}

// thread is one way through the program: where it is, and where the
// capture group that is the secret started in it (-1: not yet).
type thread struct {
	pc     uint32
	secret int
}

// machine runs one program over one text.
type machine struct {
	prog  *syntax.Prog
	group int      // the secret's capture group; 0 is the whole match
	seen  []uint32 // the step that last added each pc
	step  uint32
}

// undecided runs prog, anchored, over s, whose end is open. alive: a way
// through the program is still going at the end of s, ranking above any
// match found, so text after s could make the match or make it longer.
// secret is then the earliest start of group among those ways (-1: none
// has reached it). end is where the match found ends, -1 for none.
func undecided(prog *syntax.Prog, group int, s string) (alive bool, secret, end int) {
	m := machine{prog: prog, group: group, seen: make([]uint32, len(prog.Inst)), step: 1}
	start := -1
	if group == 0 {
		start = 0
	}
	cur := m.add(nil, uint32(prog.Start), start, 0, flags(s, 0))
	var next []thread
	end = -1
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		m.step++
		next = next[:0]
		at := flags(s, i+w)
		for _, t := range cur {
			if m.consumes(t.pc, r) {
				next = m.add(next, m.prog.Inst[t.pc].Out, t.secret, i+w, at)
			} else if m.prog.Inst[t.pc].Op == syntax.InstMatch {
				end = i // the ways that rank below a match are cut
				break
			}
		}
		cur, next = next, cur
		i += w
		if len(cur) == 0 {
			return false, -1, end
		}
	}
	secret = -1
	for _, t := range cur {
		if m.prog.Inst[t.pc].Op == syntax.InstMatch {
			end = len(s)
			break
		}
		alive = true
		if t.secret >= 0 && (secret < 0 || t.secret < secret) {
			secret = t.secret
		}
	}
	return alive, secret, end
}

// consumes reports whether the instruction at pc takes r.
func (m *machine) consumes(pc uint32, r rune) bool {
	in := &m.prog.Inst[pc]
	switch in.Op {
	case syntax.InstRune, syntax.InstRune1:
		return in.MatchRune(r)
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}

// add puts the ways from pc at position pos on list, in rank order,
// following the instructions that take no text; at is what holds there.
func (m *machine) add(list []thread, pc uint32, secret, pos int, at syntax.EmptyOp) []thread {
	if m.seen[pc] == m.step {
		return list
	}
	m.seen[pc] = m.step
	in := &m.prog.Inst[pc]
	switch in.Op {
	case syntax.InstAlt, syntax.InstAltMatch:
		list = m.add(list, in.Out, secret, pos, at)
		return m.add(list, in.Arg, secret, pos, at)
	case syntax.InstCapture:
		if m.group > 0 && int(in.Arg) == 2*m.group {
			secret = pos
		}
		return m.add(list, in.Out, secret, pos, at)
	case syntax.InstNop:
		return m.add(list, in.Out, secret, pos, at)
	case syntax.InstEmptyWidth:
		if syntax.EmptyOp(in.Arg)&^at == 0 {
			return m.add(list, in.Out, secret, pos, at)
		}
		return list
	case syntax.InstFail:
		return list
	}
	return append(list, thread{pc, secret})
}

// flags is what holds at position i of s. At the end, which is open, it
// is what could hold with some character after it: never the end of the
// text.
func flags(s string, i int) syntax.EmptyOp {
	before := rune(-1)
	if i > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return syntax.EmptyOpContext(before, r)
	}
	var any syntax.EmptyOp
	for _, next := range []rune{'a', ' ', '\n'} {
		any |= syntax.EmptyOpContext(before, next)
	}
	return any
}
