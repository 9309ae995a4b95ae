package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The sandbox end to end (docs/spec.md §11): dsh started with credentials
// in its environment, a model's calls through MCP.

// sandboxConfig writes a config file with a local.sandbox section.
func sandboxConfig(t *testing.T, sandbox string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dsh.yaml")
	if err := os.WriteFile(path, []byte("local:\n  sandbox:\n"+sandbox), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// connectSandboxed starts dsh mcp with cfg and the secrets in its
// environment.
func connectSandboxed(t *testing.T, cfg string, env ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(dshBin, "mcp", "--config", cfg, "--workdir", t.TempDir())
	cmd.Env = append(os.Environ(), env...)
	transport := &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

var secrets = []string{"DSH_TOKEN=e2e-dsh-token-4242", "OPENAI_API_KEY=sk-e2e-openai-4242"}

// readSecrets is the attack: every environment in sight, dsh's included.
const readSecrets = "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -e e2e-dsh-token -e sk-e2e-openai"

func TestEndToEndSandbox(t *testing.T) {
	t.Parallel()
	cs := connectSandboxed(t, sandboxConfig(t, "    mode: workspace-write\n"), secrets...)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	bash := tools.Tools[0]
	if !strings.Contains(bash.Description, "Commands run in a workspace-write sandbox") {
		t.Errorf("description does not name the mode: %s", bash.Description)
	}
	if props, _ := bash.InputSchema.(map[string]any)["properties"].(map[string]any); props["dangerouslyDisableSandbox"] == nil {
		t.Errorf("no dangerouslyDisableSandbox in %v", bash.InputSchema)
	}
	call := func(args map[string]any) string {
		args["description"] = "test the sandbox"
		return sdkText(t, sdkCall(t, cs, "bash", args))
	}
	// dsh's credentials are out of reach, also in the environments of
	// the processes the command can see.
	if got := call(map[string]any{"command": readSecrets}); got != "0\n[exit code: 1]" {
		t.Errorf("the sandboxed command found dsh's credentials: %q", got)
	}
	// The hint line: for a write outside the workspace, not for an
	// ordinary failure.
	const hint = "[sandbox: writes outside the workspace and network access are blocked; if the sandbox caused this, retry with dangerouslyDisableSandbox: true to ask the user]"
	if got := call(map[string]any{"command": "echo x > /etc/dsh-e2e"}); !strings.HasSuffix(got, "\n"+hint+"\n[exit code: 1]") {
		t.Errorf("write outside the workspace: %q", got)
	}
	if got := call(map[string]any{"command": "ls /nonexistent-dsh"}); strings.Contains(got, "[sandbox:") {
		t.Errorf("an ordinary failure got the hint: %q", got)
	}
	// Leaving the sandbox needs the user, whom this client cannot ask.
	want := "Error: this command needs the user's approval (runs outside the sandbox), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config."
	if got := call(map[string]any{"command": "true", "dangerouslyDisableSandbox": true}); got != want {
		t.Errorf("escape without an asker: %q", got)
	}
}

// TestEndToEndSandboxControl is the control of the attack above: without
// a sandbox the same command finds dsh's credentials.
func TestEndToEndSandboxControl(t *testing.T) {
	t.Parallel()
	cs := connectSandboxed(t, sandboxConfig(t, "    mode: off\n"), secrets...)
	got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": readSecrets, "description": "read"}))
	if got == "0\n[exit code: 1]" {
		t.Errorf("without a sandbox the attack found nothing, so it proves nothing: %q", got)
	}
}

func TestEndToEndSandboxEscapeDisabled(t *testing.T) {
	t.Parallel()
	cs := connectSandboxed(t, sandboxConfig(t, "    mode: read-only\n    allowUnsandboxed: false\n"))
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if props, _ := tools.Tools[0].InputSchema.(map[string]any)["properties"].(map[string]any); props["dangerouslyDisableSandbox"] != nil {
		t.Errorf("dangerouslyDisableSandbox offered with allowUnsandboxed: false")
	}
	got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "true", "description": "d", "dangerouslyDisableSandbox": true}))
	if want := "Error: denied by policy: running outside the sandbox is disabled (allowUnsandboxed: false)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	hint := "[sandbox: all writes and network access are blocked]"
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "touch f", "description": "d"})); !strings.Contains(got, "\n"+hint+"\n[exit code: 1]") {
		t.Errorf("read-only hint: %q", got)
	}
}

func TestServeHidesItsTokenFile(t *testing.T) {
	t.Parallel()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("e2e-token-file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dshBin, "serve", "--addr", "127.0.0.1:0", "--token-file", token,
		"--config", sandboxConfig(t, "    mode: workspace-write\n"))
	stderr := newNotifyBuffer()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient("e2e-token-file-secret")}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "cat " + token, "description": "read the token"}))
	if strings.Contains(got, "e2e-token-file-secret") {
		t.Errorf("a sandboxed command read dsh serve's token file: %q", got)
	}
}

func TestSandboxThatCannotBeEnforcedIsExit2(t *testing.T) {
	t.Parallel()
	bin := t.TempDir() // a PATH with bash and without bwrap
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bash, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"doctor", "run"} {
		args := []string{sub, "--config", sandboxConfig(t, "    mode: read-only\n    backend: bwrap\n")}
		if sub == "run" {
			args = append(args, "--", "true")
		}
		cmd := exec.Command(dshBin, args...)
		cmd.Env = append(os.Environ(), "PATH="+bin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := exitStatus(err); code != 2 || stderr.String() != "dsh: sandbox: bubblewrap not found (apt install bubblewrap)\n" {
			t.Errorf("dsh %s: exit %d, stderr %q", sub, code, stderr.String())
		}
	}
}

// exitStatus is a finished command's exit status.
func exitStatus(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// httpClient sends token as the bearer of every request.
func httpClient(token string) *http.Client {
	return &http.Client{Transport: bearerTransport{token}}
}
