package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/internal/lazyre"
)

// bashLike shells run `-c SCRIPT` in a language the policy parses
// (docs/spec.md §9.3 "Shells"); otherShells run one it does not.
var (
	bashLike    = []string{"bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "posh", "yash", "rbash"}
	otherShells = []string{"fish", "csh", "tcsh", "pwsh", "nu", "elvish", "xonsh"}
)

func isBashLike(name string) bool { return slices.Contains(bashLike, name) }

// shellInfo are the options with which a shell prints and runs nothing.
var shellInfo = []string{"--version", "--help", "-version", "-help", "-v", "-V", "-h"}

// shellOptions are the option letters bash takes when invoked, and
// shellLong its long options (true: takes the next word).
const shellOptions = "abcefhiklmnoprstuvxBCDEHOPT"

var shellLong = map[string]bool{
	"--debug": false, "--debugger": false, "--dump-po-strings": false, "--dump-strings": false,
	"--help": false, "--login": false, "--noediting": false, "--noprofile": false, "--norc": false,
	"--posix": false, "--pretty-print": false, "--restricted": false, "--verbose": false,
	"--version": false, "--init-file": true, "--rcfile": true,
}

// shellStep reads a bash-like shell: -c (alone or in a cluster, -ec) runs
// the script that follows the options; -i, -l and --login read rc files;
// with no script operand the shell reads one from stdin; a script file is
// an ordinary command unless it is stdin or a descriptor in disguise. An
// option bash does not know is not understood: shells differ there, and a
// script taken for an option (`bash -c '+x…'`) must not go unread.
func shellStep(c *checker, u *unit, args []arg) step {
	st := shellRun(c, u, args)
	st.shell = aliasShell
	if name := base(args[0].text); (name == "bash" || name == "rbash") && !u.runAsSh {
		st.shell = bashShell
	}
	return st
}

// shellRun is shellStep but for the aliases of the scripts.
func shellRun(c *checker, u *unit, args []arg) step {
	o, i, st := readShellOptions(args)
	if st.opaque != "" {
		return st
	}
	login := o.login || u.asLogin
	switch {
	case login && o.c:
		st := scriptArg(c, args, i, true)
		if st.opaque == "" {
			st.opaque = reasonLogin
		}
		return st
	case login:
		return step{opaque: reasonLogin}
	case o.c:
		return scriptArg(c, args, i, true)
	case o.info && i >= len(args):
		return step{}
	case (o.s || i >= len(args)) && u.stdin != nil:
		c.skipHeredoc(u.stdin.redir)
		return step{scripts: []string{u.stdin.text}, transparent: true}
	case o.s || i >= len(args):
		return step{opaque: reasonNoScript}
	}
	return scriptFile(args[i])
}

// shellFlags are the options of a shell's invocation that matter here.
type shellFlags struct {
	login, c, s, info bool
}

// readShellOptions reads a shell's options up to its first operand: the
// flags, the index of the operand, and an opaque step for an option that
// makes the shell impossible to check.
func readShellOptions(args []arg) (shellFlags, int, step) {
	var o shellFlags
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return o, i, step{opaque: reasonDynamicScript}
		}
		t := a.text
		switch {
		case t == "--" || t == "-":
			return o, i + 1, step{}
		case strings.HasPrefix(t, "--"):
			takesArg, ok := shellLong[t]
			switch {
			case !ok:
				return o, i, step{opaque: reasonOption}
			case t == "--posix":
				return o, i, step{opaque: reasonAliases}
			}
			o.login = o.login || t == "--login"
			o.info = o.info || slices.Contains(shellInfo, t)
			if takesArg {
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			var r string
			if i, r = o.cluster(args, i); r != "" {
				return o, i, step{opaque: r}
			}
		default:
			return o, i, step{}
		}
	}
	return o, i, step{}
}

// cluster reads a cluster of short options at args[i] (-lc, +o NAME),
// returning the index of its last word and why it cannot be checked.
func (o *shellFlags) cluster(args []arg, i int) (int, string) {
	t := args[i].text
	for _, ch := range t[1:] {
		switch {
		case !strings.ContainsRune(shellOptions, ch):
			return i, reasonOption
		case ch == 'c':
			o.c = true
		case ch == 'i' || ch == 'l':
			o.login = true
		case ch == 's':
			o.s = true
		case ch == 'k' && t[0] == '-':
			return i, reasonKeyword
		case ch == 'o' || ch == 'O':
			i++
			if i < len(args) {
				if r := stateOption(t[0], byte(ch), args[i]); r != "" {
					return i, r
				}
			}
		}
	}
	return i, ""
}

// procFD matches /proc/PID/fd/N, another name for a descriptor.
var procFD = lazyre.New(`^/proc/[^/]+/fd/`)

// relFD matches a relative name that is a descriptor from /dev or /proc
// (`cd /dev && bash stdin`).
var relFD = lazyre.New(`^(stdin|fd/[0-9]+|self/fd/[0-9]+|[0-9]+/fd/[0-9]+)$`)

// stdinPath reports whether a file operand is stdin or a descriptor, its
// name cleaned first (`/dev/./stdin`, `//dev/stdin`).
func stdinPath(p string) bool {
	if p == "-" {
		return true
	}
	p = path.Clean(p)
	return p == "/dev/stdin" || strings.HasPrefix(p, "/dev/fd/") || procFD().MatchString(p) || relFD().MatchString(p)
}

// scriptFile is the step of a shell given a script file: an ordinary
// command, unless the file is dynamic (a process substitution among them)
// or stdin.
func scriptFile(a arg) step {
	switch {
	case a.dyn:
		return step{opaque: reasonDynamicScript}
	case stdinPath(a.text):
		return step{opaque: reasonStdinScript}
	}
	return step{}
}

// otherShellStep reads fish, csh, pwsh and the like: only a script file
// (or a version or help option) can be checked; -c and every other way of
// running code are opaque.
func otherShellStep(_ *checker, _ *unit, args []arg) step {
	if len(args) == 1 {
		return step{opaque: reasonNoScript}
	}
	a := args[1]
	switch {
	case a.dyn:
		return step{opaque: reasonDynamicScript}
	case strings.HasPrefix(a.text, "-") && a.text != "-":
		for _, x := range args[1:] {
			if x.dyn || !slices.Contains(shellInfo, x.text) {
				return step{opaque: reasonOtherShell}
			}
		}
		return step{}
	}
	return scriptFile(a)
}

// evalStep reads eval ARGS…: their static text, joined, is a script.
func evalStep(c *checker, _ *unit, args []arg) step {
	rest := dashDash(args[1:])
	if len(rest) == 0 {
		return step{}
	}
	st := joinedScript(c, rest, reasonEvalDynamic)
	st.transparent = true
	return st
}

// dashDash drops a leading `--`.
func dashDash(args []arg) []arg {
	if len(args) > 0 && !args[0].dyn && args[0].text == "--" {
		return args[1:]
	}
	return args
}

// commandStep reads command [-p] COMMAND; -v and -V only look it up.
func commandStep(_ *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &commandOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case o.has("v", "V") || i >= len(args):
		return step{}
	}
	return step{inners: [][]arg{args[i:]}, transparent: true}
}

// builtinStep reads builtin NAME ARGS.
func builtinStep(_ *checker, _ *unit, args []arg) step {
	if len(args) < 2 {
		return step{}
	}
	return step{inners: [][]arg{args[1:]}, transparent: true}
}

// execStep reads exec [-cl] [-a NAME] COMMAND; -l, or a NAME starting
// with -, makes a shell it runs a login shell.
func execStep(_ *checker, u *unit, args []arg) step {
	o, i, bad := scan(args, &execOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case i >= len(args):
		return step{}
	}
	a, named := o.get("a")
	u.login = o.has("l") || (named && (a.dyn || strings.HasPrefix(a.text, "-")))
	u.asSh = named && (a.dyn || base(a.text) == "sh") // bash named sh expands aliases
	return step{inners: [][]arg{args[i:]}, transparent: true}
}

// trapStep reads trap ARG SIG…: ARG is a script run later, checked like
// eval (docs/spec.md §9.3 "State for later commands").
func trapStep(c *checker, _ *unit, args []arg) step {
	rest := dashDash(args[1:])
	if len(rest) < 2 {
		return step{}
	}
	first := rest[0]
	c.skipWord(first)
	switch {
	case first.dyn:
		return step{opaque: statePrefix + "trap"}
	case first.text == "-" || first.text == "" || strings.HasPrefix(first.text, "-"):
		return step{}
	}
	return step{scripts: []string{first.text}, transparent: true}
}

// aliasStep reads alias NAME=VALUE…: each VALUE is a script, checked like
// eval. In a shell that expands aliases in scripts (not bash -c) a
// definition is opaque: the commands after it may be the alias, with
// words of their own after its value.
func aliasStep(c *checker, u *unit, args []arg) step {
	var scripts []string
	for _, a := range args[1:] {
		if a.dyn {
			c.skipWord(a)
			return step{opaque: statePrefix + "alias"}
		}
		if _, val, ok := strings.Cut(a.text, "="); ok {
			c.skipWord(a)
			if u.notBash {
				return step{opaque: reasonAliasDefined}
			}
			scripts = append(scripts, val)
		}
	}
	if len(scripts) == 0 {
		return step{}
	}
	return step{scripts: scripts, transparent: true}
}

// stateStep is a builtin that changes what later commands run, in ways
// the policy does not follow: always opaque.
func stateStep(name string) handler {
	return func(*checker, *unit, []arg) step { return step{opaque: statePrefix + name} }
}

// hashStep: hash -p PATH NAME makes NAME run PATH.
func hashStep(_ *checker, _ *unit, args []arg) step {
	for _, a := range args[1:] {
		if a.dyn || isOptionWith(a, 'p') {
			return step{opaque: statePrefix + "hash -p"}
		}
	}
	return step{}
}

// shoptStep: shopt -s expand_aliases makes aliases run, and so does
// shopt -so posix (set -o posix); shopt -so keyword is set -k.
func shoptStep(_ *checker, _ *unit, args []arg) step {
	set, setOpt, named := false, false, ""
	for _, a := range args[1:] {
		set = set || isOptionWith(a, 's')
		setOpt = setOpt || isOptionWith(a, 'o')
		switch {
		case named != "":
		case a.dyn || a.text == "expand_aliases":
			named = statePrefix + "shopt -s expand_aliases"
		case setOpt:
			named = stateOption('-', 'o', a)
		}
	}
	if set && named != "" {
		return step{opaque: named}
	}
	return step{}
}

// Why a shell or set that changes how later commands are read is opaque.
const (
	// An alias defined in a shell that expands aliases in scripts.
	reasonAliasDefined = statePrefix + "alias in a shell that expands aliases"
	// Later commands may be aliases, which nobody checked.
	reasonAliases = statePrefix + "alias expansion turned on"
	// With -k (keyword) an assignment anywhere in a command is part of its
	// environment: `ls PATH=/tmp/x` looks ls up there.
	reasonKeyword = statePrefix + "assignments anywhere in a command (set -k)"
)

// stateOption is why setting a shell option by name changes how later
// commands are read, or "": `-O expand_aliases` and `-o posix` (in POSIX
// mode bash expands aliases) turn alias expansion on, `-o keyword` is -k,
// and a dynamic name set with `-` may be any of them. letter is o or O,
// sign - (set) or + (unset).
func stateOption(sign, letter byte, name arg) string {
	switch {
	case sign != '-':
		return ""
	case name.dyn:
		return reasonAliases
	case letter == 'O' && name.text == "expand_aliases", letter == 'o' && name.text == "posix":
		return reasonAliases
	case letter == 'o' && name.text == "keyword":
		return reasonKeyword
	}
	return ""
}

// setStep reads set's options, up to the first operand or `--`: `set -o
// posix` turns alias expansion on, `set -k` makes assignments anywhere
// count. A dynamic word where an option may be may be one of those.
func setStep(_ *checker, _ *unit, args []arg) step {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return step{opaque: reasonAliases}
		}
		t := a.text
		if t == "-" || t == "--" || len(t) < 2 || (t[0] != '-' && t[0] != '+') {
			return step{}
		}
		for _, ch := range t[1:] {
			switch {
			case ch == 'k' && t[0] == '-':
				return step{opaque: reasonKeyword}
			case ch == 'o':
				i++
				if i < len(args) {
					if r := stateOption(t[0], 'o', args[i]); r != "" {
						return step{opaque: r}
					}
				}
			}
		}
	}
	return step{}
}

// sourceStep reads source FILE: an ordinary command, unless the file
// cannot be read before it runs.
func sourceStep(c *checker, _ *unit, args []arg) step {
	c.facts.anyName = true // the file may assign any variable anything
	rest := dashDash(args[1:])
	switch {
	case len(rest) == 0:
		return step{}
	case rest[0].dyn:
		return step{opaque: statePrefix + "source of a dynamic file"}
	case stdinPath(rest[0].text):
		return step{opaque: statePrefix + "source from stdin or a file descriptor"}
	}
	return step{}
}

// declStep reads a declaration builtin run as a command (`builtin export
// PATH=x`): the names it assigns.
func declStep(c *checker, _ *unit, args []arg) step {
	var st step
	var opts []arg
	for _, a := range args[1:] {
		if !a.dyn && len(a.text) > 1 && (a.text[0] == '-' || a.text[0] == '+') {
			opts = append(opts, a)
		}
	}
	f := readDeclFlags(opts, args[0].text)
	for _, a := range args[1:] {
		if !a.dyn && strings.HasPrefix(a.text, "-") {
			continue
		}
		name, val, hasValue := strings.Cut(a.text, "=")
		switch {
		case a.dyn:
			st.assigns = append(st.assigns, dynName)
		case !hasValue && !f.print:
			st.assigns = append(st.assigns, argName(a)) // a bare `export NAME` is a change too
		case hasValue:
			st.assigns = append(st.assigns, declaredName(a)...)
		}
		st.uses = append(st.uses, nameDeps(arg{text: name, dyn: a.dyn, word: a.word})...)
		if f.ref {
			c.facts.refs = setAdd(c.facts.refs, argName(static(name)))
			if hasValue {
				st.assigns = append(st.assigns, refTarget(arg{text: val, dyn: a.dyn}))
			}
		}
		if f.int && hasValue {
			st.uses = append(st.uses, dep{unknown: a.dyn}) // the value is evaluated
			st.uses = append(st.uses, appendNames(nil, val)...)
		}
	}
	return st
}

// testStep reads test and [: -v NAME takes NAME's subscript, or the value
// of a dynamic NAME, as a name bash evaluates.
func testStep(_ *checker, _ *unit, args []arg) step {
	var st step
	for i := 1; i+1 < len(args); i++ {
		if !args[i].dyn && args[i].text == "-v" {
			st.uses = append(st.uses, nameDeps(args[i+1])...)
		}
	}
	return st
}

// unsetStep reads unset: a subscript of a NAME is evaluated.
func unsetStep(_ *checker, _ *unit, args []arg) step {
	var st step
	for _, a := range args[1:] {
		if a.dyn || !strings.HasPrefix(a.text, "-") {
			st.uses = append(st.uses, nameDeps(a)...)
		}
	}
	return st
}

var (
	readOpts    = optSpec{flags: "ers", args: "adinNptu"}
	mapfileOpts = optSpec{flags: "t", args: "dnOsuCc"}
	printfOpts  = optSpec{args: "v"}
)

// readStep: read assigns its operands and -a ARRAY.
func readStep(_ *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &readOpts, 1)
	if bad != "" {
		return step{assigns: []string{dynName}}
	}
	var st step
	if a, ok := o.get("a"); ok {
		st.name(a)
	}
	for _, a := range args[i:] {
		st.name(a)
	}
	if len(st.assigns) == 0 {
		st.assigns = []string{"REPLY"}
	}
	return st
}

// name notes that a step assigns the name a, whose subscript (or, when
// dynamic, whose value) bash evaluates.
func (st *step) name(a arg) {
	st.assigns = append(st.assigns, argName(a))
	st.uses = append(st.uses, nameDeps(a)...)
}

// mapfileStep: mapfile assigns its array operand, and runs the -C
// callback as a script, with the index and the line appended (bash
// evaluates "CALLBACK INDEX 'LINE'"): dynamic words of one word each. The
// callback does not make mapfile transparent: it needs a rule of its own,
// as without one.
func mapfileStep(c *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &mapfileOpts, 1)
	if bad != "" {
		return step{assigns: []string{dynName}}
	}
	var st step
	if i < len(args) {
		st.name(args[i])
	}
	if cb, ok := o.get("C"); ok {
		c.skipWord(cb)
		if cb.dyn {
			st.opaque = reasonDynamicScript
		} else {
			st.scripts = []string{cb.text + ` "$index" "$line"`}
		}
	}
	return st
}

// reasonHistory is why fc is opaque, and history when it adds to the
// history list what fc would run.
const reasonHistory = "commands from the history"

// fcStep: fc runs commands from the history list, and its -e editor as a
// command: always opaque.
func fcStep(*checker, *unit, []arg) step { return step{opaque: reasonHistory} }

// historyStep: history -s, -r and -n put commands in the history list,
// which fc runs; a dynamic word may be one of those options.
func historyStep(_ *checker, _ *unit, args []arg) step {
	for _, a := range args[1:] {
		if a.dyn || isOptionWith(a, 's') || isOptionWith(a, 'r') || isOptionWith(a, 'n') {
			return step{opaque: reasonHistory}
		}
	}
	return step{}
}

// printfStep: printf -v NAME assigns NAME.
func printfStep(_ *checker, _ *unit, args []arg) step {
	o, _, bad := scan(args, &printfOpts, 1)
	if bad != "" {
		return step{}
	}
	var st step
	if v, ok := o.get("v"); ok {
		st.name(v)
	}
	return st
}

// waitStep: wait -p NAME assigns NAME a pid. A word that may be several
// (an unquoted $x) may hold -p NAME; a quoted one is taken for the job
// it almost always is (`wait "$pid"`).
func waitStep(_ *checker, _ *unit, args []arg) step {
	var st step
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a.multi:
			st.assigns = append(st.assigns, dynName)
		case a.dyn:
		case isOptionWith(a, 'p'):
			if _, attached, _ := strings.Cut(a.text, "p"); attached != "" {
				st.name(static(attached)) // -pNAME
			} else if i+1 < len(args) {
				i++
				st.name(args[i])
			}
		}
	}
	return st
}

// getoptsStep: getopts OPTSTRING NAME assigns NAME.
func getoptsStep(_ *checker, _ *unit, args []arg) step {
	if len(args) < 3 {
		return step{}
	}
	st := step{assigns: []string{"OPTARG"}}
	st.name(args[2])
	return st
}

// letStep reads `builtin let EXPR…`: the names its expressions assign.
func letStep(_ *checker, _ *unit, args []arg) step {
	var names []string
	for _, a := range args[1:] {
		if a.dyn {
			names = append(names, dynName)
		} else if m := letAssign().FindStringSubmatch(a.text); m != nil {
			names = append(names, m[1])
		}
	}
	return step{assigns: names}
}

// letAssign matches an arithmetic assignment at the start of an expression.
var letAssign = lazyre.New(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^]]*\])?\s*(=|[-+*/%&|^]=|<<=|>>=|\*\*=|\+\+|--)`)

// argName is the name an argument assigns, dynName when dynamic; an
// array subscript is not part of it (`printf -v 'PATH[0]'` assigns PATH).
func argName(a arg) string {
	if a.dyn {
		return dynName
	}
	return refTarget(a)
}
