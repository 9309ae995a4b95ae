package hooks_test

import (
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/hooks"
	"github.com/dsh-go/dsh/tool"
)

// TestRulings: a hook that blocks, rewrites into invalid input, or settles
// the policy's ask is named as what decided (the audit log's decidedBy,
// docs/spec.md §15); a failed hook is counted.
func TestRulings(t *testing.T) {
	f := newFixture(t)
	off := false
	const (
		block   = "echo no >&2; exit 2"
		invalid = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":42}}}'`
		allow   = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`
		fails   = "exit 1"
	)
	for _, tc := range []struct {
		name, script string
		perm         *config.Permissions
		want         tool.Ruling
	}{
		{"block", block, nil, tool.Ruling{Outcome: tool.OutcomeBlocked, By: "hook: " + block + " (dsh config)"}},
		{"invalid input", invalid, nil, tool.Ruling{Outcome: tool.OutcomeInvalid, By: "hook: " + invalid + " (dsh config)"}},
		{"allow settles an ask", allow, &config.Permissions{Default: "ask", ClaudeSettings: &off}, tool.Ruling{Outcome: tool.OutcomeAllow, By: "hook: " + allow + " (dsh config)"}},
		{"failed hook", fails, nil, tool.Ruling{Outcome: tool.OutcomeAllow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := f.stack(t, config.File{Hooks: pre("Bash", command(tc.script)), Permissions: tc.perm})
			res := bash(t, st, f.session(t), map[string]any{"command": "/bin/true"})
			if res.Ruling != tc.want {
				t.Errorf("ruling %+v, want %+v (%q)", res.Ruling, tc.want, res.Text())
			}
			want := uint64(0)
			if tc.script == fails {
				want = 1
			}
			if n := st.Hooks.Failures(hooks.PreToolUse); n != want {
				t.Errorf("%d PreToolUse failures counted, want %d", n, want)
			}
		})
	}
}
