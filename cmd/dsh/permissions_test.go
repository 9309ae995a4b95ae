package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// permissionsConfig is a config of rules for the end-to-end tests; Claude
// Code's settings of this machine stay out (claudeSettings: false).
const permissionsConfig = `permissions:
  default: ask
  deny: ["rm -rf *"]
  claudeSettings: false
`

// TestPermissionsOverMCP drives the policy with the Go SDK's client on the
// newest protocol (the question is an input request, the call repeated
// with the answer) and on 2025-11-25 (elicitation/create within the call).
func TestPermissionsOverMCP(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var asked atomic.Int32
			var message, rememberTitle atomic.Value
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					message.Store(req.Params.Message)
					if s, ok := req.Params.RequestedSchema.(map[string]any); ok {
						props, _ := s["properties"].(map[string]any)
						r, _ := props["remember"].(map[string]any)
						title, _ := r["title"].(string)
						rememberTitle.Store(title)
					}
					if strings.Contains(req.Params.Message, "declined") {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"remember": true}}, nil
				},
			})
			cmd := exec.Command(dshBin, "mcp", "--config", writeFile(t, "dsh.yaml", permissionsConfig), "--workdir", dir)
			cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()

			bash := func(command string) string {
				return sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": command, "description": "policy"}))
			}
			if got := bash("touch denied && rm -rf /nonexistent"); got != "Error: denied by policy: `rm -rf /nonexistent` matches deny rule \"rm -rf *\"" {
				t.Errorf("deny: %q", got)
			}
			if got := bash("touch made one"); got != "(no output)" || asked.Load() != 1 {
				t.Errorf("accepted ask: %q, %d questions", got, asked.Load())
			}
			want := "Run this command?\n\ntouch made one\n\nin " + dir + "\n\nno rule allows `touch made one`"
			if got, _ := message.Load().(string); got != want {
				t.Errorf("question %q, want %q", got, want)
			}
			if got, _ := rememberTitle.Load().(string); got != "Allow `touch made *` for the rest of this session" {
				t.Errorf("remember title %q", got)
			}
			if got := bash("touch made two"); got != "(no output)" || asked.Load() != 1 {
				t.Errorf("remembered: %q, %d questions", got, asked.Load())
			}
			if got := bash("touch declined"); got != "Error: the user declined to run this command" {
				t.Errorf("declined: %q", got)
			}
			for name, want := range map[string]bool{"made": true, "one": true, "two": true, "denied": false, "declined": false} {
				if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
					t.Errorf("%s: exists %v, want %v", name, err == nil, want)
				}
			}
		})
	}
}

// TestPolicyCheck: dsh policy check prints the decision, then each part.
func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", "permissions:\n  default: ask\n  allow: [\"go test *\"]\n  deny: [\"rm -rf *\"]\n  claudeSettings: false\n")
	got := dsh(t, nil, "policy", "check", "--config", cfg, "--", "go test ./... && ls | rm -rf /")
	want := "deny\n" +
		"go test ./... → allow: allow rule \"go test *\" (dsh config)\n" +
		"ls → allow: read-only command\n" +
		"rm -rf / → deny: deny rule \"rm -rf *\" (dsh config)\n"
	if got.code != 0 || got.stdout != want {
		t.Errorf("policy check: %+v\nwant %q", got, want)
	}
	got = dsh(t, nil, "policy", "check", "--config", cfg, "--json", "--", "make")
	if got.code != 0 || !strings.Contains(got.stdout, `"decision": "ask"`) || !strings.Contains(got.stdout, `"text": "no rule allows `+"`make`"+`"`) {
		t.Errorf("policy check --json: %+v", got)
	}
	if got = dsh(t, nil, "policy", "check", "--", "rm -rf /"); got.code != 0 || !strings.HasPrefix(got.stdout, "allow\n") {
		t.Errorf("no permissions section: %+v", got)
	}
	if got = dsh(t, nil, "policy", "check"); got.code != 2 {
		t.Errorf("no command: %+v", got)
	}
}

// TestInvalidRuleIsAConfigError: exit 2 naming the rule and its line.
func TestInvalidRuleIsAConfigError(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", "permissions:\n  deny:\n    - rm -rf *\n    - Bash(rm\n")
	got := dsh(t, nil, "run", "--config", cfg, "--", "true")
	want := "dsh: config file " + cfg + ": permissions.deny[1]: invalid rule \"Bash(rm\": Bash( without its closing ) (line 4)\n"
	if got.code != 2 || got.stderr != want {
		t.Errorf("got %+v\nwant %q", got, want)
	}
}

// TestRunWithoutATerminalFallsBack: dsh run with no terminal cannot ask.
func TestRunWithoutATerminalFallsBack(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", "permissions: {default: ask, claudeSettings: false}\n")
	got := dsh(t, nil, "run", "--config", cfg, "--", "make")
	want := "Error: this command needs the user's approval (no rule allows `make`), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config."
	if got.code != 1 || got.stdout != want {
		t.Errorf("got %+v", got)
	}
}
