package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
)

// initializeBody is an MCP initialize request.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// startServe starts dsh serve with args (through bash -c prefix when
// prefix is not empty, for ulimit) and the test's environment plus env,
// and returns it with its stderr once it logged that it serves.
func startServe(t testing.TB, prefix string, env []string, args ...string) (*exec.Cmd, *notifyBuffer) {
	t.Helper()
	cmd := exec.Command(dshBin, append([]string{"serve"}, args...)...)
	if prefix != "" {
		cmd = exec.Command("bash", append([]string{"-c", prefix + `; exec "$0" serve "$@"`, dshBin}, args...)...)
	}
	cmd.Env = append(os.Environ(), env...)
	stderr := startCmd(t, cmd)
	stderr.await(t, regexp.MustCompile(`dsh serving MCP`))
	return cmd, stderr
}

// startCmd starts cmd with its stderr in the returned buffer; the test's
// end kills it if it still runs.
func startCmd(t testing.TB, cmd *exec.Cmd) *notifyBuffer {
	t.Helper()
	stderr := newNotifyBuffer()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return stderr
}

// postInitialize sends an initialize request with client and returns the
// status.
func postInitialize(t *testing.T, client *http.Client, url, token string) (int, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// unixClient is an HTTP client whose connections go to the socket path.
func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
}

// TestServeUnixSocket: --addr unix:PATH serves without a token on a socket
// of mode 0600, refuses other users even when the mode is opened up,
// refuses a path another server uses, and removes the socket at the end.
func TestServeUnixSocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "dsh.sock")
	cmd, stderr := startServe(t, "", []string{tokenEnv + "="}, "--addr", "unix:"+sock)
	if !strings.Contains(stderr.String(), "socket="+sock+" url=http://localhost/mcp auth=false") {
		t.Errorf("start-up log:\n%s", stderr.String())
	}
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket of 0600", fi.Mode())
	}
	if code, err := postInitialize(t, unixClient(sock), "http://localhost/mcp", ""); err != nil || code != http.StatusOK {
		t.Errorf("initialize through the socket: %d, %v", code, err)
	}

	if got := dsh(t, []string{tokenEnv + "="}, "serve", "--addr", "unix:"+sock); got.code != exitFailure || !strings.Contains(got.stderr, "dsh: serve: "+sock+" is in use by another server\n") {
		t.Errorf("a second server on the socket: status %d, stderr %q", got.code, got.stderr)
	}
	refusesOtherUsers(t, dir, sock)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := waitExit(t, cmd); got != 0 {
		t.Errorf("exit status %d; stderr:\n%s", got, stderr.String())
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after the end: %v", err)
	}
}

// refusesOtherUsers connects to sock as the user nobody, with curl: the
// socket's mode refuses it, and so does dsh when the mode is opened up. It
// needs root, setpriv and curl.
func refusesOtherUsers(t *testing.T, dir, sock string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Log("not root: the connection of another user is not tried")
		return
	}
	for _, prog := range []string{"setpriv", "curl"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Logf("no %s: the connection of another user is not tried", prog)
			return
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func() string {
		out, _ := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket", sock,
			"-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
			"-d", initializeBody, "http://localhost/mcp").CombinedOutput()
		return string(out)
	}
	if got := asNobody(); strings.HasSuffix(got, "200") {
		t.Errorf("another user was served through a socket of mode 0600: %s", got)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	if got := asNobody(); strings.HasSuffix(got, "200") {
		t.Errorf("another user was served through a socket opened to all: %s", got)
	}
}

// TestServeNoAuthWarning: --no-auth on a loopback TCP address says, in one
// line, that other local users can use the server.
func TestServeNoAuthWarning(t *testing.T) {
	t.Parallel()
	_, stderr := startServe(t, "", []string{tokenEnv + "="}, "--addr", "127.0.0.1:0", "--no-auth")
	want := "dsh: warning: --no-auth on 127.0.0.1:0: every user of this machine can run commands as you; --addr unix:PATH serves a socket only you can open\n"
	// Other lines (the sweep of cgroups that killed dsh processes of
	// other tests left) may come first; the warning must be a line of its own.
	if got := "\n" + stderr.String(); !strings.Contains(got, "\n"+want) {
		t.Errorf("stderr:\n%s\nwant the line %q", got, want)
	}
}

// TestServeIdleConnectionFlood: 2000 connections that never send anything
// do not keep an authorized client out, even when dsh may have only 1024
// descriptors; a connection that got its 401 is closed by dsh.
func TestServeIdleConnectionFlood(t *testing.T) {
	t.Parallel()
	_, stderr := startServe(t, "ulimit -n 1024", []string{tokenEnv + "=" + testToken}, "--addr", "127.0.0.1:0")
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	hostPort := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")

	var idle []net.Conn
	t.Cleanup(func() {
		for _, c := range idle {
			c.Close()
		}
	})
	for range 2000 {
		c, err := net.Dial("tcp", hostPort)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	fresh := &http.Client{Timeout: proctest.Scale(time.Second), Transport: &http.Transport{DisableKeepAlives: true}}
	t0 := time.Now()
	code, err := postInitialize(t, fresh, url, testToken)
	if err != nil || code != http.StatusOK {
		t.Fatalf("an authorized call after 2000 idle connections: %d, %v (after %v); stderr:\n%s", code, err, time.Since(t0), stderr.String())
	}

	// A 401 ends its connection.
	c, err := net.Dial("tcp", hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
	if err := c.SetReadDeadline(time.Now().Add(proctest.Scale(10 * time.Second))); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(got), "HTTP/1.1 401") || !strings.Contains(string(got), "\r\nConnection: close\r\n") {
		t.Errorf("after a 401 the connection reads %q, %v; want the 401, saying it closes, and its end", got, err)
	}
}

// TestServeRaisesFileLimit: dsh serve started with a low soft limit of
// open files serves with the hard one (Go's runtime raises it at start,
// and gives the commands dsh starts the original limit back).
func TestServeRaisesFileLimit(t *testing.T) {
	t.Parallel()
	cmd, _ := startServe(t, "ulimit -Sn 256", []string{tokenEnv + "=" + testToken}, "--addr", "127.0.0.1:0")
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Max open files\s+(\d+)\s+(\d+)`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("no open files limit in:\n%s", data)
	}
	var soft, hard int
	fmt.Sscan(m[1], &soft)
	fmt.Sscan(m[2], &hard)
	if soft < hard-1 {
		t.Errorf("dsh serve's open files limit is %d of %d", soft, hard)
	}
}
