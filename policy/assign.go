package policy

import (
	"strings"

	"github.com/dsh-go/dsh/internal/lazyre"
	"mvdan.cc/sh/v3/syntax"
)

// dynName stands for an assigned name the policy cannot know
// (`declare "$x"`, `read "$v"`): it may be any name, a loader one included.
const dynName = ""

// loaderNames change what later commands run or load (docs/spec.md §9.3
// "State for later commands"). BASH_CMDS and BASH_ALIASES are bash's
// command hash table and alias table (an element assigned is `hash -p` or
// `alias` by another name), and POSIXLY_CORRECT puts bash in POSIX mode,
// where aliases expand.
var loaderNames = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "PS4": true, "PROMPT_COMMAND": true,
	"SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "BASH_LOADABLES_PATH": true,
	"EXECIGNORE": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"BASH_CMDS": true, "BASH_ALIASES": true, "POSIXLY_CORRECT": true,
}

// isLoader reports whether assigning name may change what later commands
// run. BASH_FUNC_* names (given to env) define functions in a child bash,
// so they count too.
func isLoader(name string) bool {
	return loaderNames[name] || strings.HasPrefix(name, "BASH_FUNC_")
}

// loaderName returns the first loader name assigned ("$?" for a dynamic
// one), or "".
func loaderName(names []string) string {
	for _, n := range names {
		switch {
		case n == dynName:
			return "$?"
		case isLoader(n):
			return n
		}
	}
	return ""
}

func loaderReason(name string) string {
	if name == "$?" {
		return statePrefix + "assignment to a dynamic name"
	}
	return statePrefix + "assignment to " + name
}

// safeNames may be assigned in front of a command without taking its
// allow rules away (docs/spec.md §9.3 "Assignments").
var safeNames = map[string]bool{
	"LANG": true, "TZ": true, "NO_COLOR": true, "FORCE_COLOR": true, "TERM": true, "CI": true,
	"NODE_ENV": true, "RUST_BACKTRACE": true, "RUST_LOG": true, "PYTHONUNBUFFERED": true, "DEBUG": true,
}

// safeAssigns reports whether every name is on the safe list.
func safeAssigns(names []string) bool {
	for _, n := range names {
		if !safeNames[n] && !strings.HasPrefix(n, "LC_") {
			return false
		}
	}
	return true
}

// assignNames returns the names of leading assignments.
func assignNames(as []*syntax.Assign) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		if a.Name != nil {
			out = append(out, a.Name.Value)
		}
	}
	return out
}

// arithNames returns the names arithmetic assigns in a node
// (`(( PATH=1 ))`, `$((IFS++))`), dynName for one it cannot name.
// Substitutions run in a subshell, so their assignments do not count.
func arithNames(n syntax.Node) []string {
	var out []string
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.BinaryArithm:
			if arithAssignOps[n.Op] {
				out = append(out, arithTarget(n.X))
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				out = append(out, arithTarget(n.X))
			}
		}
		return true
	})
	return out
}

// arithAssignOps are the arithmetic operators that assign.
var arithAssignOps = map[syntax.BinAritOperator]bool{
	syntax.Assgn: true, syntax.AddAssgn: true, syntax.SubAssgn: true, syntax.MulAssgn: true,
	syntax.QuoAssgn: true, syntax.RemAssgn: true, syntax.AndAssgn: true, syntax.OrAssgn: true,
	syntax.XorAssgn: true, syntax.ShlAssgn: true, syntax.ShrAssgn: true, syntax.AndBoolAssgn: true,
	syntax.OrBoolAssgn: true, syntax.XorBoolAssgn: true, syntax.PowAssgn: true,
}

// arithTarget names what arithmetic assigns to: a name, or an array
// element (a[i]).
func arithTarget(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return dynName
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return p.Value
	case *syntax.ParamExp:
		if p.Param != nil && !p.Dollar.IsValid() {
			return p.Param.Value
		}
	}
	return dynName
}

// isOptionWith reports whether a is an option cluster (-xn) holding c.
func isOptionWith(a arg, c byte) bool {
	t := a.text
	return !a.dyn && len(t) > 1 && (t[0] == '-' || t[0] == '+') && t[1] != '-' && strings.IndexByte(t[1:], c) >= 0
}

// nameAssign matches NAME=, NAME+=, NAME[…]= at the start of a word.
var nameAssign = lazyre.New(`^([A-Za-z_][A-Za-z0-9_]*)(\[[^]]*\])?\+?=`)

// declaredName returns the name a declaration argument assigns: NAME=…
// (written quoted, so not parsed as an assignment), or dynName for a
// dynamic word, which may be one.
func declaredName(a arg) []string {
	if a.dyn {
		return []string{dynName}
	}
	if m := nameAssign().FindStringSubmatch(a.text); m != nil {
		return []string{m[1]}
	}
	return nil
}

// refTarget is the name a nameref's value points to.
func refTarget(v arg) string {
	if v.dyn {
		return dynName
	}
	if i := strings.IndexByte(v.text, '['); i >= 0 {
		return v.text[:i]
	}
	return v.text
}
