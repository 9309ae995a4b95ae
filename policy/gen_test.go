package policy

import (
	"strings"
	"testing"
)

// A grammar of the constructs the policy has to see through (issue 25):
// assignments and declarations, expansions that assign or evaluate,
// arithmetic, brace expansion, wrappers, nested shells, eval, functions
// and here-documents, composed at random. The fuzzer's bytes are the
// grammar's choices, so that coverage guides which compositions it tries;
// when they run out every choice is the first, which ends the command.

// choices reads the fuzzer's bytes as choices.
type choices struct {
	b     []byte
	depth int
}

// pick returns a choice below n.
func (c *choices) pick(n int) int {
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return v % n
}

// one returns one of the texts.
func (c *choices) one(texts ...string) string { return texts[c.pick(len(texts))] }

// script is a few statements joined by separators.
func (c *choices) script() string {
	var b strings.Builder
	b.WriteString(c.stmt())
	for range c.pick(4) {
		b.WriteString(c.one("; ", " && ", " || ", " | ", "\n", " & "))
		b.WriteString(c.stmt())
	}
	return b.String()
}

// stmt is one statement.
func (c *choices) stmt() string {
	if c.depth > 3 {
		return c.simple()
	}
	c.depth++
	defer func() { c.depth-- }()
	switch c.pick(12) {
	case 0, 1:
		return c.simple()
	case 2:
		return c.assign()
	case 3:
		return c.arith()
	case 4:
		return c.decl()
	case 5:
		return c.one("bash -c ", "sh -c ", "eval ", "bash /dev/./stdin <<< ") + sq(c.script())
	case 6:
		return c.wrapper() + " " + c.simple()
	case 7:
		return "f() { " + c.script() + "; }; f " + c.word()
	case 8:
		return c.one("cat <<EOF\n", "bash <<'EOF'\n", "cat <<'EOF'\n") + c.heredoc() + "\nEOF\n"
	case 9:
		return c.one("for ", "select ") + c.name() + " in " + c.word() + " " + c.word() + "; do " + c.script() + "; break; done"
	case 10:
		return c.one("{ ", "( ") + c.script() + c.one("; }", " )") + c.one("", " > out", " 2>/dev/null")
	}
	return "if " + c.stmt() + "; then " + c.stmt() + "; fi"
}

// simple is a simple command, often one the policy denies.
func (c *choices) simple() string {
	cmd := c.one("rm -f v", "touch w", "echo", "printf %s", "cat", "true", "ls", ": ", "rm", "command rm -f", "/bin/rm -f",
		"find . -name v -exec rm -f {} ;", "xargs rm -f", "env rm -f v", "time -- rm -f v", "jobs -x rm -f v")
	var b strings.Builder
	if c.pick(4) == 0 {
		b.WriteString(c.name() + "=" + c.word() + " ")
	}
	b.WriteString(cmd)
	for range c.pick(3) {
		b.WriteString(" " + c.word())
	}
	return b.String()
}

// wrapper is a program that runs the command after it.
func (c *choices) wrapper() string {
	return c.one("timeout 5", "nice -n 1", "env", "nohup", "stdbuf -oL", "setsid", "command", "exec", "time",
		"builtin", "setarch x86_64", "prlimit", "ionice", "taskset 1", "flock /tmp/l", "xargs -0", "sudo",
		"time --", "exec -a sh", "strace -f -o /dev/null", "choom -n 0 --", "/lib64/ld-linux-x86-64.so.2", "jobs -x")
}

// assign is an assignment in one of bash's ways.
func (c *choices) assign() string {
	n, v := c.name(), c.word()
	switch c.pick(8) {
	case 0:
		return n + "=" + v
	case 1:
		return n + "[" + c.expr() + "]=" + v
	case 2:
		return n + "=(" + v + " " + c.word() + ")"
	case 3:
		return ": ${" + n + c.one(":=", "=") + v + "}"
	case 4:
		return "read " + n + " <<< " + v
	case 5:
		return "printf -v " + n + " %s " + v
	case 6:
		return "mapfile -t " + n + " <<< " + v
	}
	return n + "+=" + v
}

// decl is a declaration.
func (c *choices) decl() string {
	return c.one("declare", "local", "export", "typeset", "readonly", "declare -n", "declare -i", "local -n",
		"declare -x", "export -n") + " " + c.name() + c.one("", "="+c.word())
}

// arith is a place where bash evaluates a value.
func (c *choices) arith() string {
	switch c.pick(9) {
	case 0:
		return "(( " + c.expr() + " ))"
	case 1:
		return "echo $((" + c.expr() + "))"
	case 2:
		return "let " + c.expr()
	case 3:
		return "[[ " + c.word() + " -eq " + c.word() + " ]]"
	case 4:
		return "[[ -v " + c.word() + " ]]"
	case 5:
		return "test -v " + c.word()
	case 6:
		return "echo ${!" + c.name() + "}"
	case 7:
		return "echo ${" + c.name() + "@P}"
	}
	return "echo ${" + c.name() + ":" + c.expr() + "}"
}

// expr is an arithmetic expression.
func (c *choices) expr() string {
	if c.depth > 4 {
		return c.one("q", "1", "x")
	}
	c.depth++
	defer func() { c.depth-- }()
	switch c.pick(6) {
	case 0:
		return c.name()
	case 1:
		return c.one("0", "1", "3")
	case 2:
		return c.name() + "[" + c.expr() + "]"
	case 3:
		return c.expr() + " + " + c.expr()
	case 4:
		return c.name() + "=" + c.expr()
	}
	return "$" + c.name()
}

// name is a variable name.
func (c *choices) name() string {
	return c.one("q", "x", "r", "a", "n", "y", "_", "BASH_CMDS[ls]", "BASH_ALIASES[ls]", "PATH", "BASH_ENV", "GIT_PAGER")
}

// word is a word of any kind.
func (c *choices) word() string {
	switch c.pick(14) {
	case 0, 1:
		return c.one("v", "1", "0", "/bin/rm", "'rm -f v'", "x")
	case 2:
		return c.one(`'a[$(rm -f v)]'`, `'\044(rm -f v)'`, `"a[\$(rm -f v)]"`, `$'a[\x24(rm -f v)]'`)
	case 3:
		return `"$(printf 'a[\x24(rm -f v)]')"`
	case 4:
		return "$" + c.name()
	case 5:
		return `"$` + c.one("q", "x", "1", "_", "@") + `"`
	case 6:
		return "$(" + c.simple() + ")"
	case 7:
		return c.one("{rm,-f,v}", "{x},.,-name,v,-exec,rm,-f,{},\\;}", "{a,b}", "{1..3}", "{-t},-o/tmp/o}",
			"\"`echo \"{rm,x}\" -f v`\"", `"${x:-"{-exec,rm,-f,{},;}"}"`, `$'\'{a,b}'`)
	case 8:
		return "${" + c.name() + c.one(":=", "=", ":-", "@P", "") + c.one("v", "/bin/rm", "1", "") + "}"
	case 9:
		return "$((" + c.expr() + "))"
	case 10:
		return "${!" + c.name() + "}"
	case 11:
		return "${a[" + c.expr() + "]}"
	case 12:
		return c.one("*", "v*", "[v]")
	}
	return c.one("-c", "-f", "--", "-n", "-x")
}

// heredoc is a here-document body: text with expansions, or a script.
func (c *choices) heredoc() string {
	return c.one("$((", "${", "") + c.one(c.name(), c.script()) + c.one("))", "}", "")
}

// sq quotes a script as one word.
func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// genSeeds start the fuzzer where the review found bypasses.
var genSeeds = [][]byte{
	{3, 0, 0}, {3, 1, 2}, {2, 3, 0, 2}, {6, 10, 0}, {5, 0, 3, 0}, {4, 5, 0, 2}, {8, 0, 0, 0}, {2, 7, 0, 0, 2},
}

// FuzzExecParity runs generated commands under real bash in the jail:
// every program bash executes must be one the policy saw, or the policy
// must have found an opaque part (parity_test.go).
func FuzzExecParity(f *testing.F) {
	for _, s := range genSeeds {
		f.Add(s)
	}
	j := newJailer(f)
	p := parityPolicy(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd := (&choices{b: b}).script()
		evs, err := j.run(t.Context(), cmd)
		if err != nil {
			t.Fatalf("the jail did not run %q: %v", cmd, err)
		}
		if err := parity(p, cmd, evs); err != nil {
			t.Fatalf("parity of %q: %v", cmd, err)
		}
	})
}
