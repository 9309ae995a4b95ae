package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
)

// callRaw posts a tools/call of name with args to url in session sid,
// over a connection of its own, and returns the result's text.
func callRaw(t *testing.T, url, sid, name string, args map[string]any) string {
	t.Helper()
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + string(params) + `}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := (&http.Client{Transport: &http.Transport{}, Timeout: 3 * proctest.Wait}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	// One JSON-RPC response, plain or as the data of an SSE event.
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var msg struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && len(msg.Result.Content) > 0 {
			return msg.Result.Content[0].Text
		}
	}
	t.Fatalf("%s: status %d, no result in %q", name, resp.StatusCode, raw)
	return ""
}

// TestServeReattachToATerminal: a client that went away and comes back
// to its session (the same Mcp-Session-Id, over a new connection, with no
// client of the first start left) finds its tty task, its screen, and can
// type into it (docs/spec.md §4.2a). Every call here is a connection of
// its own, closed once answered.
func TestServeReattachToATerminal(t *testing.T) {
	t.Parallel()
	cmd, stderr := startServe(t, "", []string{tokenEnv + "=" + testToken}, "--addr", "127.0.0.1:0", "--workdir", t.TempDir())
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	code, sid := postMCP(t, url, "", initializeBody)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", code, sid)
	}
	postMCP(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	started := callRaw(t, url, sid, "bash", map[string]any{
		"command": "bash --norc --noprofile -i", "description": "a shell", "run_in_background": true, "tty": true, "cols": 100, "rows": 30})
	id, ok := strings.CutPrefix(started, "started background task ")
	if !ok {
		t.Fatalf("start: %s", started)
	}
	wait := proctest.Scale(10 * time.Second).Milliseconds()
	if got := callRaw(t, url, sid, "task_input", map[string]any{"task_id": id, "text": "echo $((6*7))", "keys": []string{"Enter"}, "waitFor": `(?m)^42`, "timeout_ms": wait}); !strings.Contains(got, "42") {
		t.Fatalf("typed over a new connection: %q", got)
	}
	if got := callRaw(t, url, sid, "task_list", map[string]any{}); got != id+" [bash, tty 100x30] running — bash --norc --noprofile -i" {
		t.Errorf("task_list over a new connection: %q", got)
	}
	if got := callRaw(t, url, sid, "task_output", map[string]any{"task_id": id, "screen": true}); !strings.Contains(got, "echo $((6*7))\n42\n") {
		t.Errorf("screen over a new connection:\n%s", got)
	}
	stopServe(t, cmd)
}
