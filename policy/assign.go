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
// where aliases expand. The rest make a later program run a command or
// load code: pagers, editors, less's preprocessors, askpass helpers,
// interpreters' start-up options, compilers and wrappers that build
// tools run, and HOME and XDG_CONFIG_HOME, where git and most tools find
// the configuration that names such commands.
var loaderNames = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "PS4": true, "PROMPT_COMMAND": true,
	"SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "BASH_LOADABLES_PATH": true,
	"EXECIGNORE": true, "BASH_CMDS": true, "BASH_ALIASES": true, "POSIXLY_CORRECT": true,
	"PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "EDITOR": true, "VISUAL": true,
	"SUDO_EDITOR": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true, "BROWSER": true, "SHELL": true,
	"HOME": true, "XDG_CONFIG_HOME": true, "NODE_OPTIONS": true, "PYTHONSTARTUP": true,
	"PYTHONPATH": true, "PYTHONHOME": true, "PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true,
	"RUBYOPT": true, "RUBYLIB": true, "GOFLAGS": true, "RUSTC_WRAPPER": true, "RUSTC": true,
	"CC": true, "CXX": true, "MAKEFLAGS": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true,
}

// loaderPrefixes are families of such names: git's (GIT_EXTERNAL_DIFF,
// GIT_SSH_COMMAND, GIT_CONFIG_*, …), the dynamic loader's, less's
// (LESSOPEN, LESSCLOSE, LESS, …), npm's and cargo's configuration, and
// BASH_FUNC_ (functions given to a child bash).
var loaderPrefixes = []string{"GIT_", "LD_", "DYLD_", "LESS", "BASH_FUNC_", "CARGO_"}

// isLoader reports whether assigning name may change what later commands
// run. npm reads its configuration from any case of npm_config_.
func isLoader(name string) bool {
	if loaderNames[name] || strings.HasPrefix(strings.ToLower(name), "npm_config_") {
		return true
	}
	for _, p := range loaderPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
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

// exprAssigns returns the names that arithmetic and expansions assign in
// a node (`(( PATH=1 ))`, `$((IFS++))`, `${PATH:=x}`, `${BASH_CMDS[ls]=…}`),
// dynName for one it cannot name, and records the assignments (shown as
// shown). Substitutions run in a subshell, so their assignments do not
// count.
func (c *checker) exprAssigns(sc *scope, n syntax.Node, shown []string) []string {
	var out []string
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.BinaryArithm:
			if arithAssignOps[n.Op] {
				out = append(out, arithTarget(n.X))
				c.assignInt(sc, out[len(out)-1], shown)
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				out = append(out, arithTarget(n.X))
				c.assignInt(sc, out[len(out)-1], shown)
			}
		case *syntax.ParamExp:
			if n.Exp != nil && n.Param != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				out = append(out, n.Param.Value)
				c.assign(sc, n.Param.Value, n.Exp.Word, shown)
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
