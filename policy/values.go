package policy

import (
	"maps"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Values that bash evaluates (docs/spec.md §9.3 "Evaluated values").
//
// Bash reads a variable's value as code in a few places: arithmetic
// evaluates a name's value as an expression, recursively, and a subscript
// there expands command substitutions (`q='a[$(rm x)]'; (( q ))` runs
// rm); `${!q}`, `[[ -v $q ]]`, `printf -v "$q"` take a value as a name
// with a subscript; `${q@P}` expands a value as a prompt. The text of a
// value is known only when every assignment to it is: so a variable used
// in such a place is safe only when every assignment to it anywhere in
// the command is a plain decimal integer or an arithmetic result. Anything
// else (a string, a command's output, read, a positional parameter, `$_`)
// makes the place opaque. The checker collects the assignments and the
// places while it walks, and decides them at the end (finish), since an
// assignment may come after the place in the text (a loop, a function).

// facts are what the whole command, nested scripts included, assigns
// and evaluates.
type facts struct {
	assigns []assignment
	uses    []evalUse
	refs    map[string]bool // names declared as namerefs (-n)
	ints    map[string]bool // names declared integer (-i): assignments to them are evaluated
	anyName bool            // an assignment to a name nobody can know: any variable may hold anything
}

// assignment is one assignment to a name. value is nil when nobody can
// know it (read, printf -v, a loop over a dynamic list).
type assignment struct {
	name  string
	value *syntax.Word
	text  string // a static value, for the name a nameref points to
	dyn   bool   // the value is not static
	isInt bool   // a plain decimal integer or an arithmetic result
	sc    *scope
	words []string // how a part about it shows it
}

// evalUse is a place whose value bash evaluates, and what it depends on.
type evalUse struct {
	deps  []dep
	sc    *scope
	words []string
}

// dep is a variable an evaluated value depends on, or unknown: a command's
// output, known to nobody before the command runs.
type dep struct {
	name    string
	unknown bool
}

// Why a part is opaque because of a value evaluated as code.
const (
	reasonEvaluated  = "value evaluated as code"
	reasonDynamicRef = statePrefix + "nameref to a dynamic name"
)

// assign records an assignment whose value is the word w (nil: unknown).
func (c *checker) assign(sc *scope, name string, w *syntax.Word, words []string) {
	a := assignment{name: name, value: w, sc: sc, words: words, dyn: true}
	if w != nil {
		a.isInt = isIntWord(w)
		if t, ok := staticWord(w); ok {
			a.text, a.dyn = t, false
		}
	}
	c.facts.assigns = append(c.facts.assigns, a)
}

// assignArg records an assignment of an argument's value (a for loop's
// item, env's NAME=VALUE).
func (c *checker) assignArg(sc *scope, name string, v arg, words []string) {
	c.facts.assigns = append(c.facts.assigns, assignment{name: name, text: v.text, dyn: v.dyn,
		isInt: !v.dyn && isDecimal(v.text), sc: sc, words: words})
}

// assignInt records an assignment of an integer (arithmetic, a descriptor).
func (c *checker) assignInt(sc *scope, name string, words []string) {
	if name == dynName {
		return // some name gets an integer: no variable gets code
	}
	c.facts.assigns = append(c.facts.assigns, assignment{name: name, isInt: true, dyn: true, sc: sc, words: words})
}

// assignUnknown records assignments nobody can read: dynName makes every
// variable unknown.
func (c *checker) assignUnknown(sc *scope, names []string, words []string) {
	for _, n := range names {
		if n == dynName {
			c.facts.anyName = true
			continue
		}
		c.facts.assigns = append(c.facts.assigns, assignment{name: n, dyn: true, sc: sc, words: words})
	}
}

// use records a place whose value bash evaluates.
func (c *checker) use(sc *scope, deps []dep, words []string) {
	if len(deps) > 0 {
		c.facts.uses = append(c.facts.uses, evalUse{deps: deps, sc: sc, words: words})
	}
}

// isDecimal reports whether s is a plain decimal integer.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	return isDigits(s)
}

// isIntWord reports whether a word's value is always an integer: digits
// and arithmetic expansions, quoted or not.
func isIntWord(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	for i, p := range w.Parts {
		if !intPart(p, i == 0) {
			return false
		}
	}
	return true
}

func intPart(p syntax.WordPart, first bool) bool {
	switch p := p.(type) {
	case *syntax.ArithmExp:
		return true
	case *syntax.Lit:
		if first {
			return isDecimal(p.Value)
		}
		return isDigits(p.Value)
	case *syntax.DblQuoted:
		for i, q := range p.Parts {
			if !intPart(q, first && i == 0) {
				return false
			}
		}
		return len(p.Parts) > 0
	}
	return false
}

// arithDeps are the variables an arithmetic expression (or a word bash
// evaluates as one) reads: every name in it, and what its expansions
// expand. A command substitution's output is unknown.
func arithDeps(n syntax.Node) []dep {
	return exprDeps(n, func(s string) []dep { return appendNames(nil, s) })
}

// nameDeps are what a value read as a variable name reads: the
// variables its expansions expand (their values become the name), and
// those of a subscript in its static text.
func nameDeps(a arg) []dep {
	switch {
	case a.word == nil && a.dyn:
		return []dep{{unknown: true}}
	case !a.dyn:
		return subscriptNames(a.text)
	}
	return exprDeps(a.word, subscriptNames)
}

// exprDeps walks the expansions in n: the names they read, unknown for a
// command's output or an indirection (`${!x}` is any variable's value);
// static text gives the names lit finds in it.
func exprDeps(n syntax.Node, lit func(string) []dep) []dep {
	var out []dep
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			out = append(out, dep{unknown: true})
			return false
		case *syntax.ArithmExp:
			return false // an integer here; its own expression is a place of its own
		case *syntax.ParamExp:
			switch {
			case indirect(n):
				out = append(out, dep{unknown: true})
			case n.Param != nil:
				out = append(out, dep{name: n.Param.Value})
			}
		case *syntax.Lit:
			out = append(out, lit(n.Value)...)
		case *syntax.SglQuoted:
			out = append(out, lit(n.Value)...)
		}
		return true
	})
	return out
}

// indirect reports whether a parameter expansion is an indirection,
// `${!x}`: its value is that of the variable x names, a positional
// parameter for an integer x.
func indirect(p *syntax.ParamExp) bool {
	return p.Excl && p.Names == 0 && (p.Index == nil || !allElements(p.Index))
}

// wordNameDeps is nameDeps of a word.
func wordNameDeps(w *syntax.Word) []dep {
	a := arg{word: w, dyn: true}
	if t, ok := staticWord(w); ok {
		a = arg{text: t, word: w}
	}
	return nameDeps(a)
}

// subscriptNames are the names in the subscript of NAME[SUBSCRIPT].
func subscriptNames(s string) []dep {
	i := strings.IndexByte(s, '[')
	if i < 0 {
		return nil
	}
	return appendNames(nil, s[i+1:])
}

// appendNames adds the names in arithmetic text: words that start with a
// letter or _, not the letters of a number (0x1f, 16#ff, 1e3 is 1 and e3).
func appendNames(out []dep, s string) []dep {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9' || c == '#':
			for i < len(s) && (isNameByte(s[i]) || s[i] == '#' || s[i] == '@') {
				i++
			}
		case isNameByte(c):
			j := i
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			out = append(out, dep{name: s[i:j]})
			i = j
		default:
			i++
		}
	}
	return out
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// setByCommands are the variables bash sets from what the command does:
// their values are the command's to choose.
var setByCommands = map[string]bool{
	"_": true, "REPLY": true, "OPTARG": true, "BASH_REMATCH": true, "MAPFILE": true,
	"BASH_ARGV": true, "BASH_ARGV0": true, "BASH_EXECUTION_STRING": true, "BASH_COMMAND": true,
	"FUNCNAME": true, "BASH_SOURCE": true, "PWD": true, "OLDPWD": true, "DIRSTACK": true,
	"COPROC": true, "READLINE_LINE": true, "COMP_LINE": true, "COMP_WORDS": true, "COMPREPLY": true,
	"-": true, "@": true, "*": true, "0": true,
}

// safeSpecial are special parameters that are always integers.
var safeSpecial = map[string]bool{"#": true, "?": true, "$": true, "!": true}

// finish decides what only the whole command tells: the places that
// evaluate a value nobody can know, and assignments through namerefs.
func (c *checker) finish() {
	f := &c.facts
	if len(f.uses) == 0 && len(f.refs) == 0 && len(f.ints) == 0 {
		return
	}
	unsafe := map[string]bool{}
	for _, a := range f.assigns {
		if f.ints[a.name] {
			// Evaluated if the name is an integer by then; kept as it is
			// if the declaration comes later, or never runs.
			deps := []dep{{unknown: true}}
			if a.value != nil {
				deps = arithDeps(a.value)
			}
			c.use(a.sc, deps, a.words)
		}
		if !a.isInt {
			unsafe[a.name] = true
		}
	}
	c.namerefs(unsafe)
	seen := map[string]bool{}
	for _, u := range f.uses {
		key := strings.Join(u.words, " ")
		if !seen[key] && c.unknownDeps(u.deps, unsafe) {
			seen[key] = true
			c.opaquePart(u.sc, u.words, reasonEvaluated)
		}
	}
}

// unknownDeps reports whether an evaluated value may hold anything.
func (c *checker) unknownDeps(deps []dep, unsafe map[string]bool) bool {
	for _, d := range deps {
		switch {
		case d.unknown, setByCommands[d.name], isDigits(d.name):
			return true
		case safeSpecial[d.name]:
		case c.facts.anyName || unsafe[d.name]:
			return true
		}
	}
	return false
}

// namerefs checks the assignments to namerefs: each value may become the
// name it points to (`declare -n r; r=PATH; r=/tmp` assigns PATH), so a
// dynamic one is opaque, a loader name is an assignment to it, and a
// subscript in it is evaluated whenever the nameref is used. Every value
// assigned to the nameref may be the value of every name it points to.
func (c *checker) namerefs(unsafe map[string]bool) {
	f := &c.facts
	for _, r := range slices.Sorted(maps.Keys(f.refs)) { // in one order: the parts are shown in it
		var targets []string
		dirty := false
		for _, a := range f.assigns {
			if a.name != r {
				continue
			}
			dirty = dirty || !a.isInt
			switch {
			case a.dyn && !a.isInt:
				c.opaquePart(a.sc, a.words, reasonDynamicRef)
				f.anyName = true
			case a.dyn:
			default:
				t := refTarget(static(a.text))
				targets = append(targets, t)
				if isLoader(t) && c.p.HasAskOrDeny() {
					c.opaquePart(a.sc, a.words, loaderReason(t)+" through nameref "+r)
				}
				c.use(a.sc, subscriptNames(a.text), a.words)
			}
		}
		for _, t := range targets {
			unsafe[t] = unsafe[t] || dirty
		}
		if dirty {
			unsafe[r] = true
		}
	}
}
