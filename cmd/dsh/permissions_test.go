package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
  allow: ["echo *"]
  deny: ["rm -rf *"]
  claudeSettings: false
`

// mcpAsker is a Go SDK client that answers each question by the command
// it is about: "declined" declines, "cancelled" cancels, anything else is
// accepted with remember. asked counts the questions; a nil mcpAsker
// declares no elicitation.
type mcpAsker struct {
	asked         atomic.Int32
	message       atomic.Value
	rememberTitle atomic.Value
}

func (a *mcpAsker) client() *mcp.Client {
	if a == nil {
		return mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil)
	}
	return mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.asked.Add(1)
			a.message.Store(req.Params.Message)
			title := ""
			if s, ok := req.Params.RequestedSchema.(map[string]any); ok {
				props, _ := s["properties"].(map[string]any)
				r, _ := props["remember"].(map[string]any)
				title, _ = r["title"].(string)
			}
			a.rememberTitle.Store(title)
			switch {
			case strings.Contains(req.Params.Message, "declined"):
				return &mcp.ElicitResult{Action: "decline"}, nil
			case strings.Contains(req.Params.Message, "cancelled"):
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"remember": true}}, nil
		},
	})
}

// TestPermissionsOverMCP drives the policy with the Go SDK's client over
// stdio on the newest protocol (the question is an input request, the
// call repeated with the answer) and on 2025-11-25 (elicitation/create
// within the call), and over streamable HTTP (dsh serve, 2025-11-25): an
// allowed command runs unasked; a denied one returns the exact text and
// never spawns; an ask accepted runs, declined and cancelled return their
// texts and run nothing; remember holds for the rest of the session and
// not for another; a client without elicitation gets the fallback.
func TestPermissionsOverMCP(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", permissionsConfig)
	for _, tc := range []struct {
		name    string
		version string
		http    bool
	}{
		{"stdio newest", "", false},
		{"stdio 2025-11-25", "2025-11-25", false},
		{"http 2025-11-25", "2025-11-25", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			url := ""
			if tc.http {
				_, stderr := startServe(t, "", nil, "--addr", "127.0.0.1:0", "--no-auth", "--config", cfg, "--workdir", dir)
				url = stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
			}
			connect := func(a *mcpAsker) *mcp.ClientSession {
				t.Helper()
				var transport mcp.Transport = &mcp.CommandTransport{
					Command:           exec.Command(dshBin, "mcp", "--config", cfg, "--workdir", dir),
					TerminateDuration: 5 * time.Second,
				}
				if tc.http {
					transport = &mcp.StreamableClientTransport{Endpoint: url}
				}
				cs, err := a.client().Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				return cs
			}
			checkPolicyOverMCP(t, dir, connect)
		})
	}
}

// checkPolicyOverMCP runs the cases of TestPermissionsOverMCP with the
// sessions connect opens, whose commands run in dir.
func checkPolicyOverMCP(t *testing.T, dir string, connect func(*mcpAsker) *mcp.ClientSession) {
	bash := func(cs *mcp.ClientSession, command string) string {
		t.Helper()
		return sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": command, "description": "policy"}))
	}
	a := &mcpAsker{}
	cs := connect(a)
	if got := bash(cs, "echo allowed"); got != "allowed\n" || a.asked.Load() != 0 {
		t.Errorf("allow: %q, %d questions", got, a.asked.Load())
	}
	if got := bash(cs, "touch denied && rm -rf /nonexistent"); got != "Error: denied by policy: `rm -rf /nonexistent` matches deny rule \"rm -rf *\"" {
		t.Errorf("deny: %q", got)
	}
	if got := bash(cs, "touch made one"); got != "(no output)" || a.asked.Load() != 1 {
		t.Errorf("accepted ask: %q, %d questions", got, a.asked.Load())
	}
	want := "Run this command?\n\ntouch made one\n\nin " + dir + "\n\nno rule allows `touch made one`"
	if got, _ := a.message.Load().(string); got != want {
		t.Errorf("question %q, want %q", got, want)
	}
	if got, _ := a.rememberTitle.Load().(string); got != "Allow `touch made *` for the rest of this session" {
		t.Errorf("remember title %q", got)
	}
	if got := bash(cs, "touch made two"); got != "(no output)" || a.asked.Load() != 1 {
		t.Errorf("remembered: %q, %d questions", got, a.asked.Load())
	}
	if got := bash(cs, "touch declined"); got != "Error: the user declined to run this command" {
		t.Errorf("declined: %q", got)
	}
	if got := bash(cs, "touch cancelled"); got != "Error: the user dismissed the approval request; the command did not run" {
		t.Errorf("cancelled: %q", got)
	}
	// Another session has not remembered `touch made *`.
	other := &mcpAsker{}
	if got := bash(connect(other), "touch made declined"); got != "Error: the user declined to run this command" || other.asked.Load() != 1 {
		t.Errorf("another session: %q, %d questions", got, other.asked.Load())
	}
	// A client that cannot be asked.
	if got := bash(connect(nil), "touch fallback"); got != "Error: this command needs the user's approval (no rule allows `touch fallback`), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config." {
		t.Errorf("no elicitation: %q", got)
	}
	for name, want := range map[string]bool{"made": true, "one": true, "two": true, "denied": false, "declined": false, "cancelled": false, "fallback": false} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
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
	if got = dsh(t, nil, "policy", "check"); got.code != 2 {
		t.Errorf("no command: %+v", got)
	}
	// --workdir is the session's cwd, so PROJECT: its .claude files count.
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(project, ".claude", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"permissions":{"deny":["Bash(make deploy*)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "CLAUDE_PROJECT_DIR="}
	cfg = writeFile(t, "dsh.yaml", "permissions: {default: allow}\n")
	got = dsh(t, env, "policy", "check", "--config", cfg, "--workdir", project, "--", "make deploy")
	if want := "deny\nmake deploy → deny: deny rule \"make deploy*\" (" + settings + ")\n"; got.code != 0 || got.stdout != want {
		t.Errorf("--workdir: %+v\nwant %q", got, want)
	}
	if got = dsh(t, env, "policy", "check", "--config", cfg, "--workdir", t.TempDir(), "--", "make deploy"); got.code != 0 || !strings.HasPrefix(got.stdout, "allow\n") {
		t.Errorf("another workdir: %+v", got)
	}
	// Without a permissions section the settings files apply alone; a
	// session that finds no rule there allows every command.
	noSection := writeFile(t, "dsh.yaml", "local: {containment: marker}\n")
	got = dsh(t, env, "policy", "check", "--config", noSection, "--workdir", project, "--", "make deploy")
	if want := "deny\nmake deploy → deny: deny rule \"make deploy*\" (" + settings + ")\n"; got.code != 0 || got.stdout != want {
		t.Errorf("no permissions section: %+v\nwant %q", got, want)
	}
	got = dsh(t, env, "policy", "check", "--config", noSection, "--workdir", t.TempDir(), "--", "rm -rf / && ls")
	if want := "allow\nrm -rf / → no rule\nls → allow: read-only command\n"; got.code != 0 || got.stdout != want {
		t.Errorf("no permissions section, no rule: %+v\nwant %q", got, want)
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
