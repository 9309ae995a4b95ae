package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/internal/proctest"
)

// postMCP posts msg to url in session sid ("" for none) with the test
// token, and returns the status and the session id the response names.
func postMCP(t *testing.T, url, sid, msg string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := (&http.Client{Timeout: proctest.Wait}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

// TestServeEndsSessionsThatNeverCall: with serve.idleSessionMs 300 and
// room for two sessions, a session that only sent initialize ends (its id
// then gets 404, and its slot takes a new session) while one that made a
// call before it goes on calling.
func TestServeEndsSessionsThatNeverCall(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", "serve: {idleSessionMs: 300, maxSessions: 2}\n")
	cmd, stderr := startServe(t, "", []string{tokenEnv + "=" + testToken}, "--addr", "127.0.0.1:0", "--config", cfg)
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]

	caller := connectMCP(t, url, testToken)
	echoOK(t, caller, "the first call")
	code, idle := postMCP(t, url, "", initializeBody)
	if code != http.StatusOK || idle == "" {
		t.Fatalf("initialize: %d, session %q", code, idle)
	}
	proctest.Eventually(t, proctest.Wait, func() error {
		if code, _ := postMCP(t, url, idle, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != http.StatusNotFound {
			return fmt.Errorf("the session that never called answers %d", code)
		}
		return nil
	})
	stderr.await(t, regexp.MustCompile(`msg="ending a session that made no call" session=s-[0-9a-f]{16} `))
	if strings.Contains(stderr.String(), idle) {
		t.Error("serve's log holds a session's id")
	}
	echoOK(t, caller, "a call after the other session ended")
	if code, sid := postMCP(t, url, "", initializeBody); code != http.StatusOK || sid == "" {
		t.Errorf("a new session in the freed slot: %d, session %q", code, sid)
	}
	_ = caller.Close()
	stopServe(t, cmd)
}
