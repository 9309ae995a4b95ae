package policy

import "testing"

func TestParseRuleValid(t *testing.T) {
	for _, tc := range []struct{ text, pattern string }{
		{"ls", "ls"},
		{"Bash", "*"},
		{"Bash(*)", "*"},
		{"Bash(npm run test:*)", "npm run test:*"},
		{"  Bash( git status )  ", "git status"},
		{"rm -rf *", "rm -rf *"},
		{`"a b" c`, `"a b" c`},
		{`'it'"'"'s'`, `'it'"'"'s'`},
		{`a\ b`, `a\ b`},
		{`$'\x41' b`, `$'\x41' b`},
		{"~/bin/x *", "~/bin/x *"},
		{"git {status,log}", "git {status,log}"},
		{"R --version", "R --version"},
		{"R", "R"},
		{"make(1)", "make(1)"},
		{"echo $HOME", "echo $HOME"},
		{":*", ":*"},
		{"Bash(command:rm *)", "command:rm *"},
	} {
		r, err := ParseRule(KindDeny, tc.text, "src")
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tc.text, err)
			continue
		}
		if r.Pattern != tc.pattern || r.Kind != KindDeny || r.Source != "src" {
			t.Errorf("ParseRule(%q) = %+v, want pattern %q", tc.text, r, tc.pattern)
		}
	}
}

func TestParseRuleInvalid(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		text string
		err  string
	}{
		{KindAllow, "", "empty pattern"},
		{KindAllow, "   ", "empty pattern"},
		{KindAllow, "Bash()", "empty pattern"},
		{KindAllow, "Bash( )", "empty pattern"},
		{KindAllow, "{,}", "empty pattern"},
		{KindAllow, "Bash(", "Bash( without its closing )"},
		{KindAllow, "Bash(ls", "Bash( without its closing )"},
		{KindAllow, "Bash(ls) x", "Bash( without its closing )"},
		{KindDeny, "Read(./secrets/**)", "names another tool: only Bash rules apply to commands"},
		{KindDeny, "WebFetch(domain:example.com)", "names another tool: only Bash rules apply to commands"},
		{KindDeny, "Read", "names another tool: only Bash rules apply to commands"},
		{KindDeny, "Edit(/path with spaces)", "names another tool: only Bash rules apply to commands"},
		{KindDeny, "mcp__github__create_issue", "names another tool: only Bash rules apply to commands"},
		{KindDeny, "mcp__github(x)", "names another tool: only Bash rules apply to commands"},
		{KindAsk, "'abc", "unbalanced quotes"},
		{KindAsk, `"abc`, "unbalanced quotes"},
		{KindAsk, `echo "a\"`, "unbalanced quotes"},
		{KindAsk, `$'abc`, "unbalanced quotes"},
		{KindAsk, `abc\`, "trailing backslash"},
		{KindAsk, `Bash(abc\)`, "trailing backslash"},
		{KindAsk, "echo {1..1000}", "brace expansion makes too many words"},
		{0, "ls", "unknown rule kind"},
		{Kind(7), "ls", "unknown rule kind"},
	} {
		_, err := ParseRule(tc.kind, tc.text, "src")
		if err == nil || err.Error() != tc.err {
			t.Errorf("ParseRule(%v, %q) error = %v, want %q", tc.kind, tc.text, err, tc.err)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindAllow: "allow", KindAsk: "ask", KindDeny: "deny", 0: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

// A Rule made by hand is parsed by New; an unparsable deny rule fails
// closed, an unparsable allow rule allows nothing.
func TestHandMadeRules(t *testing.T) {
	p := New(Config{Default: Ask}, []Rule{{Kind: KindAllow, Pattern: "go test *"}, {Kind: KindAsk, Pattern: "npm publish"}})
	run(t, p, []tcase{
		{"go test ./...", Allow, ""},
		{"npm publish", Ask, askRule("npm publish", "npm publish")},
	})
	p = New(Config{}, []Rule{{Kind: KindDeny, Pattern: "'broken"}, {Kind: KindAllow, Pattern: "'broken"}})
	run(t, p, []tcase{{"ls", Deny, denied("ls", "'broken")}})
	p = New(Config{Default: Deny}, []Rule{{Kind: KindAllow, Pattern: "'broken"}})
	run(t, p, []tcase{{"ls", Deny, deniedNoRule("ls")}})
	if p.HasAskOrDeny() {
		t.Error("an allow rule made HasAskOrDeny true")
	}
}

// With adds rules and leaves the policy it came from alone.
func TestWith(t *testing.T) {
	p := pol(t, Config{Default: Ask}, "deny:rm -rf *")
	r, _ := ParseRule(KindAllow, "make *", "session")
	q := p.With(r)
	run(t, p, []tcase{{"make", Ask, noRule("make")}})
	run(t, q, []tcase{{"make", Allow, ""}, {"rm -rf /", Deny, denied("rm -rf /", "rm -rf *")}})
	if !q.HasAskOrDeny() || pol(t, Config{}, "allow:x").HasAskOrDeny() || !pol(t, Config{}, "ask:x").HasAskOrDeny() {
		t.Error("HasAskOrDeny is wrong")
	}
}
