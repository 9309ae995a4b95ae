package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
)

// The line dsh mcp prints when its stdin is a terminal (docs/spec.md
// §6.1), byte for byte.
const wantTerminalHint = `dsh: dsh mcp speaks MCP (JSON-RPC) on stdin/stdout for an MCP client, not a person: ` +
	`try it with npx @modelcontextprotocol/inspector dsh mcp, or add it to a client (README: "Adding dsh to an MCP client"); Ctrl-D ends it` + "\n"

// TestMCPOnATerminal: dsh mcp started with a real terminal on stdin says
// once, on stderr, what it is and how to try it, then serves as usual: a
// request typed on the terminal is answered on stdout, a background task
// runs, and ^D (the end of input) ends the session, its task killed.
// With stdin not a terminal it says nothing.
func TestMCPOnATerminal(t *testing.T) {
	t.Parallel()
	master, term := openPTY(t)
	dir := t.TempDir()
	cmd := exec.Command(dshBin, "mcp", "--workdir", dir, "--log-level", "error")
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	var stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, outW, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close()
	outW.Close()
	go func() { _, _ = io.Copy(io.Discard, master) }() // the terminal's echo
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	response := func(id string) string {
		t.Helper()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended before the response %s; stderr %q", id, stderr.String())
				}
				if strings.Contains(line, `"id":`+id+`,`) {
					return line
				}
			case <-time.After(proctest.Scale(30 * time.Second)):
				t.Fatalf("no response %s; stderr %q", id, stderr.String())
			}
		}
	}
	typeLine := func(line string) {
		t.Helper()
		if _, err := master.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}

	typeLine(initializeBody)
	if got := response("1"); !strings.Contains(got, `"serverInfo"`) {
		t.Fatalf("initialize: %s", got)
	}
	typeLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	arg := fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
	typeLine(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep ` + arg + `","description":"sleep","run_in_background":true}}}`)
	if got := response("2"); !strings.Contains(got, "started background task bash-1") {
		t.Fatalf("tools/call: %s", got)
	}
	var sleeps []int
	proctest.Eventually(t, proctest.Wait, func() error {
		if sleeps = running("sleep", arg); len(sleeps) != 1 {
			return fmt.Errorf("%d sleeps running", len(sleeps))
		}
		return nil
	})
	if _, err := master.WriteString("\x04"); err != nil { // ^D at the start of a line
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit %d after ^D", code)
	}
	proctest.AwaitGone(t, sleeps...)
	if own, _ := splitSweepLog(stderr.String()); own != wantTerminalHint {
		t.Errorf("stderr %q, want %q", own, wantTerminalHint)
	}

	// Not a terminal: nothing said.
	if got := dsh(t, nil, "mcp", "--workdir", dir, "--log-level", "error"); got.code != 0 || got.stderr != "" {
		t.Errorf("dsh mcp < /dev/null: exit %d, stderr %q", got.code, got.stderr)
	}
}
