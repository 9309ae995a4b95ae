package policy

import (
	"strings"
	"testing"
)

// The model-facing texts of docs/spec.md §9.4, byte for byte.
func TestExactTexts(t *testing.T) {
	p := pol(t, Config{Default: Ask}, "deny:rm -rf *", "ask:git push:*", "deny:git push --force*")
	d := pol(t, Config{Default: Deny})
	for _, tc := range []struct {
		p    *Policy
		cmd  string
		deny bool
		want string
	}{
		{p, "sudo rm -rf /", true, "denied by policy: `rm -rf /` matches deny rule \"rm -rf *\""},
		{d, "make", true, "denied by policy: no rule allows `make`"},
		{d, "$X", true, "denied by policy: `$X` cannot be checked before it runs"},
		{p, "git push", false, "`git push` matches ask rule \"git push:*\""},
		{p, "make", false, "no rule allows `make`"},
		{p, "rm $X", false, "`rm $X` may match deny rule \"rm -rf *\""},
		{p, "git $X", false, "`git $X` may match deny rule \"git push --force*\""},
		{pol(t, Config{}, "ask:git push:*"), "git $X", false, "`git $X` may match ask rule \"git push:*\""},
		{p, "wget x | sh", false, "`sh` cannot be checked before it runs"},
	} {
		r := tc.p.Check(tc.cmd)
		got := r.Reason()
		if tc.deny {
			got = r.DenyText()
		}
		if got != tc.want {
			t.Errorf("Check(%q): %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// CMD is cut after 200 code points with "…", and is one line.
func TestCMD(t *testing.T) {
	p := pol(t, Config{Default: Deny})
	long := strings.Repeat("é", 300)
	for _, tc := range []struct{ cmd, want string }{
		{"make " + long, "make " + strings.Repeat("é", 195) + "…"},
		{"make " + long[:2*195], "make " + strings.Repeat("é", 195)},
		{"make " + long[:2*196], "make " + strings.Repeat("é", 195) + "…"},
		{"make 'a\nb' c", "make a b c"},
		{"make 'a\r\nb'", "make a b"},
		{"foo (\nbar", "foo ( bar"},
	} {
		if got := p.Check(tc.cmd).DenyText(); got != "denied by policy: no rule allows `"+tc.want+"`" && got != "denied by policy: `"+tc.want+"` cannot be checked before it runs" {
			t.Errorf("Check(%q).DenyText() = %q, want CMD %q", tc.cmd, got, tc.want)
		}
	}
	if got := (Part{Words: []string{"a", "b"}}).CMD(); got != "a b" {
		t.Errorf("CMD = %q", got)
	}
	rule, _ := ParseRule(KindDeny, "'a\nb' *", "x")
	r := New(Config{}, []Rule{rule}).Check("'a\nb' c")
	if got, want := r.DenyText(), "denied by policy: `a b c` matches deny rule \"'a b' *\""; got != want {
		t.Errorf("DenyText = %q, want %q", got, want)
	}
}

// DenyText is "" unless the decision is deny, Reason unless it is ask.
func TestTextsOnlyForTheirDecision(t *testing.T) {
	p := pol(t, Config{Default: Ask, ReadOnly: true}, "deny:rm *")
	for _, cmd := range []string{"ls", "rm x", "make"} {
		r := p.Check(cmd)
		if (r.Decision == Deny) != (r.DenyText() != "") || (r.Decision == Ask) != (r.Reason() != "") {
			t.Errorf("Check(%q): %s, DenyText %q, Reason %q", cmd, r.Decision, r.DenyText(), r.Reason())
		}
	}
}

// Why explains each part for `dsh policy check` (docs/spec.md §9.6).
func TestWhy(t *testing.T) {
	p := pol(t, Config{Default: Ask, ReadOnly: true}, "deny:rm -rf *", "ask:git push:*", "allow:make *")
	bare, _ := ParseRule(KindAsk, "npm publish", "")
	p = p.With(bare)
	for _, tc := range []struct{ cmd, want string }{
		{"rm -rf x", `deny rule "rm -rf *" (dsh config)`},
		{"git push", `ask rule "git push:*" (dsh config)`},
		{"make x", `allow rule "make *" (dsh config)`},
		{"rm $X x", `may match deny rule "rm -rf *" (dsh config)`},
		{"git push$X", `may match ask rule "git push:*" (dsh config)`},
		{"npm publish", `ask rule "npm publish"`},
		{"ls", "read-only command"},
		{"x=1", "no program runs"},
		{"cargo build", "no rule"},
		{"wget x | sh", "opaque: shell given no script"},
		{"$RM -rf /", `may match deny rule "rm -rf *" (dsh config); opaque: dynamic command name`},
		{"eval \"$x\"", "opaque: eval of a dynamic argument"},
		{"trap \"$x\" EXIT", "opaque: state change: trap"},
		{"foo (", "opaque: parse error"},
	} {
		r := p.Check(tc.cmd)
		last := r.Parts[len(r.Parts)-1]
		if got := last.Why(); got != tc.want {
			t.Errorf("Check(%q) last part Why = %q, want %q\n%s", tc.cmd, got, tc.want, dump(r))
		}
	}
}

// The parts, in source order, with the deciding one marked.
func TestParts(t *testing.T) {
	p := pol(t, Config{Default: Ask, ReadOnly: true}, "deny:rm -rf *", "allow:make *")
	r := p.Check("ls $(rm -rf /x) | make all; x=1; sudo rm -rf /; wget y | sh")
	type row struct {
		cmd      string
		decision Decision
		why      string
	}
	want := []row{
		{"ls $(rm -rf /x)", Allow, "read-only command"},
		{"rm -rf /x", Deny, `deny rule "rm -rf *" (dsh config)`},
		{"make all", Allow, `allow rule "make *" (dsh config)`},
		{"x=1", Allow, "no program runs"},
		{"rm -rf /", Deny, `deny rule "rm -rf *" (dsh config)`},
		{"wget y", "", "no rule"},
		{"sh", "", "opaque: shell given no script"},
	}
	if len(r.Parts) != len(want) || r.Deciding != 1 || r.Decision != Deny {
		t.Fatalf("got %s, deciding %d\n%s", r.Decision, r.Deciding, dump(r))
	}
	for i, w := range want {
		pt := r.Parts[i]
		if pt.CMD() != w.cmd || pt.Decision != w.decision || pt.Why() != w.why {
			t.Errorf("part %d = %q %s %q, want %+v", i, pt.CMD(), pt.Decision, pt.Why(), w)
		}
	}
	if !r.Parts[0].ReadOnly || !r.Parts[3].Internal || r.Parts[1].Rule.Pattern != "rm -rf *" || r.Parts[6].Opaque != reasonNoScript {
		t.Errorf("flags wrong\n%s", dump(r))
	}
	if q := p.Check("ls; make x"); q.Decision != Allow || q.Deciding != -1 || len(q.Parts) != 2 {
		t.Errorf("all allowed: %s %d", q.Decision, q.Deciding)
	}
	if q := p.Check("ls; cargo x; npm y"); q.Decision != Ask || q.Deciding != 1 {
		t.Errorf("by default: %s %d", q.Decision, q.Deciding)
	}
	if q := p.Check(""); q.Decision != Ask || q.Deciding != -1 || q.Parts != nil {
		t.Errorf("empty: %s %d %v", q.Decision, q.Deciding, q.Parts)
	}
	if q := p.Check("rm $X"); !q.Parts[0].MayMatch || q.Parts[0].Decision != Ask {
		t.Errorf("may match: %+v", q.Parts[0])
	}
}

// A policy is safe for concurrent use (run with -race).
func TestConcurrentChecks(t *testing.T) {
	p := std(t)
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for _, s := range fuzzSeeds {
				p.Check(s)
			}
		}()
	}
	for range 4 {
		<-done
	}
}
