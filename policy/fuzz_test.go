package policy

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// fuzzSeeds are commands of every shape the policy reads.
var fuzzSeeds = []string{
	"ls -la | grep x > out 2>&1 &",
	"if [ -f x ]; then cat x; elif true; then :; else exit 1; fi",
	"for f in *.go; do gofmt -l \"$f\"; done; while read l; do echo $l; done < f",
	"case $x in a|b) echo ${x:-$(date)};; *) ;; esac",
	"f() { local IFS=:; echo \"$@\"; }; f a b",
	"sudo -u root timeout -s KILL 5 nice -n 1 env FOO=1 xargs -I{} sh -c 'echo {}'",
	"find . -name '*.o' -exec rm -f {} + -o -execdir echo {} \\;",
	"bash -c \"eval 'echo \\$(date)'\"; eval \"$x\"; trap 'rm x' EXIT; alias ll='ls -l'",
	"cat <<'EOF' | bash\nrm -rf /\nEOF\n",
	"cat <<EOF\n$(whoami) `id` ${HOME}\nEOF\n",
	"[ -v 'a[$(id)]' ] && printf -v x '%s' \"$(( 1 + ${#a[@]} ))\"",
	"declare -n r=PATH; export A=1 B=$(x); (( i++ )); let j=2; [[ $a =~ ^b ]]",
	"{rm,-rf,/}; $'\\x72m' -rf ~; r\\m x; \"r\"m y",
	"coproc c { cat; }; time -p ls; ! true; echo <(ls) >(wc)",
	"env -S 'ls -l' ; watch -n1 'df -h'; su -c 'id' root; script -qc ls /dev/null",
	"busybox sh -c ls; toybox sh -c 'ls'; fish -c ls; exec -l bash",
	"echo {1..5} {a..c} {01..10..2} ~ ~/x ~root x=~/a:~/b",
	"foo (", "echo 'unterminated", "$(", "a=(1 2 [3]=4)", "select x in a b; do break; done",
	"x=$'a\\x00b'; y=$\"msg\"; echo ${!p@} \"${a[*]}\"",
}

// FuzzCheck: the checker never fails on its own code (Check contains
// panics, so a panic shows as the part "analysis failed"), and its result
// is consistent.
func FuzzCheck(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	p := std(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		r := p.Check(cmd)
		for _, pt := range r.Parts {
			if pt.Opaque == reasonInternal {
				t.Fatalf("Check(%q) failed inside", cmd)
			}
		}
		checkResult(t, cmd, r)
	})
}

// checkResult checks what holds of every result.
func checkResult(t *testing.T, cmd string, r Result) {
	switch r.Decision {
	case Allow, Ask, Deny:
	default:
		t.Fatalf("Check(%q) decided %q", cmd, r.Decision)
	}
	if r.Deciding < -1 || r.Deciding >= len(r.Parts) || len(r.Remember) > maxRemember {
		t.Fatalf("Check(%q): deciding %d of %d parts, remember %q", cmd, r.Deciding, len(r.Parts), r.Remember)
	}
	if (r.Decision == Deny) != (r.DenyText() != "") || (r.Decision == Ask) != (r.Reason() != "") {
		t.Fatalf("Check(%q) = %s with texts %q %q", cmd, r.Decision, r.DenyText(), r.Reason())
	}
	if strings.ContainsAny(r.DenyText()+r.Reason(), "\r\n") {
		t.Fatalf("Check(%q): text of several lines %q", cmd, r.DenyText()+r.Reason())
	}
	for _, s := range r.Remember {
		if _, err := ParseRule(KindAllow, s, ""); err != nil {
			t.Fatalf("Check(%q): suggestion %q does not parse: %v", cmd, s, err)
		}
	}
}

// The contexts a denied command d is put in, beside the statements a
// (docs/spec.md §9.3); each returns the command to check.
var contexts = []func(a []*syntax.Stmt, d *syntax.Stmt) string{
	func(a []*syntax.Stmt, d *syntax.Stmt) string { return printed(append(a, d)...) },
	func(a []*syntax.Stmt, d *syntax.Stmt) string { return printed(append([]*syntax.Stmt{d}, a...)...) },
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(stmt(&syntax.BinaryCmd{Op: syntax.Pipe, X: block(a), Y: d}))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(stmt(&syntax.BinaryCmd{Op: syntax.OrStmt, X: block(a), Y: d}))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(call(lit("echo"), word(&syntax.CmdSubst{Stmts: append(a, d)})))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(call(lit("cat"), word(&syntax.ProcSubst{Op: syntax.CmdIn, Stmts: append(a, d)})))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(stmt(&syntax.Subshell{Stmts: append(a, d)}))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(stmt(&syntax.FuncDecl{Name: &syntax.Lit{Value: "f"}, Parens: true, Body: block(append(a, d))}))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(stmt(&syntax.IfClause{Cond: []*syntax.Stmt{block(a)}, Then: []*syntax.Stmt{d}}))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return "bash -c " + shellQuote(printed(append(a, d)...))
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string { return "eval " + shellQuote(printed(append(a, d)...)) },
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(append(a, call(lit("sudo"), lit("timeout"), lit("5"), lit("nice"), lit("env"), lit("rm"), lit("-rf"), lit("/x")))...)
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string {
		return printed(append(a, call(lit("find"), lit("."), lit("-exec"), lit("rm"), lit("-rf"), lit("/x"), lit(";")))...)
	},
	func(a []*syntax.Stmt, d *syntax.Stmt) string { return printed(append(a, d)...) + "\n" + printed(a...) },
}

// FuzzDeniedNeverAllowed: a denied command put in any context, beside any
// other command, is never allowed.
func FuzzDeniedNeverAllowed(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, uint8(i))
	}
	p := pol(f, Config{ReadOnly: true}, "deny:rm -rf *")
	f.Fuzz(func(t *testing.T, other string, ctx uint8) {
		a, err := newParser().Parse(strings.NewReader(other), "")
		if err != nil || strings.Contains(other, "\x00") {
			return // not a command, or one no word can quote
		}
		d := call(lit("rm"), lit("-rf"), lit("/x"))
		cmd := contexts[int(ctx)%len(contexts)](a.Stmts, d)
		if r := p.Check(cmd); r.Decision == Allow {
			t.Fatalf("Check(%q) = allow\n%s", cmd, dump(r))
		}
	})
}

func stmt(c syntax.Command) *syntax.Stmt   { return &syntax.Stmt{Cmd: c} }
func block(ss []*syntax.Stmt) *syntax.Stmt { return stmt(&syntax.Block{Stmts: ss}) }
func word(p syntax.WordPart) *syntax.Word  { return &syntax.Word{Parts: []syntax.WordPart{p}} }
func lit(s string) *syntax.Word            { return word(&syntax.Lit{Value: s}) }

func call(args ...*syntax.Word) *syntax.Stmt { return stmt(&syntax.CallExpr{Args: args}) }

// printed prints statements as a script.
func printed(ss ...*syntax.Stmt) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, &syntax.File{Stmts: ss})
	return b.String()
}

// shellQuote quotes a script as one word.
func shellQuote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return "'x'"
	}
	return q
}

// FuzzParseRule: ParseRule never panics, and a rule it accepts compiles
// and parses again from its Pattern in Bash(…).
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash(rm -rf *)", "npm run test:*", `"a b" 'c' $'\x41' d\ e`, "{a,b}*", "~/x *", "Read(x)", "Bash("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseRule(KindDeny, text, "")
		if err != nil {
			return
		}
		if _, err := ParseRule(KindAllow, "Bash("+r.Pattern+")", ""); err != nil {
			t.Fatalf("pattern %q of %q: %v", r.Pattern, text, err)
		}
		New(Config{Home: "/h"}, []Rule{r}).Check(text)
	})
}
