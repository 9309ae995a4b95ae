package hooks_test

import (
	"os/exec"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// BenchmarkHookCost measures what a PreToolUse hook that exits 0 adds to a
// call, against one bare `bash -c true` spawn (the budget: the added cost
// at most 1.2× the bare spawn):
//
//	go test -run '^$' -bench HookCost -count 6 ./internal/hooks/
//
// added = call/hook − call/none; ratio = added / bare.
func BenchmarkHookCost(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	f := newFixture(b)
	for _, tc := range []struct {
		name  string
		hooks config.Hooks
	}{
		{"call/none", config.Hooks{}},
		{"call/hook", pre("Bash", command("exit 0"))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st := f.stack(b, config.File{Hooks: tc.hooks})
			s := f.session(b)
			for b.Loop() {
				if res := bash(b, st, s, map[string]any{"command": "true"}); res.IsError {
					b.Fatal(res.Text())
				}
			}
		})
	}
}
