package permissions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// BenchmarkGate measures what the gate adds to a call: the registry's
// Execute of a tool named bash that does nothing, without a gate (a Go
// caller's own stack; host.Standard always installs one), with the gate
// of a deployment without a permissions section whose session finds no
// rule in Claude Code's settings (nothing parsed, the arguments not even
// decoded), the same with a sandbox on (the arguments decoded for
// dangerouslyDisableSandbox), the same with one deny rule in the user's
// settings (the command parsed), and with a section deciding a one-line
// command by rules.
//
//	go test -run '^$' -bench Gate -count 6 ./internal/permissions/
func BenchmarkGate(b *testing.B) {
	noop := tool.Definition{Name: "bash", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) {
		return tool.TextResult("ok"), nil
	}}
	args, _ := json.Marshal(map[string]any{"command": "go test ./... && git status | head -5", "description": "d"})
	dir, ruled := b.TempDir(), b.TempDir()
	if err := os.MkdirAll(filepath.Join(ruled, ".claude"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ruled, ".claude", "settings.json"), []byte(`{"permissions":{"deny":["Bash(curl:*)"]}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	sandboxed := config.Sandbox{Mode: config.SandboxWorkspaceWrite}
	no := false
	for _, tc := range []struct {
		name string
		gate *permissions.Gate
	}{
		{"none", nil},
		{"nosection", permissions.NewWithoutSection(permissions.Options{Home: dir, ManagedDir: dir, ProjectDir: dir})},
		{"nosection-sandbox", permissions.NewWithoutSection(permissions.Options{Home: dir, ManagedDir: dir, ProjectDir: dir, Sandbox: sandboxed})},
		{"nosection-claude-rule", permissions.NewWithoutSection(permissions.Options{Home: ruled, ManagedDir: dir, ProjectDir: dir})},
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
