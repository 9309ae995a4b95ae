package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The sandbox end to end (docs/spec.md §11): dsh started with credentials
// in its environment, a model's calls through MCP.

// sandboxConfig writes a config file with a local.sandbox section.
func sandboxConfig(t *testing.T, sandbox string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dsh.yaml")
	// The memory attacks can take longer than the default yield (50 s) on
	// a loaded machine: their result must come back as the call's own.
	if err := os.WriteFile(path, []byte("bash:\n  yieldAfterMs: 0\nlocal:\n  sandbox:\n"+sandbox), 0o600); err != nil {
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

// secretsPattern finds the secrets, and not itself in a command line.
const secretsPattern = "'e2e-dsh-token-[0-9]{4}|sk-e2e-openai-[0-9]{4}'"

// readSecrets is the attack: every environment in sight, dsh's included,
// and the memory of every process in sight.
func readSecrets(t *testing.T) string {
	return "{ cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; for p in /proc/[0-9]*; do " +
		attackCommand(t, "find", "${p#/proc/}", secretsPattern) + "; done; } | grep -c -E " + secretsPattern
}

// TestEndToEndSandbox: on each backend, dsh's credentials are out of
// its commands' reach, the hint line comes where it should, and leaving
// the sandbox needs a user to ask.
func TestEndToEndSandbox(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			cfg := sandboxConfig(t, "    mode: workspace-write\n    backend: "+backend+"\n")
			if got := dsh(t, nil, "doctor", "--config", cfg); got.code == 2 {
				t.Skipf("SKIP-REASON: no %s sandbox here: %s", backend, got.stderr)
			}
			endToEndSandbox(t, cfg, backend)
		})
	}
}

func endToEndSandbox(t *testing.T, cfg, backend string) {
	cs := connectSandboxed(t, cfg, secrets...)
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
	if got := call(map[string]any{"command": readSecrets(t)}); got != "0\n[exit code: 1]" {
		t.Errorf("the sandboxed command found dsh's credentials: %q", got)
	}
	// The hint line: for a write outside the workspace, not for an
	// ordinary failure.
	// The network is by domain with bwrap and with Landlock from ABI 4
	// (the default map), off with an older Landlock, where the default
	// map cannot be done.
	hint := "[sandbox: writes outside the workspace and network access are blocked; if the sandbox caused this, retry with dangerouslyDisableSandbox: true to ask the user]"
	if abi, _ := llsys.LandlockGetABIVersion(); backend == "bwrap" || abi >= 4 {
		hint = "[sandbox: writes outside the workspace are blocked; if the sandbox caused this, retry with dangerouslyDisableSandbox: true to ask the user]"
	}
	if got := call(map[string]any{"command": "echo x > /etc/dsh-e2e"}); !strings.HasSuffix(got, "\n"+hint+"\n[exit code: 1]") {
		t.Errorf("write outside the workspace: %q", got)
	}
	if got := call(map[string]any{"command": "ls /nonexistent-dsh"}); strings.Contains(got, "[sandbox:") {
		t.Errorf("an ordinary failure got the hint: %q", got)
	}
	// A finished task's final read gets it too, before the status.
	started := sdkFirst(t, sdkCall(t, cs, "bash", map[string]any{"command": "echo x > /etc/dsh-e2e", "description": "test the sandbox", "run_in_background": true}))
	id, ok := strings.CutPrefix(started, "started background task ")
	if !ok {
		t.Fatalf("background start: %q", started)
	}
	if got := sdkText(t, sdkCall(t, cs, "task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": 10000})); !strings.HasSuffix(got, "\n"+hint+"\n[status: completed, exit code: 1]") {
		t.Errorf("a failed task's final read: %q", got)
	}
	if got, want := call(map[string]any{"command": "true", "dangerouslyDisableSandbox": "yes"}), `Error: invalid arguments: "dangerouslyDisableSandbox" must be a boolean`; got != want {
		t.Errorf("a string for dangerouslyDisableSandbox: %q, want %q", got, want)
	}
	// Leaving the sandbox needs the user, whom this client cannot ask.
	if got, want := call(map[string]any{"command": "true", "dangerouslyDisableSandbox": true}), escapeNoAsker; got != want {
		t.Errorf("escape without an asker: %q", got)
	}
}

// TestEndToEndSandboxControl is the control of the attack above: without
// a sandbox the same attack on dsh finds its credentials, when dsh runs
// as root: in its memory, since its environment no longer holds them.
// (Without root, dsh's memory is out of its commands' reach even
// unsandboxed: TestSelfOutOfReach.)
func TestEndToEndSandboxControl(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: without root, no command can read dsh's memory: there is no control to run")
	}
	cs := connectSandboxed(t, sandboxConfig(t, "    mode: off\n"), secrets...)
	attack := attackCommand(t, "find", "$PPID", secretsPattern) + " | grep -c -E " + secretsPattern
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": attack, "description": "read"})); got != "2\n" {
		t.Errorf("without a sandbox the attack did not find both secrets, so it proves nothing: %q", got)
	}
}

// escapeNoAsker is the refusal of an escape nobody can be asked about
// (exact, docs/spec.md §11).
const escapeNoAsker = "Error: this command needs the user's approval (runs outside the sandbox), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config."

// elicitations is an MCP client's record of the questions it was asked:
// it accepts each, unless the message contains "declined".
type elicitations struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
}

func (e *elicitations) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params)
	e.mu.Unlock()
	if strings.Contains(req.Params.Message, "declined") {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"remember": true}}, nil
}

func (e *elicitations) list() []*mcp.ElicitParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.asked)
}

// connectAsking starts dsh mcp with cfg in workdir, as a client that
// answers elicitations with e, on protocol version (""; the newest).
func connectAsking(t *testing.T, cfg, workdir, version string, e *elicitations) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{ElicitationHandler: e.handle})
	cmd := exec.Command(dshBin, "mcp", "--config", cfg, "--workdir", workdir)
	transport := &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestEndToEndSandboxEscape: a model's call with dangerouslyDisableSandbox
// asks the user through MCP elicitation, on the newest protocol (an input
// request, the call repeated with the answer) and on 2025-11-25
// (elicitation/create within the call), with no permissions section: the
// question byte for byte with no remember; accepted, the command runs
// outside the sandbox (its write outside the workspace lands, where the
// same command sandboxed does not); declined, nothing runs.
func TestEndToEndSandboxEscape(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+version, func(t *testing.T) {
			t.Parallel()
			workdir, outside := t.TempDir(), t.TempDir()
			var e elicitations
			cs := connectAsking(t, sandboxConfig(t, "    mode: workspace-write\n"), workdir, version, &e)
			call := func(args map[string]any) string {
				args["description"] = "leave the sandbox"
				return sdkText(t, sdkCall(t, cs, "bash", args))
			}
			control := filepath.Join(outside, "control")
			if got := call(map[string]any{"command": "echo x > " + control}); !strings.HasSuffix(got, "[exit code: 1]") || exists(control) {
				t.Fatalf("sandboxed, the write outside the workspace landed, so the test proves nothing: %q", got)
			}
			if n := len(e.list()); n != 0 {
				t.Errorf("a sandboxed call asked %d questions", n)
			}

			escaped := filepath.Join(outside, "escaped")
			if got := call(map[string]any{"command": "echo x > " + escaped, "dangerouslyDisableSandbox": true}); got != "(no output)" || !exists(escaped) {
				t.Errorf("accepted: %q, wrote outside the workspace: %v", got, exists(escaped))
			}
			asked := e.list()
			if len(asked) != 1 {
				t.Fatalf("%d questions, want 1", len(asked))
			}
			want := "Run this command?\n\necho x > " + escaped + "\n\nin " + workdir + ", outside the sandbox\n\nruns outside the sandbox"
			if asked[0].Message != want {
				t.Errorf("question %q, want %q", asked[0].Message, want)
			}
			if props, _ := asked[0].RequestedSchema.(map[string]any)["properties"].(map[string]any); len(props) != 0 {
				t.Errorf("remember offered: %v", asked[0].RequestedSchema)
			}

			declined := filepath.Join(outside, "declined")
			if got := call(map[string]any{"command": "touch " + declined, "dangerouslyDisableSandbox": true}); got != "Error: the user declined to run this command" || exists(declined) {
				t.Errorf("declined: %q, ran %v", got, exists(declined))
			}
			if n := len(e.list()); n != 2 {
				t.Errorf("%d questions after the decline, want 2 (nothing remembered)", n)
			}
		})
	}
}

// TestEndToEndSandboxEscapeNoElicitation: a client that cannot be asked
// gets the fallback text, even with askFallback: allow, and nothing runs.
func TestEndToEndSandboxEscapeNoElicitation(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", "local:\n  sandbox:\n    mode: workspace-write\npermissions:\n  askFallback: allow\n  default: ask\n  claudeSettings: false\n")
	cs := connectSandboxed(t, cfg)
	target := filepath.Join(t.TempDir(), "escaped")
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "touch " + target, "description": "d", "dangerouslyDisableSandbox": true})); got != escapeNoAsker || exists(target) {
		t.Errorf("got %q, ran %v; want %q", got, exists(target), escapeNoAsker)
	}
	// askFallback: allow still runs what the policy alone asks about, in
	// the sandbox.
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "touch made", "description": "d"})); got != "(no output)" {
		t.Errorf("askFallback allow: %q", got)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestEndToEndSandboxEscapeDisabled(t *testing.T) {
	t.Parallel()
	var e elicitations
	cs := connectAsking(t, sandboxConfig(t, "    mode: read-only\n    allowUnsandboxed: false\n"), t.TempDir(), "", &e)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if props, _ := tools.Tools[0].InputSchema.(map[string]any)["properties"].(map[string]any); props["dangerouslyDisableSandbox"] != nil {
		t.Errorf("dangerouslyDisableSandbox offered with allowUnsandboxed: false")
	}
	target := filepath.Join(t.TempDir(), "escaped")
	got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "touch " + target, "description": "d", "dangerouslyDisableSandbox": true}))
	if want := "Error: denied by policy: running outside the sandbox is disabled (allowUnsandboxed: false)"; got != want || exists(target) || len(e.list()) != 0 {
		t.Errorf("got %q (ran %v, %d questions), want %q", got, exists(target), len(e.list()), want)
	}
	hint := "[sandbox: all writes are blocked]" // the default network, by domain
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "touch f", "description": "d"})); !strings.Contains(got, "\n"+hint+"\n[exit code: 1]") {
		t.Errorf("read-only hint: %q", got)
	}
}

func TestServeHidesItsTokenFile(t *testing.T) {
	t.Parallel()
	for _, relative := range []bool{false, true} {
		t.Run(fmt.Sprint("relative=", relative), func(t *testing.T) { serveHidesItsTokenFile(t, relative) })
	}
}

// serveHidesItsTokenFile is TestServeHidesItsTokenFile with --token-file
// absolute, or relative to dsh's cwd.
func serveHidesItsTokenFile(t *testing.T, relative bool) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("e2e-token-file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	arg := token
	if relative {
		arg = "token"
	}
	cmd := exec.Command(dshBin, "serve", "--addr", "127.0.0.1:0", "--token-file", arg,
		"--config", sandboxConfig(t, "    mode: workspace-write\n"))
	cmd.Dir = dir
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
	got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "cat " + token + "; echo read", "description": "read the token"}))
	if strings.Contains(got, "e2e-token-file-secret") || !strings.HasSuffix(got, "read\n") {
		t.Errorf("a sandboxed command read dsh serve's token file: %q", got)
	}
}

// TestSandboxThatCannotBeEnforcedIsExit2: every command that would run
// commands (doctor too) refuses to start, exit 2, naming what is missing.
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
	// bwrap asked for by name; auto, where landlock cannot do what the
	// config asks either: both reasons, joined.
	const noBwrap = "dsh: sandbox: bubblewrap not found (apt install bubblewrap)"
	for _, tc := range []struct{ sandbox, want string }{
		{"    mode: read-only\n    backend: bwrap\n", noBwrap + "\n"},
		{"    mode: read-only\n    allowSockets: [/run/dsh-e2e.sock]\n",
			noBwrap + " and landlock cannot keep only the allowSockets reachable (it cannot tell Unix sockets apart below ABI 9): use bwrap, or leave allowSockets empty\n"},
	} {
		cfg := sandboxConfig(t, tc.sandbox)
		for _, args := range [][]string{{"doctor"}, {"run", "--config", cfg, "--", "true"}, {"mcp"}, {"serve", "--addr", "127.0.0.1:0"}} {
			if args[0] != "run" {
				args = append(args, "--config", cfg)
			}
			ctx, cancel := context.WithTimeout(t.Context(), proctest.Scale(30*time.Second))
			cmd := exec.CommandContext(ctx, dshBin, args...)
			cmd.Env = append(os.Environ(), "PATH="+bin, "DSH_TOKEN=e2e-token-0123456789abcdef")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			cancel()
			// Another dsh of the tests may have died just before: the
			// sweep's log lines are not this dsh's refusal.
			own, _ := splitSweepLog(stderr.String())
			if code := exitStatus(err); code != 2 || own != tc.want {
				t.Errorf("dsh %s with %q: exit %d, stderr %q, want %q", args[0], tc.sandbox, code, stderr.String(), tc.want)
			}
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

// TestSandboxHidesTheAuditLog is the attack of a command on the audit log
// in its workspace: it erases the lines of earlier calls and appends a
// forged one. Sandboxed, it can neither read nor edit the file, and the
// lines dsh wrote are all there.
func TestSandboxHidesTheAuditLog(t *testing.T) {
	t.Parallel()
	for _, relative := range []bool{false, true} {
		t.Run(fmt.Sprint("relative=", relative), func(t *testing.T) { sandboxHidesTheAuditLog(t, relative) })
	}
}

// sandboxHidesTheAuditLog is TestSandboxHidesTheAuditLog with the audit
// path as written in the config absolute, or relative to dsh's cwd.
func sandboxHidesTheAuditLog(t *testing.T, relative bool) {
	work := t.TempDir()
	audit := filepath.Join(work, "audit.jsonl")
	path := audit
	if relative {
		path = "audit.jsonl"
	}
	cfg := sandboxConfig(t, "    mode: workspace-write\naudit:\n  path: "+path+"\n")
	cmd := exec.Command(dshBin, "mcp", "--config", cfg, "--workdir", work)
	cmd.Dir = work
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "echo rm -rf stand-in", "description": "an earlier call"})); got != "rm -rf stand-in\n" {
		t.Fatalf("a sandboxed call: %q", got)
	}
	forge := `sed -i '/stand-in/d' audit.jsonl; echo '{"event":"call","decision":"ask:accepted"}' >> audit.jsonl; cat audit.jsonl`
	got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": forge, "description": "forge"}))
	if strings.Contains(got, "stand-in") {
		t.Errorf("a sandboxed command read the audit log: %q", got)
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "echo rm -rf stand-in") || strings.Contains(string(data), `"decision":"ask:accepted"`) {
		t.Errorf("a sandboxed command edited the audit log:\n%s", data)
	}
}
