package permissions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// BenchmarkGate measures what the gate adds to a call: the registry's
// Execute of a tool named bash that does nothing, without a gate (no
// permissions section: host.Standard installs none), with the gate of a
// deployment without a permissions section but with a sandbox or hooks,
// and with one deciding a one-line command by rules.
//
//	go test -run '^$' -bench Gate -count 6 ./internal/permissions/
func BenchmarkGate(b *testing.B) {
	noop := tool.Definition{Name: "bash", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) {
		return tool.TextResult("ok"), nil
	}}
	args, _ := json.Marshal(map[string]any{"command": "go test ./... && git status | head -5", "description": "d"})
	dir := b.TempDir()
	no := false
	for _, tc := range []struct {
		name string
		gate *permissions.Gate
	}{
		{"none", nil},
		// No permissions section, but a sandbox or hooks: the gate
		// parses nothing and only looks for dangerouslyDisableSandbox.
		{"nopolicy", permissions.NewWithoutPolicy(permissions.Options{Home: dir, ManagedDir: dir})},
		{"rules", permissions.New(config.Permissions{
			Default: "ask", Allow: []string{"go test *", "npm test *"}, Ask: []string{"git push *"}, Deny: []string{"rm -rf *", "sudo *"}, ClaudeSettings: &no,
		}, permissions.Options{Home: dir, ManagedDir: dir})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			reg := tool.NewRegistry()
			if err := reg.Register(noop); err != nil {
				b.Fatal(err)
			}
			if tc.gate != nil {
				reg.UsePre(tc.gate.Middleware())
			}
			s := session.New("bench", dir)
			defer s.End()
			call := tool.Call{Name: "bash", Args: args, Session: s}
			for b.Loop() {
				if res := reg.Execute(context.Background(), call); res.IsError {
					b.Fatal(res.Text())
				}
			}
		})
	}
}
