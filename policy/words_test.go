package policy

import (
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// staticWords are words whose values the policy computes without running
// anything; bash must agree.
var staticWords = []string{
	`"r"m`, `r\m`, `'rm'`, `$'\x72m'`, `$'\162m'`, `$'\u00e9t\u00e9'`, `$'a\tb\nc'`, `$'\e[0m'`,
	`$'a\x00b'`, `$'\cA'`, `$'it\'s'`, `$'\q'`, `"a\"b"`, `"a\$b"`, `"a\zb"`, `"a\\b"`, `'a\b'`,
	`a\ b`, `\{a,b\}`, `{a,b}c`, `x{}y`, `{x}`, `{a,b\,c}`, `{a,{b,c}}d`, `{a,b}{1,2}`,
	`{1..3}`, `{01..03}`, `{-2..2}`, `{3..1}`, `{a..e..2}`, `{Z..b}`, `{1..10..3}`, `{1..2..0}`,
	`{a..c}{1..2}`, `"{a,b}"`, `a{b`, `a}b`, `{a..}`, `$"x"`, `~`, `~/x`, `~"/x"`, `a~`, `"~"`,
	`\~`, `~:x`, `x=~/a`, `x=~/a:~/b`, `--x=~/a`, `x=a:~/b`, `a:~/b`, `"x"=~/a`, `x\=~/a`, `{~,x}/y`,
	`a{,}`, `{,}b`, `x{,}y`, `'*'`, `\*`, `"a*b"`, `[`, `]`, `a]`, `{,}`, `-{a,b}-`, `{~,~/y}`,
	// Brace pairs that are no expansion (issue 25): bash pairs the first
	// brace with a later one.
	`{x},.,-name,v,-exec,rm,-f,{},\;}`, `{-t},-o/tmp/sortout}`, `a{},b}`, `{1..3{a,b}}`, `{a..b"x,y"}`,
	`{a"x,y"b}`, `{a,"x,y"}`, `{"1"..3}`, `{1..3}x{a,b}`, `x{y}z{a,b}`, `{{a,b}`, `{a,b}}`, `{}{a,b}`,
	`{a.."b"}`, `{1..3..x}`, `{a,b}{`, `{a,b}\ {c,d}`,
}

// TestBracesAgreeWithBash: words of braces, commas, dots, quotes and
// escapes, made at random (seeded, so a failure repeats), expand as bash
// 5.2 expands them.
func TestBracesAgreeWithBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	pieces := []string{"{", "}", ",", "a", "b", "..", "1", "3", "-", `\,`, `\{`, `'x,y'`, `"z"`, "x", "0", "."}
	r := rand.New(rand.NewPCG(25, 1))
	words := make([]string, 3000)
	var script strings.Builder
	for i := range words {
		var w strings.Builder
		for range 1 + r.IntN(10) {
			w.WriteString(pieces[r.IntN(len(pieces))])
		}
		words[i] = w.String()
		script.WriteString("printf '%s\\0' " + words[i] + "; printf '\\1'\n")
	}
	cmd := exec.Command("bash", "--norc", "-c", script.String())
	cmd.Env = []string{"HOME=/home/u", "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	results := strings.Split(string(out), "\x01")
	for i, w := range words {
		want := strings.Split(strings.TrimSuffix(results[i], "\x00"), "\x00")
		got, ok := evalStatic(t, w)
		if !ok || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("word %s: policy %q (static %v), bash %q", w, got, ok, want)
		}
	}
}

func TestStaticWordsAgreeWithBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, w := range staticWords {
		cmd := exec.Command("bash", "--norc", "-c", "printf '%s\\0' "+w)
		cmd.Env = []string{"HOME=/home/u", "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("bash %q: %v", w, err)
			continue
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		got, ok := evalStatic(t, w)
		if !ok || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("word %s: policy %q (static %v), bash %q", w, got, ok, want)
		}
	}
}

// evalStatic evaluates one word as the policy does.
func evalStatic(t *testing.T, word string) ([]string, bool) {
	f, err := newParser().Parse(strings.NewReader("x "+word), "")
	if err != nil {
		t.Fatalf("parse %q: %v", word, err)
	}
	c := &checker{p: New(Config{Home: "/home/u"}, nil)}
	sc := &scope{src: "x " + word}
	var out []string
	for _, a := range c.args(sc, f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1:]) {
		if a.dyn {
			return out, false
		}
		out = append(out, a.text)
	}
	return out, true
}

func TestDynamicWordKinds(t *testing.T) {
	for _, tc := range []struct {
		word  string
		multi bool // may stand for several words
	}{
		{`$x`, true}, {`"$x"`, false}, {`${x}`, true}, {`"${x:-a}"`, false}, {`$(x)`, true},
		{`"$(x)"`, false}, {"`x`", true}, {`$((1))`, true}, {`"$((1))"`, false}, {`"$@"`, true},
		{`"${a[@]}"`, true}, {`"$*"`, true}, {`"${!p@}"`, true}, {`"${#a[@]}"`, false},
		{`<(x)`, false}, {`~u`, false}, {`~+/x`, false}, {`~-`, false}, {`*`, true}, {`a?`, true},
		{`[ab]`, true}, {`x[1]`, true}, {`@(a|b)`, true}, {`"$x"y`, false}, {`$x"y"`, true},
		{`a"$x"b`, false}, {`{a,$x}`, true},
	} {
		f, err := newParser().Parse(strings.NewReader("x "+tc.word), "")
		if err != nil {
			t.Fatalf("parse %q: %v", tc.word, err)
		}
		c := &checker{p: New(Config{Home: "/home/u"}, nil)}
		args := c.args(&scope{src: "x " + tc.word}, f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1:])
		a := args[len(args)-1]
		if !a.dyn || a.multi != tc.multi || (len(args) == 1 && a.text != tc.word) {
			t.Errorf("word %s: %+v, want dynamic, multi %v, as written", tc.word, args, tc.multi)
		}
	}
}
