package main

import (
	"bufio"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/proctest"
)

// floodConns is more connections than dsh may have descriptors in the
// flood tests (ulimit -n 1024).
const floodConns = 1200

// flood opens n keep-alive connections to hostPort, sends request on each
// and reads its response's status line; it returns the connections, which
// the test's end closes, and how many were answered. A connection dsh
// refuses reads its end (or a reset) at once; one that dsh cannot accept
// at all waits in the backlog until the deadline.
func flood(t *testing.T, hostPort, request string, n int) (conns []net.Conn, answered int) {
	t.Helper()
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", hostPort)
		if err != nil {
			t.Fatalf("dial %s after %d connections: %v", hostPort, len(conns), err)
		}
		conns = append(conns, c)
		_, _ = c.Write([]byte(request))
	}
	deadline := time.Now().Add(proctest.Wait)
	for _, c := range conns {
		_ = c.SetReadDeadline(deadline)
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil && strings.HasPrefix(line, "HTTP/1.1 ") {
			answered++
		}
	}
	return conns, answered
}

// closeAll closes conns.
func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// connectMCP opens an MCP session on url through a transport of its own
// (its connections are the session's alone), with the token when not "".
func connectMCP(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	var rt http.RoundTripper = &http.Transport{}
	if token != "" {
		rt = bearerTransport{token}
	}
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt, Timeout: 3 * proctest.Wait}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "flood"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// echoOK runs echo ok in cs and fails the test unless it printed ok.
func echoOK(t *testing.T, cs *mcp.ClientSession, when string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo ok", "description": "probe"}})
	if err != nil {
		t.Fatalf("%s: bash call: %v", when, err)
	}
	if got := sdkText(t, res); got != "ok\n" {
		t.Fatalf("%s: bash call read %q, want %q", when, got, "ok\n")
	}
}

// TestServeMetricsFlood: more keep-alive GET /healthz connections to
// --metrics-addr, without a token, than dsh may have descriptors leave dsh
// serving: a new MCP session on the main address runs a command, and the
// health endpoint answers. Each such connection is closed after its
// response, as on the main listener.
func TestServeMetricsFlood(t *testing.T) {
	t.Parallel()
	cmd, stderr := startServe(t, "ulimit -n 1024", []string{tokenEnv + "=" + testToken}, "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	metricsHost := stderr.await(t, regexp.MustCompile(`url=http://(\S+)/metrics`))[1]

	conns, _ := flood(t, metricsHost, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", floodConns)
	echoOK(t, connectMCP(t, url, testToken), "after the flood of the metrics address")
	resp, err := (&http.Client{Timeout: proctest.Wait}).Get("http://" + metricsHost + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz after the flood: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz after the flood: %d", resp.StatusCode)
	}
	closeAll(conns)
	stopServe(t, cmd)
}

// TestServeKeepsFDsForCommands: connections that stay open (with
// --no-auth any request to /mcp authenticates its connection, which then
// stays alive) stop short of the descriptors commands need: a session
// opened before the flood still runs a command while the flood holds its
// connections, the connections past the reserve are refused, and once the
// flood is gone new clients are served again.
func TestServeKeepsFDsForCommands(t *testing.T) {
	t.Parallel()
	cmd, stderr := startServe(t, "ulimit -n 1024", nil, "--no-auth", "--addr", "127.0.0.1:0")
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	hostPort := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	cs := connectMCP(t, url, "")
	echoOK(t, cs, "before the flood")

	conns, answered := flood(t, hostPort, "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n", floodConns)
	t.Logf("%d of %d connections answered", answered, floodConns)
	echoOK(t, cs, "while the flood holds its connections")
	if answered >= 1024-fdReserveBase {
		t.Errorf("%d connections were answered; want fewer than %d", answered, 1024-fdReserveBase)
	}
	stderr.await(t, regexp.MustCompile(`msg="refused connections: the open files left are kept for commands" listener=mcp`))

	closeAll(conns)
	proctest.Eventually(t, proctest.Wait, func() error {
		resp, err := (&http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + hostPort + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	echoOK(t, connectMCP(t, url, ""), "a new session after the flood")
	_ = cs.Close()
	stopServe(t, cmd)
}
