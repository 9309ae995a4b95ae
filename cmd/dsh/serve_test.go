package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
)

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.9.8.7": true, "::1": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false, "localhost.example.com": false,
		"::ffff:127.0.0.1": true,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// testToken is a bearer token long enough for dsh serve.
const testToken = "s3cret-test-token-0123"

func TestServeRefuses(t *testing.T) {
	t.Parallel()
	empty := writeFile(t, "token", " \n")
	twoLines := writeFile(t, "token", "a\nb\n")
	missing := filepath.Join(t.TempDir(), "token")
	short := writeFile(t, "token", "fifteen-chars-x\n")
	open := writeFile(t, "token", testToken+"\n")
	if err := os.Chmod(open, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		err  string
	}{
		{"no addr", nil, []string{"--no-auth"}, "serve: --addr HOST:PORT is required"},
		{"bad addr", nil, []string{"--addr", "localhost", "--no-auth"}, "serve: --addr localhost: address localhost: missing port in address"},
		{"no token", []string{tokenEnv + "="}, []string{"--addr", "127.0.0.1:0"},
			"serve: no bearer token: set DSH_TOKEN or --token-file (or --no-auth on a loopback address, or --addr unix:PATH)"},
		{"no-auth on all interfaces", []string{tokenEnv + "="}, []string{"--addr", ":0", "--no-auth"},
			`serve: --no-auth is allowed only on a loopback address (127.0.0.0/8, ::1, localhost), not ":0"`},
		{"no-auth on a public address", []string{tokenEnv + "="}, []string{"--addr", "0.0.0.0:0", "--no-auth"},
			`serve: --no-auth is allowed only on a loopback address (127.0.0.0/8, ::1, localhost), not "0.0.0.0:0"`},
		{"no-auth and a token", []string{tokenEnv + "=" + testToken}, []string{"--addr", "127.0.0.1:0", "--no-auth"},
			"serve: --no-auth given but a token is set (DSH_TOKEN or --token-file): drop one"},
		{"empty token file", nil, []string{"--addr", "127.0.0.1:0", "--token-file", empty}, "serve: --token-file " + empty + " is empty"},
		{"token file of two lines", nil, []string{"--addr", "127.0.0.1:0", "--token-file", twoLines},
			"serve: --token-file " + twoLines + " must hold one line"},
		{"missing token file", nil, []string{"--addr", "127.0.0.1:0", "--token-file", missing},
			"serve: --token-file " + missing + ": no such file or directory"},
		{"short token", []string{tokenEnv + "=s3cret"}, []string{"--addr", "127.0.0.1:0"},
			"serve: DSH_TOKEN: the bearer token has 6 characters, fewer than 16: use a random one (openssl rand -hex 32)"},
		{"short token file", nil, []string{"--addr", "127.0.0.1:0", "--token-file", short},
			"serve: --token-file " + short + ": the bearer token has 15 characters, fewer than 16: use a random one (openssl rand -hex 32)"},
		{"token file open to the group", nil, []string{"--addr", "127.0.0.1:0", "--token-file", open},
			"serve: --token-file " + open + ": permissions 0640 are too open (group or others have access): chmod 600 " + open},
		{"negative idle timeout", []string{tokenEnv + "=" + testToken}, []string{"--addr", "127.0.0.1:0", "--idle-timeout", "-1s"},
			"serve: --idle-timeout must not be negative, got -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"serve"}, tc.args...)
			want := "dsh: " + tc.err + "\n"
			got := dsh(t, tc.env, args...)
			if got.code != exitUsage || got.stderr != want || got.stdout != "" {
				t.Errorf("status %d, stdout %q, stderr %q; want 2, nothing, %q", got.code, got.stdout, got.stderr, want)
			}
		})
	}
}

// notifyBuffer is a stderr that a test can wait on.
type notifyBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{} // buffered 1: something was written
}

func newNotifyBuffer() *notifyBuffer { return &notifyBuffer{wrote: make(chan struct{}, 1)} }

func (b *notifyBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *notifyBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// await returns the first match of re in the buffer, waiting for it.
func (b *notifyBuffer) await(t testing.TB, re *regexp.Regexp) []string {
	t.Helper()
	timeout := time.After(proctest.Scale(10 * time.Second))
	for {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		select {
		case <-b.wrote:
		case <-timeout:
			t.Fatalf("no %v in stderr within 10s:\n%s", re, b.String())
		}
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	tokenFile := writeFile(t, "token", testToken+"\n")
	cmd, stderr := startServe(t, "", []string{tokenEnv + "=ignored-when-the-flag-is-set"}, "--addr", "127.0.0.1:0", "--token-file", tokenFile)
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	post := func(token string) int {
		code, err := postInitialize(t, http.DefaultClient, url, token)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", got)
	}
	if got := post("ignored-when-the-flag-is-set"); got != http.StatusUnauthorized {
		t.Errorf("with DSH_TOKEN's value: %d, want 401", got)
	}
	if got := post(testToken); got != http.StatusOK {
		t.Errorf("with the token: %d, want 200", got)
	}
	http.DefaultClient.CloseIdleConnections()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := waitExit(t, cmd); got != 0 {
		t.Errorf("exit status after SIGTERM = %d, want 0; stderr:\n%s", got, stderr.String())
	}
}

// mcpClient speaks newline-delimited JSON-RPC to dsh mcp.
type mcpClient struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func (c *mcpClient) send(method string, params any, notify bool) map[string]any {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if !notify {
		c.id++
		msg["id"] = c.id
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	if notify {
		return nil
	}
	for c.out.Scan() {
		var resp map[string]any
		if err := json.Unmarshal(c.out.Bytes(), &resp); err != nil {
			c.t.Fatalf("bad response %q: %v", c.out.Text(), err)
		}
		if id, ok := resp["id"].(float64); ok && int(id) == c.id {
			return resp
		}
	}
	c.t.Fatalf("no response to %s: %v", method, c.out.Err())
	return nil
}

// startMCP starts dsh mcp, initializes a session and returns the client.
func startMCP(t *testing.T, args ...string) (*exec.Cmd, *mcpClient, *notifyBuffer) {
	t.Helper()
	return startMCPWith(t, exec.Command(dshBin, append([]string{"mcp"}, args...)...))
}

// startMCPWith starts cmd, a dsh mcp, and initializes a session.
func startMCPWith(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, *mcpClient, *notifyBuffer) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := startCmd(t, cmd)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	c := &mcpClient{t: t, in: in, out: sc}
	c.send("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"},
	}, false)
	c.send("notifications/initialized", map[string]any{}, true)
	return cmd, c, stderr
}

func callText(t *testing.T, resp map[string]any) string {
	t.Helper()
	res, _ := resp["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content in %v", resp)
	}
	block, _ := content[0].(map[string]any)
	text, _ := block["text"].(string)
	return text
}

// TestMCP: a foreground call, then a background task that the end of the
// server kills, by stdin EOF and by SIGTERM.
func TestMCP(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"eof", "sigterm"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			wd := t.TempDir()
			cmd, c, stderr := startMCP(t, "--workdir", wd, "--config", offConfig(t)) // host pids
			resp := c.send("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": "pwd; exit 2", "description": "print the directory"}}, false)
			if got, want := callText(t, resp), wd+"\n[exit code: 2]"; got != want {
				t.Errorf("foreground text = %q, want %q", got, want)
			}
			pidFile := filepath.Join(wd, "pid")
			resp = c.send("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{
				"command": "echo $$ > pid; exec sleep 60", "description": "sleep in the background", "run_in_background": true,
			}}, false)
			if got := callText(t, resp); got != "started background task bash-1" {
				t.Fatalf("background text = %q", got)
			}
			pid := proctest.ReadPid(t, pidFile)
			switch end {
			case "eof":
				c.in.Close()
			case "sigterm":
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			for c.out.Scan() { // drain until dsh closes stdout
			}
			if got := waitExit(t, cmd); got != 0 {
				t.Errorf("exit status = %d, want 0; stderr:\n%s", got, stderr.String())
			}
			assertGone(t, pid)
			// A normal end logs no error (the SDK's "server run
			// cancelled" on SIGTERM is logged as info).
			if strings.Contains(stderr.String(), "level=ERROR") {
				t.Errorf("errors logged:\n%s", stderr.String())
			}
		})
	}
}

// TestMCPSurvivesMalformedLines: dsh mcp answers lines that are not
// messages it takes (a batch, a number, a wrong version) with errors and
// keeps serving, its background task included.
func TestMCPSurvivesMalformedLines(t *testing.T) {
	t.Parallel()
	cmd, c, stderr := startMCP(t)
	resp := c.send("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{
		"command": "sleep 60", "description": "sleep in the background", "run_in_background": true}}, false)
	if got := callText(t, resp); got != "started background task bash-1" {
		t.Fatalf("background text = %q", got)
	}
	for _, line := range []string{`[{"jsonrpc":"2.0","id":50,"method":"ping"}]`, `42`, `null`, `{}`, `{"jsonrpc":"1.0","id":51,"method":"ping"}`, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`} {
		if _, err := io.WriteString(c.in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !c.out.Scan() || !strings.Contains(c.out.Text(), `"error":{"code":-326`) {
			t.Fatalf("reply to %s: %q", line, c.out.Text())
		}
	}
	resp = c.send("tools/call", map[string]any{"name": "task_list", "arguments": map[string]any{}}, false)
	if got := callText(t, resp); got != "bash-1 [bash] running — sleep 60" {
		t.Errorf("task_list after the bad lines = %q", got)
	}
	c.in.Close()
	for c.out.Scan() {
	}
	if got := waitExit(t, cmd); got != 0 {
		t.Errorf("exit status = %d, want 0; stderr:\n%s", got, stderr.String())
	}
}
