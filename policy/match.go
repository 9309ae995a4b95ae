package policy

import (
	"path"
	"strings"
)

// match reports whether the rule matches a part's arguments
// (docs/spec.md §9.2). With may false a dynamic argument is matched only
// by what matches anything (a whole-word `*`, or a `*` spanning it), so a
// match holds whatever the argument turns out to be. With may true a
// dynamic argument stands for any words: a match says the part may match
// (docs/spec.md §9.3 "Dynamic words and rules").
func (c *compiled) match(args []arg, may bool) bool {
	if len(args) == 0 || c.rejectsName(args[0]) {
		return false
	}
	if c.str != nil {
		return c.matchJoined(args, may)
	}
	return c.matchWords(args, may)
}

// rejectsName is the cheap test that rules most rules out: a literal first
// word against a static command name.
func (c *compiled) rejectsName(name arg) bool {
	if name.dyn {
		return false
	}
	if c.str != nil {
		return !headAllows(c.head, base(name.text))
	}
	return c.name != "" && !c.nameEq(c.words[0], name.text)
}

// headAllows reports whether a joined subject starting " NAME " could
// start with head, the rule's literal beginning.
func headAllows(head, name string) bool {
	s := " " + name + " "
	n := min(len(s), len(head))
	return s[:n] == head[:n]
}

// nameEq compares the rule's first word with a command name: by basename
// for deny and ask rules, as written for allow rules, or as a path when the
// allow rule's first word has a `/` (then the name must have one too:
// `x` is looked up in PATH, `./x` is not).
func (c *compiled) nameEq(w pword, name string) bool {
	if !w.literal() {
		return glob(w.lits, name)
	}
	if c.rule.Kind != KindAllow {
		return c.name == base(name)
	}
	if c.slash {
		return strings.Contains(name, "/") && path.Clean(c.name) == path.Clean(name)
	}
	return c.name == name
}

// matchWords matches word by word: a search over (rule word, argument)
// positions, where a whole-word `*` takes any number of arguments and, in
// may mode, a dynamic argument that may be several words takes any number
// of rule words.
func (c *compiled) matchWords(args []arg, may bool) bool {
	m, n := len(c.words), len(args)
	seen := make([]bool, (m+1)*(n+1))
	stack := []int{0}
	push := func(i, j int) {
		if k := i*(n+1) + j; !seen[k] {
			seen[k] = true
			stack = append(stack, k)
		}
	}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j := k/(n+1), k%(n+1)
		if i == m && j == n {
			return true
		}
		star := i < m && c.words[i].star()
		if star {
			push(i+1, j)
			if j < n {
				push(i, j+1)
			}
		}
		if may && j < n && args[j].multi {
			push(i, j+1)
			if i < m && !star {
				push(i+1, j)
			}
		}
		if i < m && j < n && !star && c.wordEq(i, j, args[j], may) {
			push(i+1, j+1)
		}
	}
	return false
}

// wordEq matches one rule word (not a whole-word star) with one argument.
func (c *compiled) wordEq(i, j int, a arg, may bool) bool {
	if a.dyn {
		return may
	}
	w := c.words[i]
	switch {
	case i == 0 && j == 0:
		return c.nameEq(w, a.text)
	case w.literal():
		return w.lits[0] == a.text
	}
	return glob(w.lits, a.text)
}

// glob matches s against literal pieces separated by stars.
func glob(lits []string, s string) bool {
	if len(lits) == 1 {
		return lits[0] == s
	}
	first, last := lits[0], lits[len(lits)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, l := range lits[1 : len(lits)-1] {
		i := strings.Index(s, l)
		if i < 0 {
			return false
		}
		s = s[i+len(l):]
	}
	return true
}

// Joined matching: a deny or ask rule with a `*` inside a word matches the
// arguments joined by single spaces, as Claude Code does. Rule and subject
// are small automata over bytes, both padded with a space at each end, so
// that a whole-word `*` is "nothing, or any text followed by a space" and
// zero arguments leave no double space.

// NFA operations; every state's successor is the next state.
const (
	opByte  uint8 = iota // consume the byte c
	opAny                // consume anything and stay, or move on without consuming
	opSplit              // move on, or jump to alt, without consuming
	opHole               // subject only: a dynamic word, consumed only by opAny
)

type nstate struct {
	op  uint8
	c   byte
	alt int32
}

type strNFA []nstate

// buildRuleNFA makes the automaton of a rule's words, the first word by
// basename, and returns its literal beginning for the cheap test.
func buildRuleNFA(words []pword) (strNFA, string) {
	n := strNFA{{op: opByte, c: ' '}}
	for k, w := range words {
		if w.star() {
			split := len(n)
			n = append(n, nstate{op: opSplit}, nstate{op: opAny}, nstate{op: opByte, c: ' '})
			n[split].alt = int32(len(n))
			continue
		}
		for i, lit := range w.lits {
			if i > 0 {
				n = append(n, nstate{op: opAny})
			}
			if k == 0 && i == 0 {
				lit = base(lit)
			}
			n = appendBytes(n, lit)
		}
		n = append(n, nstate{op: opByte, c: ' '})
	}
	var head []byte
	for _, s := range n {
		if s.op != opByte {
			break
		}
		head = append(head, s.c)
	}
	return n, string(head)
}

func appendBytes(n strNFA, s string) strNFA {
	for i := 0; i < len(s); i++ {
		n = append(n, nstate{op: opByte, c: s[i]})
	}
	return n
}

// matchJoined matches the rule's automaton against the joined arguments.
func (c *compiled) matchJoined(args []arg, may bool) bool {
	dyn, multi := false, false
	for _, a := range args {
		dyn = dyn || a.dyn
		multi = multi || a.multi
	}
	switch {
	case !dyn:
		return c.str.run(joined(args, false))
	case may:
		return c.str.intersects(subjectNFA(args))
	}
	// Definite: the dynamic words are holes only a `*` may take, and a word
	// that may be no word at all must also match when it is none.
	if !c.str.run(joined(args, false)) {
		return false
	}
	return !multi || c.str.run(joined(args, true))
}

// hole stands for a dynamic word in a joined subject.
const hole = 256

// joined returns the subject " a0 a1 … " as tokens, the command name by
// basename and each dynamic word a hole (or nothing, with dropMulti, for
// one that may be no word).
func joined(args []arg, dropMulti bool) []uint16 {
	out := []uint16{' '}
	for i, a := range args {
		switch {
		case a.multi && dropMulti:
			continue
		case a.dyn:
			out = append(out, hole)
		default:
			t := a.text
			if i == 0 {
				t = base(t)
			}
			for j := 0; j < len(t); j++ {
				out = append(out, uint16(t[j]))
			}
		}
		out = append(out, ' ')
	}
	return out
}

// run simulates the automaton on a subject without choices.
func (n strNFA) run(subject []uint16) bool {
	cur := make([]bool, len(n)+1)
	next := make([]bool, len(n)+1)
	n.add(cur, 0)
	for _, t := range subject {
		clear(next)
		alive := false
		for s, on := range cur {
			if !on || s == len(n) {
				continue
			}
			switch st := n[s]; {
			case st.op == opAny:
				n.add(next, s)
				alive = true
			case st.op == opByte && uint16(st.c) == t:
				n.add(next, s+1)
				alive = true
			}
		}
		if !alive {
			return false
		}
		cur, next = next, cur
	}
	return cur[len(n)]
}

// add puts state s and what it reaches without consuming into set.
func (n strNFA) add(set []bool, s int) {
	for {
		if set[s] {
			return
		}
		set[s] = true
		if s == len(n) {
			return
		}
		switch n[s].op {
		case opSplit:
			n.add(set, int(n[s].alt))
			s++
		case opAny:
			s++
		default:
			return
		}
	}
}

// subjectNFA makes the automaton of a subject whose dynamic words may be
// anything: any text, and for a word that may be several words, also none.
func subjectNFA(args []arg) strNFA {
	n := strNFA{{op: opByte, c: ' '}}
	for i, a := range args {
		switch {
		case a.multi:
			split := len(n)
			n = append(n, nstate{op: opSplit}, nstate{op: opAny}, nstate{op: opByte, c: ' '})
			n[split].alt = int32(len(n))
			continue
		case a.dyn:
			n = append(n, nstate{op: opAny})
		case i == 0:
			n = appendBytes(n, base(a.text))
		default:
			n = appendBytes(n, a.text)
		}
		n = append(n, nstate{op: opByte, c: ' '})
	}
	return n
}

// maxProduct bounds the search of intersects; beyond it the answer is yes,
// the cautious one for deny and ask rules.
const maxProduct = 1 << 22

// intersects reports whether some text is accepted by both automata: a
// search over pairs of states.
func (n strNFA) intersects(s strNFA) bool {
	R, S := len(n)+1, len(s)+1
	if R*S > maxProduct {
		return true
	}
	seen := make([]bool, R*S)
	stack := []int{0}
	seen[0] = true
	push := func(r, q int) {
		if k := r*S + q; !seen[k] {
			seen[k] = true
			stack = append(stack, k)
		}
	}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r, q := k/S, k%S
		if r == len(n) && q == len(s) {
			return true
		}
		n.epsilons(r, func(r2 int) { push(r2, q) })
		s.epsilons(q, func(q2 int) { push(r, q2) })
		if r == len(n) || q == len(s) {
			continue
		}
		switch a, b := n[r], s[q]; {
		case a.op == opByte && b.op == opByte && a.c == b.c:
			push(r+1, q+1)
		case a.op == opByte && b.op == opAny:
			push(r+1, q)
		case a.op == opAny && b.op == opByte:
			push(r, q+1)
		}
	}
	return false
}

// epsilons calls f with each state s moves to without consuming.
func (n strNFA) epsilons(s int, f func(int)) {
	if s == len(n) {
		return
	}
	switch n[s].op {
	case opSplit:
		f(s + 1)
		f(int(n[s].alt))
	case opAny:
		f(s + 1)
	}
}
