package policy

import (
	"slices"
	"testing"
)

// Remember suggests allow rules only when every asking part asks because
// no rule allows it (docs/spec.md §9.6 "Remember").
func TestRemember(t *testing.T) {
	p := pol(t, Config{Default: Ask, ReadOnly: true, Home: "/home/u"}, "deny:rm -rf *", "ask:git push:*")
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"npm install", []string{"npm install *"}},
		{"npm install left-pad --save", []string{"npm install *"}},
		{"make", []string{"make *"}},
		{"make -j4", []string{"make *"}},
		{"ls; make; npm ci", []string{"make *", "npm ci *"}},
		{"./build.sh --fast", []string{"./build.sh *"}},
		{"a; b; c; d; e; f", []string{"a *", "b *", "c *", "d *", "e *"}},
		{"npm i && npm i x", []string{"npm i *"}},
		{"'my tool' x", []string{"'my tool' x *"}},
		{"'*' x", []string{"'*' x *"}},
		{"tool '{a,b}'", []string{"tool '{a,b}' *"}},
		{"tool '~'", []string{"tool '~' *"}},
		{"~/bin/tool run", []string{"/home/u/bin/tool run *"}},
		{"git $X", nil},
		{"cargo $X", []string{"cargo *"}},
		{"echo x > f", []string{"echo x *"}},
		{"sudo make", []string{"sudo make *", "make *"}},
		{"timeout 5 make", []string{"make *"}},
		{"xargs grep x", []string{"xargs grep *"}},
		{"xargs npm i", []string{"xargs npm *", "npm i *"}},
		{"git push", nil},
		{"rm $X", nil},
		{"make; git push", nil},
		{"make; wget x | sh", nil},
		{"FOO=1 make", nil},
		{"x=1 > f", nil},
		{"> f", nil},
		{"ls", nil},
	} {
		r := p.Check(tc.cmd)
		if !slices.Equal(r.Remember, tc.want) {
			t.Errorf("Check(%q).Remember = %q, want %q\n%s", tc.cmd, r.Remember, tc.want, dump(r))
		}
	}
}

// Remembering the suggestions allows the command.
func TestRememberAllows(t *testing.T) {
	p := pol(t, Config{Default: Ask, ReadOnly: true, Home: "/home/u"}, "deny:rm -rf *")
	for _, cmd := range []string{
		"npm install", "make; npm ci x", "'my tool' x y", "'*' x", "tool '{a,b}' c", "~/bin/tool run",
		"sudo make all", "xargs npm i", "find . -exec touch {} \\;", "cargo $X", "echo x > f",
		"./x 'a b'", "tool '$HOME'", `tool "a\"b"`, "tool $'\\t'", "ok=1; a|b", "a\\ b c",
	} {
		r := p.Check(cmd)
		if r.Decision != Ask || r.Remember == nil {
			t.Errorf("Check(%q) = %s, remember %q\n%s", cmd, r.Decision, r.Remember, dump(r))
			continue
		}
		q := p
		for _, s := range r.Remember {
			rule, err := ParseRule(KindAllow, s, "session")
			if err != nil {
				t.Fatalf("suggestion %q: %v", s, err)
			}
			q = q.With(rule)
		}
		if got := q.Check(cmd); got.Decision != Allow {
			t.Errorf("Check(%q) after remembering %q = %s\n%s", cmd, r.Remember, got.Decision, dump(got))
		}
	}
}
