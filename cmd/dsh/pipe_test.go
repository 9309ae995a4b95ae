package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pipedSession is a whole MCP session as a client would write it, one
// message a line: a slow foreground command, a background start, a task
// list, a fast command and one that asks. The requests run concurrently, as
// any client's do, so none may depend on another's result (a task_output
// of bash-1 could run before bash-1 started).
const pipedSession = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":CAPS,"clientInfo":{"name":"file","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 1.5; echo slow done","description":"slow"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 1; echo bg done","description":"bg","run_in_background":true}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"task_list","arguments":{}}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo fast","description":"fast"}}}
{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"make -v","description":"asks"}}}
`

// TestMCPPipedSession runs dsh mcp with its stdin a file holding a whole
// session: every request is answered before dsh exits at the end of the
// file, the slow one and the wait for the background task included. The
// second client says it offers roots and elicitation, which it cannot
// answer from a file: dsh's requests to it are answered as failed at the
// end of the input, so the calls that need them still end (the roots: the
// default cwd; the ask: the fallback, deny).
func TestMCPPipedSession(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", "permissions: {default: ask}\n")
	for name, caps := range map[string]string{
		"plain client":                 `{}`,
		"client with roots and asking": `{"roots":{"listChanged":true},"elicitation":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(file, []byte(strings.ReplaceAll(pipedSession, "CAPS", caps)), 0o600); err != nil {
				t.Fatal(err)
			}
			in, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			cmd := exec.Command(dshBin, "mcp", "--config", cfg, "--log-level", "error")
			var stdout, stderr bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd); code != 0 {
				t.Fatalf("dsh mcp < file: exit %d, stderr %s", code, stderr.String())
			}
			texts := map[float64]string{}
			for line := range strings.Lines(stdout.String()) {
				var msg struct {
					ID     any    `json:"id"`
					Method string `json:"method"`
					Result struct {
						Content []struct{ Text string } `json:"content"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(line), &msg); err != nil {
					t.Fatalf("stdout line %q: %v", line, err)
				}
				if id, ok := msg.ID.(float64); ok && msg.Method == "" {
					text := ""
					if len(msg.Result.Content) > 0 {
						text = msg.Result.Content[0].Text
					}
					texts[id] = text
				}
			}
			want := map[float64]string{
				3: "slow done\n", 4: "started background task bash-1",
				6: "fast\n",
			}
			for id := 1.0; id <= 7; id++ {
				got, ok := texts[id]
				switch {
				case !ok:
					t.Errorf("request %v got no answer; stdout:\n%s", id, stdout.String())
				case want[id] != "" && got != want[id]:
					t.Errorf("request %v: %q, want %q", id, got, want[id])
				case id == 7 && !strings.HasPrefix(got, "Error: "):
					t.Errorf("request 7 (an ask nobody can answer): %q, want the fallback's Error", got)
				}
			}
		})
	}
}
