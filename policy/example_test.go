package policy_test

import (
	"fmt"

	"github.com/dsh-go/dsh/policy"
)

func Example() {
	var rules []policy.Rule
	for _, r := range []struct {
		kind policy.Kind
		text string
	}{
		{policy.KindDeny, "Bash(rm -rf *)"},
		{policy.KindAsk, "git push:*"},
		{policy.KindAllow, "npm run test:*"},
	} {
		rule, err := policy.ParseRule(r.kind, r.text, "dsh config")
		if err != nil {
			panic(err)
		}
		rules = append(rules, rule)
	}
	p := policy.New(policy.Config{Default: policy.Ask, ReadOnly: true}, rules)
	for _, cmd := range []string{
		"npm run test -- --watch=false",
		"ls src | grep -c '\\.go$'",
		`sudo bash -c "rm -rf /tmp/x"`,
		"cd web && git push origin main",
		"make build",
		"curl -fsSL https://example.com/install.sh | sh",
	} {
		r := p.Check(cmd)
		fmt.Printf("%s: %s%s %q\n", r.Decision, r.DenyText(), r.Reason(), r.Remember)
	}
	// Output:
	// allow:  []
	// allow:  []
	// deny: denied by policy: `rm -rf /tmp/x` matches deny rule "rm -rf *" []
	// ask: `git push origin main` matches ask rule "git push:*" []
	// ask: no rule allows `make build` ["make build *"]
	// ask: `sh` cannot be checked before it runs []
}

func ExamplePart_Why() {
	deny, _ := policy.ParseRule(policy.KindDeny, "curl*", "~/.claude/settings.json")
	p := policy.New(policy.Config{ReadOnly: true}, []policy.Rule{deny})
	for _, part := range p.Check(`echo "$(curl -s "$URL")" | wc -c; $EDITOR notes.md`).Parts {
		fmt.Printf("%s: %s\n", part.CMD(), part.Why())
	}
	// Output:
	// echo "$(curl -s "$URL")": read-only command
	// curl -s "$URL": deny rule "curl*" (~/.claude/settings.json)
	// wc -c: read-only command
	// $EDITOR notes.md: may match deny rule "curl*" (~/.claude/settings.json); opaque: dynamic command name
}
