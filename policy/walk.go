package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth is how deep shells, evals and quoted code may nest before the
// rest is opaque (docs/spec.md §9.3 "Shells").
const maxDepth = 8

// maxArgs bounds the arguments of one simple command after brace
// expansion; the rest is one dynamic word.
const maxArgs = 4096

// Why parts are opaque (Part.Opaque).
const (
	reasonParse         = "parse error"
	reasonDynamicName   = "dynamic command name"
	reasonNoScript      = "shell given no script"
	reasonEvalDynamic   = "eval of a dynamic argument"
	reasonDynamicScript = "dynamic script"
	reasonLogin         = "interactive or login shell"
	reasonStdinScript   = "script read from stdin or a file descriptor"
	reasonOtherShell    = "script for a shell other than bash"
	reasonDepth         = "nesting deeper than 8"
	reasonOption        = "option not understood"
	reasonFind          = "dynamic word in find's expression"
	reasonEnvString     = "env -S string with $ or a backslash"
	reasonUnsupported   = "unsupported shell construct"
	reasonShArith       = "(( )) is a nested subshell to sh"

	statePrefix = "state change: "
)

// scope is where the walker is: which source, how deep, and whether in
// quoted code.
type scope struct {
	src    string // the script being walked, for words as written
	depth  int    // shells, evals and quoted code entered
	quoted bool   // in quoted code: only deny, ask and opaque parts count (docs/spec.md §9.3 "Quoted code")
	// writes: a redirection of the command running the script writes a
	// file; it applies to every command of the script (`bash -c ls > f`).
	writes bool
	// notBash: the shell running the script may be another than bash (sh,
	// dash, zsh, $SHELL; not bash -c): it expands aliases in scripts, so
	// an alias defined there is opaque, and dash expands no braces, so a
	// word that brace expansion would change is dynamic.
	notBash bool
}

// checker walks one command and collects its parts.
type checker struct {
	p     *Policy
	parts []Part
	skip  map[*syntax.Word]bool // words run as scripts: checked as such, not as quoted code
	// here-documents run as scripts (`bash <<EOF`): checked as such, not as quoted code
	skipRedir map[*syntax.Redirect]bool
	trace     *trace // nil but in the differential test against bash
	facts     facts  // what the whole command assigns and evaluates (values.go)
}

// trace is what one check saw: the words of every command at every level
// of every unit, and every script a command runs, so that the
// differential test (parity_test.go) can hold each program real bash
// executes against them.
type trace struct {
	levels  []traced
	scripts []string
}

// traced is one command the policy saw. ordinary: it is the command a
// unit runs, not a wrapper or a shell given a script, so what it runs in
// turn is its own business (a script file, a program's helpers).
type traced struct {
	args     []arg
	ordinary bool
}

func newParser() *syntax.Parser { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }

// script parses and walks one script; what does not parse is one opaque
// part holding the whole text.
func (c *checker) script(sc *scope, text string) {
	if why := tooBig(text); why != "" {
		c.opaquePart(sc, []string{text}, why)
		return
	}
	sc.src = hideCR(text)
	f, err := newParser().Parse(strings.NewReader(sc.src), "")
	if err != nil {
		c.opaquePart(sc, []string{text}, reasonParse)
		return
	}
	c.stmts(sc, f.Stmts, sc.writes)
}

// crStandIn replaces carriage returns before parsing. Bash reads a CR as
// an ordinary character of a word, the parser as a blank, and the parser
// reads backslash-CR-LF as a line continuation where bash ends the
// command: `echo x\<CR><LF>rm -rf /` would hide the rm. A character of a
// private use area is a word character to both.
const crStandIn = "\uE00D"

func hideCR(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(s, "\r", crStandIn)
}

// showCR puts the carriage returns back, for words and texts.
func showCR(s string) string {
	if !strings.Contains(s, crStandIn) {
		return s
	}
	return strings.ReplaceAll(s, crStandIn, "\r")
}

// nested walks a script a shell, eval or wrapper runs; writes says whether
// that command's redirections write a file, notBash whether what runs the
// script may be another shell than bash.
func (c *checker) nested(sc *scope, text string, writes, notBash bool) {
	if sc.depth >= maxDepth {
		c.opaquePart(sc, []string{text}, reasonDepth)
		return
	}
	c.script(&scope{src: text, depth: sc.depth + 1, quoted: sc.quoted, writes: writes, notBash: notBash}, text)
}

func (c *checker) stmts(sc *scope, ss []*syntax.Stmt, writes bool) {
	for _, s := range ss {
		c.stmt(sc, s, writes)
	}
}

// stmt walks one statement. writes says whether a redirection of an
// enclosing compound command writes a file: it applies to every simple
// command inside (docs/spec.md §9.3).
func (c *checker) stmt(sc *scope, s *syntax.Stmt, writes bool) {
	writes = writes || anyWrite(s.Redirs)
	switch cmd := s.Cmd.(type) {
	case nil:
		c.internalPart(sc, redirWords(sc, s.Redirs), nil, nil, writes)
	case *syntax.CallExpr:
		c.call(sc, cmd, s.Redirs, writes)
	case *syntax.BinaryCmd:
		c.stmt(sc, cmd.X, writes)
		piped := cmd.Op == syntax.Pipe || cmd.Op == syntax.PipeAll
		if !piped || !c.timeProgram(sc, cmd.Y, writes) {
			c.stmt(sc, cmd.Y, writes)
		}
	case *syntax.Subshell:
		c.stmts(sc, cmd.Stmts, writes)
	case *syntax.Block:
		c.stmts(sc, cmd.Stmts, writes)
	case *syntax.IfClause:
		c.ifClause(sc, cmd, writes)
	case *syntax.WhileClause:
		c.stmts(sc, cmd.Cond, writes)
		c.stmts(sc, cmd.Do, writes)
	case *syntax.ForClause:
		c.forClause(sc, cmd, writes)
	case *syntax.CaseClause:
		c.looseCode(sc, cmd.Word, writes)
		for _, it := range cmd.Items {
			for _, p := range it.Patterns {
				c.looseCode(sc, p, writes)
			}
			c.stmts(sc, it.Stmts, writes)
		}
	case *syntax.FuncDecl:
		c.stmt(sc, cmd.Body, writes)
	case *syntax.DeclClause:
		c.decl(sc, cmd, writes)
	case *syntax.LetClause:
		c.let(sc, cmd, writes)
	case *syntax.ArithmCmd, *syntax.TestClause:
		words := []string{source(sc, cmd)}
		if _, arith := cmd.(*syntax.ArithmCmd); arith && sc.notBash {
			c.opaquePart(sc, words, reasonShArith) // to dash, ((ls)) is a subshell in a subshell
		}
		c.internalPart(sc, words, nil, c.exprAssigns(sc, cmd, words), writes)
		c.code(sc, cmd)
	case *syntax.TimeClause:
		c.timeClause(sc, cmd, writes)
	case *syntax.CoprocClause:
		c.coprocName(sc, cmd, writes)
		if !c.timeProgram(sc, cmd.Stmt, writes) {
			c.stmt(sc, cmd.Stmt, writes)
		}
	default:
		c.opaquePart(sc, []string{source(sc, cmd)}, reasonUnsupported)
	}
	c.redirAssigns(sc, s, writes)
	c.redirCode(sc, s.Redirs)
}

// redirAssigns: an expansion in a redirection or a here-document body may
// assign (`> ${PATH:=x}`); a part of its own when it assigns a loader name.
func (c *checker) redirAssigns(sc *scope, s *syntax.Stmt, writes bool) {
	var names []string
	words := []string{source(sc, s)}
	for _, r := range s.Redirs {
		if r.Word != nil {
			names = append(names, c.exprAssigns(sc, r.Word, words)...)
		}
		if r.Hdoc != nil {
			names = append(names, c.exprAssigns(sc, r.Hdoc, words)...)
		}
	}
	if loaderName(names) != "" {
		c.internalPart(sc, words, nil, names, writes)
	}
}

// timeClause walks what the time keyword times. bash's time skips one
// `--` after it (and after -p), which the parser takes for the command's
// name: `time -- rm x` runs rm, `time -- ! rm x` a negated rm. What
// follows the `--` is read again as the statement it is to bash.
func (c *checker) timeClause(sc *scope, tc *syntax.TimeClause, writes bool) {
	if tc.Stmt == nil {
		return
	}
	if sc.notBash { // dash has no time keyword: it runs the time program
		c.script(&scope{depth: sc.depth, quoted: sc.quoted, writes: writes, notBash: true}, "command "+source(sc, tc))
		return
	}
	first := tc.Stmt // time times a pipeline: the `--` is its first command's
	for {
		b, ok := first.Cmd.(*syntax.BinaryCmd)
		if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) {
			break
		}
		first = b.X
	}
	ce, ok := first.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) == 0 {
		c.stmt(sc, tc.Stmt, writes)
		return
	}
	if t, ok := plainWord(ce.Args[0]); !ok || t != "--" {
		c.stmt(sc, tc.Stmt, writes)
		return
	}
	start, end := int(ce.Args[0].End().Offset()), int(tc.Stmt.End().Offset())
	if start < 0 || start > end || end > len(sc.src) {
		c.opaquePart(sc, []string{source(sc, tc)}, reasonUnsupported)
		return
	}
	text := showCR(sc.src[start:end])
	c.script(&scope{depth: sc.depth, quoted: sc.quoted, writes: writes, notBash: sc.notBash}, text)
}

// timeProgram walks s as the time program when s is a time clause in a
// place where bash does not read time as its keyword: after a pipe and
// after coproc (parse.y, time_command_acceptable), `a | time -- rm x`
// runs /usr/bin/time. It reports whether it did.
func (c *checker) timeProgram(sc *scope, s *syntax.Stmt, writes bool) bool {
	if _, ok := s.Cmd.(*syntax.TimeClause); !ok || s.Negated {
		return false
	}
	c.script(&scope{depth: sc.depth, quoted: sc.quoted, writes: writes, notBash: sc.notBash}, "command "+source(sc, s))
	return true
}

func (c *checker) ifClause(sc *scope, ic *syntax.IfClause, writes bool) {
	for ; ic != nil; ic = ic.Else {
		c.stmts(sc, ic.Cond, writes)
		c.stmts(sc, ic.Then, writes)
	}
}

// forClause walks a loop; a loop variable of the loader list is an
// assignment like any other (docs/spec.md §9.3 "State for later commands").
func (c *checker) forClause(sc *scope, fc *syntax.ForClause, writes bool) {
	switch l := fc.Loop.(type) {
	case *syntax.WordIter:
		for _, w := range l.Items {
			c.looseCode(sc, w, writes)
		}
		if l.Name == nil {
			break
		}
		shown := []string{source(sc, fc)}
		if !l.InPos.IsValid() { // `for x; do`: over the positional parameters
			c.assignUnknown(sc, []string{l.Name.Value}, shown)
		}
		for _, a := range c.args(sc, l.Items) {
			c.assignArg(sc, l.Name.Value, a, shown)
		}
		if isLoader(l.Name.Value) {
			c.internalPart(sc, []string{"for", l.Name.Value}, nil, []string{l.Name.Value}, writes)
		}
	case *syntax.CStyleLoop:
		c.looseCode(sc, l, writes)
	}
	c.stmts(sc, fc.Do, writes)
}

// coprocName: `coproc NAME …` assigns the array NAME (the coprocess's
// descriptors: PATH becomes "63"), an assignment like any other when NAME
// is on the loader list.
func (c *checker) coprocName(sc *scope, cp *syntax.CoprocClause, writes bool) {
	if cp.Name == nil {
		return
	}
	name, ok := staticWord(cp.Name)
	if !ok {
		name = dynName
	}
	c.assignInt(sc, name, nil) // the coprocess's descriptors
	if name == dynName || isLoader(name) {
		c.internalPart(sc, []string{"coproc", source(sc, cp.Name)}, nil, []string{name}, writes)
	}
}

// call walks a simple command: its part (or parts, through wrappers), then
// the code in its words.
func (c *checker) call(sc *scope, ce *syntax.CallExpr, redirs []*syntax.Redirect, writes bool) {
	plain := len(ce.Assigns) == 0 && allPlain(ce.Args)
	words := make([]string, len(ce.Assigns))
	for i, a := range ce.Assigns {
		words[i] = source(sc, a)
		c.assignment(sc, a, []string{words[i]})
	}
	var names []string
	if !plain {
		names = append(assignNames(ce.Assigns), c.exprAssigns(sc, ce, []string{source(sc, ce)})...)
	}
	args := c.args(sc, ce.Args)
	if len(args) == 0 { // no words, or only words that expand to none (`{,}`)
		for _, w := range ce.Args {
			words = append(words, source(sc, w))
		}
		c.internalPart(sc, words, nil, names, writes)
	} else {
		u := &unit{assigned: names, prefix: words, writes: writes, stdin: c.stdinScript(redirs), notBash: sc.notBash}
		c.unwrap(sc, u, args)
	}
	if !plain {
		c.code(sc, ce)
	}
}

// allPlain reports whether every word is plain text: then no arithmetic,
// substitution or quoted code hides in them.
func allPlain(ws []*syntax.Word) bool {
	for _, w := range ws {
		if _, ok := plainWord(w); !ok {
			return false
		}
	}
	return true
}

// args evaluates a command's words.
func (c *checker) args(sc *scope, words []*syntax.Word) []arg {
	// One allocation for the common case of a word per argument.
	out := make([]arg, 0, min(len(words), maxArgs+1))
	for _, w := range words {
		if len(out) >= maxArgs {
			return append(out, arg{text: source(sc, w), dyn: true, multi: true, word: w})
		}
		out = append(out, c.wordArgs(sc, w)...)
	}
	return out
}

// wordArgs evaluates one word into its arguments.
func (c *checker) wordArgs(sc *scope, w *syntax.Word) []arg {
	if t, ok := plainWord(w); ok {
		return []arg{{text: showCR(t), word: w}}
	}
	if c.braceMisread(sc, w) {
		return []arg{{text: source(sc, w), dyn: true, multi: true, word: w}}
	}
	if sc.notBash && localeOrANSI(w) {
		// dash reads $'…' as $ and a quoted string: either value may run.
		return []arg{{text: source(sc, w), dyn: true, word: w}}
	}
	fields, ok := expandWord(w, c.p.cfg.Home)
	if !ok || (sc.notBash && bracesChange(w)) {
		return []arg{{text: source(sc, w), dyn: true, multi: true, word: w}}
	}
	out := make([]arg, len(fields))
	for i, f := range fields {
		out[i] = fieldArg(f, source(sc, w), w)
	}
	return out
}

// localeOrANSI reports whether a word has a $'…' or $"…" string.
func localeOrANSI(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if p.Dollar {
				return true
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return true
			}
		}
	}
	return false
}

// braceMisread reports whether bash's brace expansion reads the quotes of
// a word otherwise than its parser (braces.go), recording an opaque part
// when it does. Only a word with braces and a backquote substitution or a
// ${…} with words of its own can be.
func (c *checker) braceMisread(sc *scope, w *syntax.Word) bool {
	risky := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			risky = risky || n.Backquotes
			return false
		case *syntax.ParamExp:
			risky = risky || n.Exp != nil || n.Repl != nil || n.Slice != nil || n.Index != nil
			return false
		}
		return true
	})
	if !risky {
		return false
	}
	src := source(sc, w)
	if !strings.Contains(src, "{") {
		return false
	}
	words, ok := braceExpand(braceTokens(w.Parts))
	if ok && !braceMisread(sc, w.Parts, src, words) {
		return false
	}
	c.opaquePart(sc, []string{src}, reasonBraces)
	return true
}

// plainWord returns the text of a word that needs no expansion: bare
// text without escapes, braces, ~ or pattern characters, the common case,
// read without allocating.
func plainWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || l.Value == "" || strings.ContainsAny(l.Value, "\\{~*?[") {
		return "", false
	}
	return l.Value, true
}

// decl walks a declaration builtin (docs/spec.md §9.3 "Assignments"):
// allowed unless it assigns a name of the loader list. With -n the value
// is a name too: a reference to PATH is an assignment to PATH later.
func (c *checker) decl(sc *scope, d *syntax.DeclClause, writes bool) {
	variant := d.Variant.Value
	shown := []string{source(sc, d)}
	flags := readDeclFlags(c.declOptions(sc, d), variant)
	args := []arg{static(variant)}
	var names []string
	for _, a := range d.Args {
		switch {
		case a.Naked && a.Name == nil && a.Value != nil:
			for _, x := range c.wordArgs(sc, a.Value) {
				args = append(args, x)
				if n := declaredName(x); len(n) > 0 {
					names = append(names, n...)
					c.assignUnknown(sc, n, shown)
				}
			}
		case a.Naked && a.Name != nil:
			// A bare `export NAME` changes what later commands get, as
			// `declare -x`, `readonly`, `local` do; -p and -f only print.
			args = append(args, static(a.Name.Value))
			if !flags.print {
				names = append(names, a.Name.Value)
			}
			c.declared(a.Name.Value, flags)
		case a.Name != nil:
			names = append(names, a.Name.Value)
			v := c.assignValue(sc, a)
			if flags.ref {
				names = append(names, refTarget(v))
			}
			c.declared(a.Name.Value, flags)
			c.assignment(sc, a, shown)
			args = append(args, arg{text: source(sc, a), dyn: v.dyn})
		}
	}
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = a.text
	}
	c.internalPart(sc, words, args, append(names, c.exprAssigns(sc, d, shown)...), writes)
	c.code(sc, d)
}

// declFlags are the options of a declaration that matter here.
type declFlags struct {
	ref   bool // -n, or nameref: the value is a name
	int   bool // -i: the values are evaluated
	print bool // -p, -f or -F: nothing is assigned
}

// declOptions are a declaration's option words (every word starting with
// - or +, as the policy cannot know where bash stops reading options).
func (c *checker) declOptions(sc *scope, d *syntax.DeclClause) []arg {
	var out []arg
	for _, a := range d.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			for _, x := range c.wordArgs(sc, a.Value) {
				if !x.dyn && len(x.text) > 1 && (x.text[0] == '-' || x.text[0] == '+') {
					out = append(out, x)
				}
			}
		}
	}
	return out
}

func readDeclFlags(opts []arg, variant string) declFlags {
	f := declFlags{ref: variant == "nameref"}
	attrs := variant != "export" && variant != "readonly" // -n and -i are declare's, typeset's and local's
	for _, o := range opts {
		if o.text[0] != '-' {
			continue
		}
		f.ref = f.ref || (attrs && isOptionWith(o, 'n'))
		f.int = f.int || (attrs && isOptionWith(o, 'i'))
		f.print = f.print || isOptionWith(o, 'p') || isOptionWith(o, 'f') || isOptionWith(o, 'F')
	}
	return f
}

// declared notes a name's attributes: a nameref, an integer.
func (c *checker) declared(name string, f declFlags) {
	if f.ref {
		c.facts.refs = setAdd(c.facts.refs, name)
	}
	if f.int {
		c.facts.ints = setAdd(c.facts.ints, name)
	}
}

func setAdd(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}

// assignment records an assignment of the syntax (NAME=…, NAME[i]=…,
// NAME=(…)).
func (c *checker) assignment(sc *scope, a *syntax.Assign, shown []string) {
	if a.Name == nil {
		return
	}
	switch {
	case a.Array != nil:
		isInt := true
		for _, e := range a.Array.Elems {
			isInt = isInt && e.Value != nil && isIntWord(e.Value)
		}
		if isInt {
			c.assignInt(sc, a.Name.Value, shown)
		} else {
			c.assignUnknown(sc, []string{a.Name.Value}, shown)
		}
	case a.Value == nil:
		c.assignArg(sc, a.Name.Value, static(""), shown)
	default:
		c.assign(sc, a.Name.Value, a.Value, shown)
	}
}

// let walks `let EXPR…`: allowed unless it assigns a loader name.
func (c *checker) let(sc *scope, l *syntax.LetClause, writes bool) {
	args := []arg{static("let")}
	for _, e := range l.Exprs {
		args = append(args, static(source(sc, e)))
	}
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = a.text
	}
	c.internalPart(sc, words, args, c.exprAssigns(sc, l, []string{source(sc, l)}), writes)
	c.code(sc, l)
}

// assignValue evaluates an assignment's value as one argument.
func (c *checker) assignValue(sc *scope, a *syntax.Assign) arg {
	if a.Array != nil {
		return arg{text: source(sc, a.Array), dyn: true}
	}
	if a.Value == nil {
		return static("")
	}
	args := c.wordArgs(sc, a.Value)
	if len(args) != 1 {
		return arg{text: source(sc, a.Value), dyn: true}
	}
	return args[0]
}

// looseCode walks the code in words that belong to no part (a case word, a
// for list); an arithmetic assignment there to a loader name is a part.
func (c *checker) looseCode(sc *scope, n syntax.Node, writes bool) {
	words := []string{source(sc, n)}
	if names := c.exprAssigns(sc, n, words); loaderName(names) != "" {
		c.internalPart(sc, words, nil, names, writes)
	}
	c.code(sc, n)
}

// code walks what bash runs inside a node's words: command and process
// substitutions, and quoted code (docs/spec.md §9.3).
func (c *checker) code(sc *scope, n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			c.stmts(sc, n.Stmts, false)
			return false
		case *syntax.ProcSubst:
			c.stmts(sc, n.Stmts, false)
			return false
		case *syntax.Stmt:
			return false // walked as a statement of its own
		case *syntax.Word:
			if !c.skip[n] {
				c.quotedCode(sc, wordText(n))
			}
		}
		c.evalPlaces(sc, n)
		return true
	})
}

// evalPlaces records the places in a node whose value bash evaluates
// (values.go): arithmetic, subscripts, substring offsets, `${!x}`,
// `${x@P}`, and the arithmetic and -v operators of [[ ]].
func (c *checker) evalPlaces(sc *scope, n syntax.Node) {
	switch n := n.(type) {
	case *syntax.ArithmExp:
		c.use(sc, arithDeps(n.X), []string{source(sc, n)})
	case *syntax.ArithmCmd:
		c.use(sc, arithDeps(n.X), []string{source(sc, n)})
	case *syntax.LetClause:
		for _, e := range n.Exprs {
			c.use(sc, arithDeps(e), []string{source(sc, n)})
		}
	case *syntax.CStyleLoop:
		for _, e := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
			if e != nil {
				c.use(sc, arithDeps(e), []string{source(sc, e)})
			}
		}
	case *syntax.ParamExp:
		c.paramPlaces(sc, n)
	case *syntax.Assign:
		if n.Index != nil {
			c.use(sc, arithDeps(n.Index), []string{source(sc, n)})
		}
	case *syntax.ArrayElem:
		if n.Index != nil {
			c.use(sc, arithDeps(n.Index), []string{source(sc, n)})
		}
	case *syntax.TestClause:
		c.testPlaces(sc, n)
	}
}

// paramPlaces: an indirection takes the value as a name, @P expands it as
// a prompt, a subscript and a substring's offset and length are
// arithmetic.
func (c *checker) paramPlaces(sc *scope, p *syntax.ParamExp) {
	if p.Param == nil {
		return
	}
	shown := []string{source(sc, p)}
	self := []dep{{name: p.Param.Value}}
	if indirect(p) {
		c.use(sc, self, shown)
		self = []dep{{unknown: true}} // what @P expands is another variable's value
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P" {
		c.use(sc, self, shown)
	}
	if p.Index != nil && !allElements(p.Index) {
		c.use(sc, arithDeps(p.Index), shown)
	}
	if p.Slice != nil {
		for _, x := range []syntax.ArithmExpr{p.Slice.Offset, p.Slice.Length} {
			if x != nil {
				c.use(sc, arithDeps(x), shown)
			}
		}
	}
}

// allElements reports whether a subscript is @ or *: no arithmetic.
func allElements(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// arithTests are the [[ ]] operators whose operands are arithmetic.
var arithTests = map[syntax.BinTestOperator]bool{
	syntax.TsEql: true, syntax.TsNeq: true, syntax.TsLeq: true, syntax.TsGeq: true, syntax.TsLss: true, syntax.TsGtr: true,
}

// testPlaces: [[ A -eq B ]] evaluates A and B, [[ -v A ]] takes A as a
// name whose subscript is evaluated.
func (c *checker) testPlaces(sc *scope, tc *syntax.TestClause) {
	shown := []string{source(sc, tc)}
	syntax.Walk(tc.X, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryTest:
			if arithTests[n.Op] {
				c.use(sc, append(arithDeps(n.X), arithDeps(n.Y)...), shown)
			}
		case *syntax.UnaryTest:
			if w, ok := n.X.(*syntax.Word); ok && n.Op == syntax.TsVarSet {
				c.use(sc, wordNameDeps(w), shown)
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		}
		return true
	})
}

// redirCode walks the code in redirection targets and heredoc bodies.
func (c *checker) redirCode(sc *scope, rs []*syntax.Redirect) {
	for _, r := range rs {
		if why := heredocMisread(sc, r); why != "" {
			c.opaquePart(sc, []string{r.Op.String() + source(sc, r.Word)}, why)
		}
		if r.Word != nil {
			c.code(sc, r.Word)
		}
		if r.Hdoc == nil {
			continue
		}
		syntax.Walk(r.Hdoc, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CmdSubst:
				c.stmts(sc, n.Stmts, false)
				return false
			case *syntax.ParamExp, *syntax.ArithmExp:
				c.code(sc, n)
				return false
			}
			return true
		})
		// The body itself is read once, and only where bash runs it: its
		// expansions, just walked, and the script of a shell reading it
		// (stdinScript). A body that goes to a program is data; where it
		// reaches bash again it does so as a value (read, $(cat)), which
		// values.go follows.
	}
}

// stdinScript returns the text a command reads on stdin when its own last
// input redirection is a here-document or here-string without expansions,
// so that `bash <<'EOF'` is checked like `bash -c`; nil otherwise.
func (c *checker) stdinScript(rs []*syntax.Redirect) *stdinText {
	var in *stdinText
	for _, r := range rs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			in = nil
			if r.Hdoc != nil && !hasExpansion(r.Hdoc) {
				in = &stdinText{text: heredocText(r), redir: r}
			}
		case syntax.WordHdoc:
			in = nil
			if v, ok := staticWord(r.Word); ok {
				in = &stdinText{text: v + "\n", redir: r}
			}
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			in = nil
		}
	}
	return in
}

// stdinText is a script given on stdin, and where.
type stdinText struct {
	text  string
	redir *syntax.Redirect
}

// hasExpansion reports whether a here-document body expands anything.
func hasExpansion(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			return true
		}
	}
	return false
}

// wordText is a word's literal text after quote removal, dynamic pieces
// left out: what the quoted-code check reads.
func wordText(w *syntax.Word) string {
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.Contains(l.Value, `\`) {
			return l.Value
		}
	}
	var f field
	for _, p := range w.Parts {
		f = append(f, partSegs(p)...)
	}
	return staticText(f)
}

// heredocText is a heredoc body's literal text: as written when its
// delimiter is quoted, else with the backslashes bash removes.
func heredocText(r *syntax.Redirect) string {
	quotedDelim := r.Word != nil && (len(r.Word.Parts) != 1 || strings.Contains(r.Word.Lit(), `\`) || r.Word.Lit() == "")
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			if quotedDelim {
				b.WriteString(l.Value)
			} else {
				b.WriteString(dqUnescape(l.Value, 0))
			}
		}
	}
	return b.String()
}

// source returns a node as written in the scope's source.
func source(sc *scope, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if n.Pos().IsValid() && n.End().IsValid() && 0 <= start && start <= end && end <= len(sc.src) {
		return showCR(sc.src[start:end])
	}
	var b strings.Builder
	syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, n)
	return b.String()
}

// redirWords are the words of a statement made only of redirections.
func redirWords(sc *scope, rs []*syntax.Redirect) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = source(sc, r)
	}
	return out
}

// anyWrite reports whether a redirection writes a file (docs/spec.md §9.4):
// not N>&M, >&M, >&-, input redirections, nor anything to /dev/null.
func anyWrite(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		if writesFile(r) {
			return true
		}
	}
	return false
}

func writesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
		return false
	}
	target, ok := staticWord(r.Word)
	if !ok {
		return true
	}
	if r.Op == syntax.DplOut && (target == "-" || isDigits(target)) {
		return false
	}
	return target != "/dev/null"
}

// staticWord returns a word's value when it is one static word.
func staticWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	fields, ok := expandWord(w, "")
	if !ok || len(fields) != 1 {
		return "", false
	}
	a := fieldArg(fields[0], "", w)
	return a.text, !a.dyn
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
