package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// get is a GET of url with the token (none when ""): status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return send(t, req)
}

// TestServeHealthAndMetricsAuth: the health endpoints need no token;
// /metrics on the main listener does; on a loopback --metrics-addr it
// does not.
func TestServeHealthAndMetricsAuth(t *testing.T) {
	t.Parallel()
	_, stderr := startServe(t, "", []string{tokenEnv + "=" + testToken}, "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	base := strings.TrimSuffix(stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1], "/mcp")
	metricsURL := stderr.await(t, regexp.MustCompile(`msg="dsh serving metrics" url=(http://\S+/metrics)`))[1]
	for _, c := range []struct {
		url, token string
		want       int
	}{
		{base + "/healthz", "", 200},
		{base + "/readyz", "", 200},
		{base + "/metrics", "", 401},
		{base + "/metrics", "wrong-token-wrong-token", 401},
		{base + "/metrics", testToken, 200},
		{metricsURL, "", 200},
		{strings.TrimSuffix(metricsURL, "/metrics") + "/readyz", "", 200},
	} {
		code, body := get(t, c.url, c.token)
		if code != c.want {
			t.Errorf("GET %s (token %q): %d, want %d: %s", c.url, c.token, code, c.want, body)
		}
		if code == 200 && strings.HasSuffix(c.url, "/metrics") && !strings.Contains(body, "dsh_sessions_open 0") {
			t.Errorf("GET %s: no dsh_sessions_open:\n%s", c.url, body)
		}
	}
}

// TestServeMetricsAddrRefused: a non-loopback --metrics-addr without a
// token is refused unless --metrics-no-auth.
func TestServeMetricsAddrRefused(t *testing.T) {
	t.Parallel()
	got := dsh(t, []string{tokenEnv + "="}, "serve", "--addr", "127.0.0.1:0", "--no-auth", "--metrics-addr", "0.0.0.0:0")
	want := "dsh: serve: --metrics-addr 0.0.0.0:0 is not loopback and there is no token: give --metrics-no-auth to serve /metrics there to anyone\n"
	if got.code != 2 || got.stderr != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", got.code, got.stderr, want)
	}
}

// drainServer is a dsh serve for the drain tests, with a session whose
// commands write their pids to dir.
type drainServer struct {
	cmd    *exec.Cmd
	url    string
	dir    string
	stderr *notifyBuffer
	cs     *mcp.ClientSession
}

func startDrainServer(t *testing.T, args ...string) *drainServer {
	t.Helper()
	dir := t.TempDir()
	// Unsandboxed: the test checks, by their host pids, that the commands
	// are gone.
	off := writeFile(t, "dsh.yaml", "local: {sandbox: {mode: off}}\n")
	cmd, stderr := startServe(t, "", []string{tokenEnv + "="}, append([]string{"--addr", "127.0.0.1:0", "--no-auth", "--workdir", dir, "--config", off}, args...)...)
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "drain-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &drainServer{cmd: cmd, url: url, dir: dir, stderr: stderr, cs: cs}
}

// call runs a bash command and returns its model-facing text (or the
// error's).
func (d *drainServer) call(t *testing.T, args map[string]any) (string, bool) {
	args["description"] = "drain test"
	res, err := d.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: args})
	if err != nil {
		return "error: " + err.Error(), true
	}
	// The first block: finish notices may follow it.
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// pids reads the pids the commands wrote to the files named.
func (d *drainServer) pids(t *testing.T, names ...string) []int {
	var out []int
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(d.dir, n))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pid)
	}
	return out
}

// awaitFile waits until the command wrote the file name.
func (d *drainServer) awaitFile(t *testing.T, name string) {
	for {
		if data, err := os.ReadFile(filepath.Join(d.dir, name)); err == nil && strings.HasSuffix(string(data), "\n") {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s was never written", name)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// send sends req: the answer's status and body.
func send(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// postNew is a POST that would open a session: its status and body.
func postNew(t *testing.T, url string) (int, string) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return send(t, req)
}

// TestServeDrain: SIGTERM while a 3 s foreground call and a 2 s
// background task run: /readyz is 503 and a new session 503 before the
// call ends, the session still calls, the call returns its real result,
// the task finishes, dsh exits 0 and no command is left.
func TestServeDrain(t *testing.T) {
	t.Parallel()
	d := startDrainServer(t)
	text, isErr := d.call(t, map[string]any{"command": "echo $$ >bg.pid; sleep 2; echo bg-done >bg.out", "run_in_background": true})
	if isErr {
		t.Fatal(text)
	}
	fg := make(chan string, 1)
	go func() {
		text, _ := d.call(t, map[string]any{"command": "echo $$ >fg.pid; sleep 3; echo fg-done"})
		fg <- text
	}()
	d.awaitFile(t, "fg.pid")
	d.awaitFile(t, "bg.pid")
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.stderr.await(t, regexp.MustCompile(`msg="draining`))
	base := strings.TrimSuffix(d.url, "/mcp")
	if code, body := get(t, base+"/readyz", ""); code != 503 {
		t.Errorf("/readyz while draining: %d %s", code, body)
	}
	if code, _ := get(t, base+"/healthz", ""); code != 200 {
		t.Errorf("/healthz while draining: %d", code)
	}
	if code, body := postNew(t, d.url); code != 503 || body != "this server is shutting down and accepts no new sessions; connect again to reach another\n" {
		t.Errorf("a new session while draining: %d %q, want 503 and the exact text", code, body)
	}
	if text, isErr := d.call(t, map[string]any{"command": "echo still"}); isErr || text != "still\n" {
		t.Errorf("the existing session while draining: %q", text)
	}
	select {
	case text := <-fg:
		t.Errorf("the foreground call returned before its command ended: %q", text)
	default:
	}
	if text := <-fg; text != "fg-done\n" {
		t.Errorf("the foreground call returned %q, want its output", text)
	}
	if err := d.cmd.Wait(); err != nil {
		t.Errorf("dsh serve after the drain: %v; stderr:\n%s", err, d.stderr.String())
	}
	if data, err := os.ReadFile(filepath.Join(d.dir, "bg.out")); err != nil || string(data) != "bg-done\n" {
		t.Errorf("the background task did not finish: %q %v", data, err)
	}
	for _, pid := range d.pids(t, "fg.pid", "bg.pid") {
		assertGone(t, pid)
	}
}

// TestServeSecondSIGTERM: a second SIGTERM while draining stops at once:
// the running call's command is killed, dsh exits 0.
func TestServeSecondSIGTERM(t *testing.T) {
	t.Parallel()
	d := startDrainServer(t, "--drain-timeout", "10m")
	go d.call(t, map[string]any{"command": "echo $$ >fg.pid; sleep 600"})
	d.awaitFile(t, "fg.pid")
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d.stderr.await(t, regexp.MustCompile(`msg="draining`))
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Wait(); err != nil {
		t.Errorf("dsh serve after a second SIGTERM: %v", err)
	}
	d.stderr.await(t, regexp.MustCompile(`msg="stopping at once"`))
	assertGone(t, d.pids(t, "fg.pid")[0])
}

// TestServeDrainTimeout: a call still running at --drain-timeout returns
// `Error: command aborted` to its client, and dsh exits 0.
func TestServeDrainTimeout(t *testing.T) {
	t.Parallel()
	d := startDrainServer(t, "--drain-timeout", "1s")
	fg := make(chan string, 1)
	go func() {
		text, _ := d.call(t, map[string]any{"command": "echo $$ >fg.pid; sleep 600"})
		fg <- text
	}()
	d.awaitFile(t, "fg.pid")
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if text := <-fg; text != "Error: command aborted" {
		t.Errorf("the call cut by the drain timeout returned %q", text)
	}
	if err := d.cmd.Wait(); err != nil {
		t.Errorf("dsh serve: %v", err)
	}
	assertGone(t, d.pids(t, "fg.pid")[0])
}

// TestServeStopAtOnceAborts: a call running when dsh stops at once (SIGINT,
// or a second SIGTERM while draining) is cut and returns `Error: command
// aborted` to its client before the session ends (docs/spec.md §15.3).
func TestServeStopAtOnceAborts(t *testing.T) {
	t.Parallel()
	for _, sigs := range [][]syscall.Signal{{syscall.SIGINT}, {syscall.SIGTERM, syscall.SIGTERM}} {
		d := startDrainServer(t, "--drain-timeout", "10m")
		fg := make(chan string, 1)
		go func() {
			text, _ := d.call(t, map[string]any{"command": "echo $$ >fg.pid; sleep 600"})
			fg <- text
		}()
		d.awaitFile(t, "fg.pid")
		for i, sig := range sigs {
			if err := d.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if i == 0 && len(sigs) > 1 {
				d.stderr.await(t, regexp.MustCompile(`msg="draining`))
			}
		}
		if text := <-fg; text != "Error: command aborted" {
			t.Errorf("%v: the call cut returned %q, want Error: command aborted", sigs, text)
		}
		if err := d.cmd.Wait(); err != nil {
			t.Errorf("%v: dsh serve: %v", sigs, err)
		}
		assertGone(t, d.pids(t, "fg.pid")[0])
	}
}
