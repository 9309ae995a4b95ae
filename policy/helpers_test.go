package policy

import (
	"strings"
	"testing"
)

// pol makes a policy of rules written "kind:text" (kind allow, ask or deny).
func pol(t testing.TB, cfg Config, rules ...string) *Policy {
	t.Helper()
	kinds := map[string]Kind{"allow": KindAllow, "ask": KindAsk, "deny": KindDeny}
	var rs []Rule
	for _, s := range rules {
		k, text, _ := strings.Cut(s, ":")
		r, err := ParseRule(kinds[k], text, "dsh config")
		if err != nil {
			t.Fatalf("rule %q: %v", s, err)
		}
		rs = append(rs, r)
	}
	return New(cfg, rs)
}

// tcase is one command and what the policy must say of it.
type tcase struct {
	cmd  string
	want Decision
	text string // DenyText for a deny, Reason for an ask, "" for an allow
}

// run checks every case of a table.
func run(t *testing.T, p *Policy, cases []tcase) {
	t.Helper()
	cmds := make([]string, len(cases))
	for i, tc := range cases {
		r := p.Check(tc.cmd)
		got := r.DenyText() + r.Reason()
		if r.Decision != tc.want || got != tc.text {
			t.Errorf("Check(%q) = %s %q, want %s %q\n%s", tc.cmd, r.Decision, got, tc.want, tc.text, dump(r))
		}
		cmds[i] = tc.cmd
	}
	// Every case also runs under real bash: the policy must have seen
	// each program it executes (parity_test.go). TestExecParity says why
	// when no jail runs here.
	if j, err := theJailer(); err == nil {
		checkParity(t, j, cmds)
	}
}

// dump shows a result's parts, for failure messages.
func dump(r Result) string {
	var b strings.Builder
	for i, p := range r.Parts {
		mark := " "
		if i == r.Deciding {
			mark = "*"
		}
		b.WriteString("\t" + mark + " " + p.CMD() + " → " + string(p.Decision) + ": " + p.Why() + "\n")
	}
	return b.String()
}

// Shorthands for the texts of docs/spec.md §9.4.
func denied(cmd, rule string) string {
	return "denied by policy: `" + cmd + "` matches deny rule \"" + rule + "\""
}
func deniedNoRule(cmd string) string { return "denied by policy: no rule allows `" + cmd + "`" }
func deniedOpaque(cmd string) string {
	return "denied by policy: `" + cmd + "` cannot be checked before it runs"
}
func askRule(cmd, rule string) string { return "`" + cmd + "` matches ask rule \"" + rule + "\"" }
func noRule(cmd string) string        { return "no rule allows `" + cmd + "`" }
func mayDeny(cmd, rule string) string { return "`" + cmd + "` may match deny rule \"" + rule + "\"" }
func mayAsk(cmd, rule string) string  { return "`" + cmd + "` may match ask rule \"" + rule + "\"" }
func opaque(cmd string) string        { return "`" + cmd + "` cannot be checked before it runs" }
