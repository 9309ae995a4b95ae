package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCrossSessionHijack is a reviewer's attack on a shared dsh serve
// (a token file, an audit file, serve's log in a file), without the
// sandbox: a command of session A reads the token and every word that
// could be a session id from the audit log, serve's log and its own
// environment, and asks each such session for its tasks. Session B's id
// is in none of them, so nothing reaches B. The control runs the same
// attack given B's id, and lists B's task: the attack itself works.
func TestCrossSessionHijack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	token, audit, log := filepath.Join(dir, "token"), filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "serve.log")
	if err := os.WriteFile(token, []byte("hijack-test-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Unsandboxed, where nothing but the session ids stands between
	// sessions, which dsh serve says at start.
	cfg := writeFile(t, "dsh.yaml", "audit:\n  path: "+audit+"\nlocal: {sandbox: {mode: off}}\n")
	_, stderr := startServe(t, "exec 2> >(tee -a "+log+" >&2)", nil, "--addr", "127.0.0.1:0", "--token-file", token, "--config", cfg, "--workdir", dir)
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	stderr.await(t, regexp.MustCompile(regexp.QuoteMeta(notIsolated)))
	connect := func() *mcp.ClientSession {
		transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient("hijack-test-token-0123456789")}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(t.Context(), transport, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	a, b := connect(), connect()
	sdkCall(t, b, "bash", map[string]any{"command": "sleep 60 # b-task-marker", "description": "b's task", "run_in_background": true})

	attack := func(ids string) string {
		script := fmt.Sprintf(`tok=$(cat %s)
for sid in %s; do
  curl -s -X POST %s -H "Authorization: Bearer $tok" -H "Mcp-Session-Id: $sid" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"task_list","arguments":{}}}' |
    grep -q b-task-marker && echo "HIJACKED"
done; echo tried`, token, ids, url)
		return sdkText(t, sdkCall(t, a, "bash", map[string]any{"command": script, "description": "attack"}))
	}
	if got := attack(fmt.Sprintf(`$(grep -ohE '[A-Za-z0-9_-]{16,}' %s %s <(env) | sort -u)`, audit, log)); strings.Contains(got, "HIJACKED") || !strings.Contains(got, "tried") {
		t.Errorf("a command of session A reached session B: %q", got)
	}
	for name, p := range map[string]string{"the audit log": audit, "serve's log": log} {
		if data, _ := os.ReadFile(p); strings.Contains(string(data), b.ID()) || strings.Contains(string(data), a.ID()) {
			t.Errorf("%s holds a session's id", name)
		}
	}
	if env := sdkText(t, sdkCall(t, a, "bash", map[string]any{"command": "env", "description": "env"})); strings.Contains(env, a.ID()) {
		t.Error("a command's environment holds its session's id")
	}
	if got := attack(b.ID()); !strings.Contains(got, "HIJACKED") {
		t.Errorf("control: the attack given B's id did not reach B: %q", got)
	}
}
