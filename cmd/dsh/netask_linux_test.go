package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The network by domain end to end (docs/spec.md §11.1): a sandboxed
// command's connection to a host no rule names asks the user through the
// MCP client's elicitation, the answer holds for the session, a refusal
// ends the result with its line, and each connection is audited and
// counted.

// netAsk is one test's network map: asked.test and declined.test are
// pinned to host loopback, where an HTTP server answers "hello", and no
// rule names them (default: ask).
type netAsk struct {
	cfg, audit string
	port       int
}

// newNetAsk skips where the map cannot be done (bwrap, as root), starts
// the server and writes the config.
func newNetAsk(t *testing.T) netAsk {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("SKIP-REASON: no curl to connect with")
	}
	dir := t.TempDir()
	n := netAsk{cfg: filepath.Join(dir, "dsh.yaml"), audit: filepath.Join(dir, "audit.jsonl")}
	cfg := "local:\n  sandbox:\n    mode: workspace-write\n    backend: bwrap\n    network:\n      default: ask\n" +
		"      hosts: {asked.test: 127.0.0.1, declined.test: 127.0.0.1}\n      allowAddresses: [127.0.0.1/32]\n" +
		"audit: {path: " + n.audit + "}\n"
	if err := os.WriteFile(n.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := dsh(t, nil, "doctor", "--config", n.cfg); got.code == 2 {
		t.Skipf("SKIP-REASON: no bwrap sandbox with a network map here: %s", got.stderr)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	n.port = l.Addr().(*net.TCPAddr).Port
	return n
}

// curl is the command that fetches host's page.
func (n netAsk) curl(host string) string {
	return fmt.Sprintf("curl -fsS --noproxy '*' http://%s:%d/", host, n.port)
}

// question is the exact question about host for command (docs/spec.md §11.1).
func (n netAsk) question(host, command string) string {
	return fmt.Sprintf("Allow network access to %s:%d for this session? (command: %s)", host, n.port, command)
}

// refusedEnd is how a result whose one connection to host was refused
// ends: the refusal line, then the exit code marker (§3.4 puts dsh's
// notes between the body and the markers).
func refusedEnd(host string) *regexp.Regexp {
	return regexp.MustCompile(`\n` + regexp.QuoteMeta("[network: 1 connection refused: "+host+"]") + `\n\[exit code: [1-9][0-9]*\]$`)
}

// auditLine is a line of the audit log, the fields of call and net lines
// the tests read.
type auditLine struct {
	Event, Session, Caller, Host, Address, Decision, Rule, Command string
	Port                                                           int
	BytesUp, BytesDown                                             int64
}

// awaitNetLines reads the audit log until it holds n net lines (a
// connection's line is written when it ends, which may be just after
// its call's result): all its lines.
func (n netAsk) awaitNetLines(t *testing.T, want int) []auditLine {
	t.Helper()
	deadline := time.Now().Add(proctest.Scale(10 * time.Second))
	for {
		var lines []auditLine
		nets := 0
		data, err := os.ReadFile(n.audit)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var l auditLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("audit line is not JSON: %v\n%s", err, sc.Bytes())
			}
			if l.Event == "net" {
				nets++
			}
			lines = append(lines, l)
		}
		if nets >= want {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d net lines in the audit log, want %d:\n%s", nets, want, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkNetLines checks the net lines of lines: per host, the decisions
// and rules want says, each line with its port and a session (the one of
// the session's call lines: one session here), an allowed one with the
// address reached and bytes both ways.
func (n netAsk) checkNetLines(t *testing.T, lines []auditLine, want map[string][]string) {
	t.Helper()
	got := map[string][]string{}
	sessions := map[string]bool{}
	for _, l := range lines {
		if l.Event != "net" {
			sessions[l.Session] = true
			continue
		}
		got[l.Host] = append(got[l.Host], l.Decision+" "+l.Rule)
		if l.Port != n.port || l.Session == "" || l.Caller == "" {
			t.Errorf("net line without its port %d, session or caller: %+v", n.port, l)
		}
		if l.Decision == "allow" && (l.Address != "127.0.0.1" || l.BytesUp == 0 || l.BytesDown == 0) {
			t.Errorf("allowed connection: want address 127.0.0.1 and bytes both ways: %+v", l)
		}
		if l.Decision != "allow" && (l.BytesUp != 0 || l.BytesDown != 0) {
			t.Errorf("refused connection carried bytes: %+v", l)
		}
		sessions[l.Session] = true
	}
	if len(sessions) != 1 {
		t.Errorf("sessions in the audit log: %v, want the one session's, on net lines as on call lines", sessions)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("net lines by host: %v, want %v", got, want)
	}
}

// TestNetworkAskTypeScriptSDK: the official TypeScript MCP client
// (testdata/netask.mjs, with the SDK .ci/node holds) drives dsh mcp over
// stdio: the first connection to asked.test asks the exact question with
// the command, accepted the page comes through; a second call to the same
// host is not asked again; declined.test, declined, gets nothing and the
// refusal line; the audit log has a net line per connection.
func TestNetworkAskTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIP-REASON: no node to run the TypeScript MCP client")
	}
	sdk, err := filepath.Abs(filepath.Join("..", "..", ".ci", "node", "node_modules", "@modelcontextprotocol", "sdk"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil {
		t.Skipf("SKIP-REASON: %s is absent: no TypeScript MCP client (bash .ci/mcp-elicit.sh installs it)", sdk)
	}
	n := newNetAsk(t)
	asked, declined := n.curl("asked.test"), n.curl("declined.test")

	ctx, cancel := context.WithTimeout(t.Context(), proctest.Scale(90*time.Second))
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "netask.mjs"), sdk, dshBin, n.cfg, t.TempDir(),
		"declined.test", asked, asked, declined)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node netask.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var out struct {
		Calls []struct {
			Text    string
			IsError bool
			Asked   int
		}
		Asked []struct{ Message string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out.Calls) != 3 {
		t.Fatalf("node netask.mjs printed %q (%v); stderr:\n%s", stdout.String(), err, stderr.String())
	}
	first, second, third := out.Calls[0], out.Calls[1], out.Calls[2]
	if first.Text != "hello\n" || first.IsError || first.Asked != 1 {
		t.Errorf("accepted: %+v, want the page after one question", first)
	}
	if len(out.Asked) > 0 {
		if want := n.question("asked.test", asked); out.Asked[0].Message != want {
			t.Errorf("question %q, want %q", out.Asked[0].Message, want)
		}
	}
	if second.Text != "hello\n" || second.IsError || second.Asked != 1 {
		t.Errorf("the same host again: %+v, want the page and no second question", second)
	}
	if strings.Contains(third.Text, "hello") || third.IsError || !refusedEnd("declined.test").MatchString(third.Text) || third.Asked != 2 {
		t.Errorf("declined: %+v, want no page, the refusal line, one more question", third)
	}
	if len(out.Asked) > 1 {
		if want := n.question("declined.test", declined); out.Asked[1].Message != want {
			t.Errorf("question %q, want %q", out.Asked[1].Message, want)
		}
	}
	if len(out.Asked) != 2 {
		t.Errorf("%d questions, want 2: %+v", len(out.Asked), out.Asked)
	}
	n.checkNetLines(t, n.awaitNetLines(t, 3), map[string][]string{
		"asked.test":    {"allow ask:accepted", "allow ask:accepted"},
		"declined.test": {"deny ask:declined"},
	})
}

// netAnswers answers network questions through the Go SDK: decline for
// declined.test, else accept; it counts them.
type netAnswers struct{ elicitations }

func (a *netAnswers) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req.Params)
	a.mu.Unlock()
	if strings.Contains(req.Params.Message, "declined.test:") {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

// TestNetworkAskGoSDK: the official Go MCP client, over stdio. On
// protocol 2025-11-25 (elicitation/create within the call) the question
// comes once and, accepted, the page comes through; on the newest
// protocol, whose asks are input requests between requests, a running
// command's connection cannot be asked about: askFallback (deny) refuses
// it, asking nothing (docs/spec.md §11.1, §9.6).
func TestNetworkAskGoSDK(t *testing.T) {
	t.Parallel()
	n := newNetAsk(t)
	command := n.curl("asked.test")
	call := func(cs *mcp.ClientSession) string {
		return sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": command, "description": "fetch"}))
	}

	var a netAnswers
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{ElicitationHandler: a.handle})
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(dshBin, "mcp", "--config", n.cfg, "--workdir", t.TempDir()), TerminateDuration: 5 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := call(cs); got != "hello\n" {
		t.Errorf("accepted: %q, want the page", got)
	}
	if got := call(cs); got != "hello\n" {
		t.Errorf("accepted, again: %q, want the page", got)
	}
	var asked []string
	for _, p := range a.list() {
		asked = append(asked, p.Message)
	}
	if want := n.question("asked.test", command); len(asked) != 1 || asked[0] != want {
		t.Errorf("questions %q, want the one %q", asked, want)
	}

	var newest netAnswers
	client = mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{ElicitationHandler: newest.handle})
	cs2, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(dshBin, "mcp", "--config", n.cfg, "--workdir", t.TempDir()), TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs2.Close() })
	if got := call(cs2); strings.Contains(got, "hello") || !refusedEnd("asked.test").MatchString(got) || len(newest.list()) != 0 {
		t.Errorf("newest protocol: %q, %d questions; want the refusal line and none", got, len(newest.list()))
	}

	lines := n.awaitNetLines(t, 3)
	var rules []string
	for _, l := range lines {
		if l.Event == "net" {
			rules = append(rules, l.Decision+" "+l.Rule)
		}
	}
	if want := "[allow ask:accepted allow ask:accepted deny askFallback: deny]"; fmt.Sprint(rules) != want {
		t.Errorf("net lines: %v, want %s", rules, want)
	}
}

// TestNetworkAskMetrics: dsh serve (with a token: a map whose
// allowAddresses overlap loopback refuses --no-auth) counts the map's
// connections in dsh_network_connections_total by decision, an accepted
// ask as allow and a declined one as deny.
func TestNetworkAskMetrics(t *testing.T) {
	t.Parallel()
	n := newNetAsk(t)
	if got := dsh(t, nil, "serve", "--addr", "127.0.0.1:0", "--no-auth", "--config", n.cfg); got.code != 2 {
		t.Errorf("serve --no-auth with allowAddresses over loopback: exit %d, want 2; stderr:\n%s", got.code, got.stderr)
	}
	cmd, stderr := startServe(t, "", []string{tokenEnv + "=" + testToken}, "--addr", "127.0.0.1:0", "--config", n.cfg, "--workdir", t.TempDir())
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	metrics := strings.TrimSuffix(url, "/mcp") + "/metrics"

	var a netAnswers
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{ElicitationHandler: a.handle})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient(testToken)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": n.curl("asked.test"), "description": "fetch"})); got != "hello\n" {
		t.Errorf("accepted: %q, want the page", got)
	}
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": n.curl("declined.test"), "description": "fetch"})); !refusedEnd("declined.test").MatchString(got) {
		t.Errorf("declined: %q, want the refusal line", got)
	}
	if len(a.list()) != 2 {
		t.Errorf("%d questions, want 2", len(a.list()))
	}
	// The counter moves when the connection's record is made, which may be
	// just after the call's result.
	want := []string{`dsh_network_connections_total{decision="allow"} 1`, `dsh_network_connections_total{decision="deny"} 1`}
	deadline := time.Now().Add(proctest.Scale(10 * time.Second))
	for {
		code, body := get(t, metrics, testToken)
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w+"\n") {
				missing = w
			}
		}
		if code == 200 && missing == "" {
			break
		}
		if time.Now().After(deadline) {
			var counts []string
			for line := range strings.SplitSeq(body, "\n") {
				if strings.HasPrefix(line, "dsh_network_connections_total") {
					counts = append(counts, line)
				}
			}
			t.Fatalf("GET /metrics: %d, no %s; the counter's lines: %s", code, missing, strconv.Quote(strings.Join(counts, "\n")))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cs.Close()
	stopServe(t, cmd)
}
