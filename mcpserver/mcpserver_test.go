package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/internal/stacktest"
	"github.com/dsh-go/dsh/mcpserver"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// No process, marked or a child, nor a goroutine outlives the tests.
func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }

// newServer composes the whole stack and returns its MCP server.
func newServer(t *testing.T, workdir string) *mcpserver.Server {
	t.Helper()
	return newServerWith(t, mcpserver.Options{Workdir: workdir})
}

// newServerWith is newServer with options; Tools, Prompt and Version are
// filled in.
func newServerWith(t *testing.T, opts mcpserver.Options) *mcpserver.Server {
	t.Helper()
	st := stacktest.Must(t, config.Local{Grace: 300 * time.Millisecond})
	opts.Tools, opts.Prompt, opts.Version = st.Tools, st.Prompt, "test"
	s := mcpserver.New(opts)
	t.Cleanup(s.Close) // before the stack's cleanup: cleanups run last first
	return s
}

// connect opens an in-memory client session to s, closed when the test
// ends.
func connect(t *testing.T, s *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	cs := dial(t, s, mcp.NewClient(&mcp.Implementation{Name: "test"}, nil), nil)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// dial connects client to s in memory; the caller closes the session.
func dial(t *testing.T, s *mcpserver.Server, client *mcp.Client, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(context.Background(), ct, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

func TestToolsAndInstructions(t *testing.T) {
	cs := connect(t, newServer(t, ""))
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	for _, name := range []string{"bash", "task_output", "task_list", "task_kill"} {
		if byName[name] == nil {
			t.Fatalf("tool %s missing from %v", name, list.Tools)
		}
	}
	b := byName["bash"]
	if b.Annotations == nil || b.Annotations.DestructiveHint == nil || !*b.Annotations.DestructiveHint || !*b.Annotations.OpenWorldHint || b.Annotations.ReadOnlyHint {
		t.Errorf("bash annotations %+v", b.Annotations)
	}
	if !byName["task_list"].Annotations.ReadOnlyHint || !byName["task_output"].Annotations.ReadOnlyHint {
		t.Error("task_list/task_output are not read-only")
	}
	if b.OutputSchema == nil || byName["task_output"].OutputSchema == nil {
		t.Error("outputSchema missing")
	}
	schema, _ := json.Marshal(b.InputSchema)
	if i, j := strings.Index(string(schema), `"command"`), strings.Index(string(schema), `"run_in_background"`); i < 0 || j < i {
		t.Errorf("bash schema %s", schema)
	}
	instr := cs.InitializeResult().Instructions
	if !strings.Contains(instr, "[exit code: N]") || !strings.Contains(instr, "task_output") {
		t.Errorf("instructions %q", instr)
	}
}

func TestCallsThroughTheWire(t *testing.T) {
	t.Parallel()
	cs := connect(t, newServer(t, t.TempDir()))
	res := call(t, cs, "bash", map[string]any{"command": "echo failing; exit 3", "description": "fail on purpose"})
	if got := texts(res); len(got) != 1 || got[0] != "failing\n[exit code: 3]" || res.IsError {
		t.Fatalf("got %q (isError %v)", got, res.IsError)
	}
	var st bashtool.Structured
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &st); err != nil || st.ExitCode == nil || *st.ExitCode != 3 || !strings.Contains(string(b), `"omittedBytes":0`) {
		t.Fatalf("structured %s", b)
	}
	res = call(t, cs, "bash", map[string]any{"command": 5, "description": true})
	if got := texts(res); !res.IsError || got[0] != `Error: invalid arguments: "command" must be a string; "description" must be a string` {
		t.Fatalf("validation: %q", got)
	}
	res = call(t, cs, "bash", map[string]any{"command": "pwd", "description": "print the directory"})
	if res.IsError || !strings.HasPrefix(texts(res)[0], "/") {
		t.Fatalf("pwd: %q", texts(res))
	}
	// A huge command (5 MiB) is a clear result, and the server goes on.
	huge := "true " + strings.Repeat("x", 5<<20)
	res = call(t, cs, "bash", map[string]any{"command": huge, "description": "a very long command"})
	if len(res.Content) == 0 {
		t.Fatal("no answer to a 5 MiB command")
	}
	if got := texts(call(t, cs, "bash", map[string]any{"command": "echo still here", "description": "check"})); got[0] != "still here\n" {
		t.Fatalf("after the huge command: %q", got)
	}
}

// TestNoticeRidesOnTheNextResult: a task that finishes after its start's
// result has its notice on a later result, once. The task waits for a
// file the test writes after the start returned: an echo alone may finish
// before its start's result is sent, and its notice then rides on that
// result (TestNoticeRidesOnItsOwnStartResult), never on a later one.
func TestNoticeRidesOnTheNextResult(t *testing.T) {
	dir := t.TempDir()
	cs := connect(t, newServer(t, dir))
	const command = "until [ -e proceed ]; do sleep 0.01; done; echo done"
	res := call(t, cs, "bash", map[string]any{"command": command, "description": "finish when told", "run_in_background": true})
	if got := texts(res); len(got) != 1 || got[0] != "started background task bash-1" {
		t.Fatalf("start: %q", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "proceed"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Poll the list (read-only, does not report the task) until the notice
	// arrives with a result.
	proctest.Eventually(t, proctest.Wait, func() error {
		got := texts(call(t, cs, "task_list", map[string]any{}))
		if len(got) != 2 {
			return fmt.Errorf("no notice: %q", got)
		}
		if got[1] != "background task bash-1 (bash: "+command+") finished [status: completed, exit code: 0]. Read its output with task_output." {
			t.Fatalf("notice %q", got[1])
		}
		return nil
	})
	if got := texts(call(t, cs, "task_list", map[string]any{})); len(got) != 1 {
		t.Fatalf("the notice came twice: %q", got)
	}
}

// TestNoticeRidesOnItsOwnStartResult: a task that finishes before its
// start's result is sent has its notice on that result (the next of its
// session, docs/spec.md §6.4), and on no later one. A post-execute step
// holds the start's result until the notice is queued, as a PostToolUse
// hook, or a loaded machine, may.
func TestNoticeRidesOnItsOwnStartResult(t *testing.T) {
	st := stacktest.Must(t, config.Local{Grace: 300 * time.Millisecond})
	st.Tools.UsePost(func(ctx context.Context, call tool.Call, res tool.Result, next tool.PostNext) tool.PostDecision {
		if call.Name == "bash" && call.Session != nil {
			select {
			case <-call.Session.Notices(): // the wake-up only: the notice stays queued
			case <-time.After(proctest.Wait):
			}
		}
		return next(ctx, call, res)
	})
	s := mcpserver.New(mcpserver.Options{Tools: st.Tools, Prompt: st.Prompt, Version: "test"})
	t.Cleanup(s.Close)
	cs := connect(t, s)
	res := call(t, cs, "bash", map[string]any{"command": "echo done", "description": "finish soon", "run_in_background": true})
	want := []string{"started background task bash-1", "background task bash-1 (bash: echo done) finished [status: completed, exit code: 0]. Read its output with task_output."}
	if got := texts(res); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("start: %q, want %q", got, want)
	}
	if got := texts(call(t, cs, "task_list", map[string]any{})); len(got) != 1 {
		t.Fatalf("the notice came twice: %q", got)
	}
}

func TestSessionEndKillsItsTasks(t *testing.T) {
	s := newServer(t, "")
	cs := connect(t, s)
	pidFile := t.TempDir() + "/pid"
	call(t, cs, "bash", map[string]any{"command": "echo $$ > " + pidFile + "; exec sleep 60", "description": "wait", "run_in_background": true})
	pid := proctest.ReadPid(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	_ = cs.Close()
	s.Close() // returns once the session's tasks are gone
	if !proctest.Gone(pid) {
		t.Fatalf("task %d survived its session", pid)
	}
}

func TestCancelKillsTheCommand(t *testing.T) {
	cs := connect(t, newServer(t, ""))
	pidFile := t.TempDir() + "/pid"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": "echo $$ > " + pidFile + "; exec sleep 60", "description": "wait"}})
		done <- err
	}()
	pid := proctest.ReadPid(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	cancel()
	<-done
	proctest.AwaitGone(t, pid) // the cancelled command
}

func TestHTTP(t *testing.T) {
	s := newServer(t, "")
	h, err := s.Handler(mcpserver.HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	// A cleanup, not a defer: the clients' cleanups (registered later) run
	// first, so their open streams do not hold srv.Close.
	t.Cleanup(srv.Close)

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	send := func(method, auth, origin string) int {
		req, _ := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	post := func(auth, origin string) int { return send("POST", auth, origin) }
	if code := post("", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code := post("Bearer wrong", ""); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	if code := post("Bearer "+testToken, "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("cross-origin: %d", code)
	}
	// A cross-origin GET (an event stream) is refused too, and a
	// cross-origin request is refused before its token is looked at.
	if code := send("GET", "Bearer "+testToken, "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("cross-origin GET: %d", code)
	}
	if code := post("", "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("cross-origin without a token: %d", code)
	}
	if code := post("Bearer "+testToken, ""); code != http.StatusOK {
		t.Errorf("good request: %d", code)
	}
	if code := post("bearer "+testToken, ""); code != http.StatusOK {
		t.Errorf("good request, lower-case scheme: %d", code)
	}
	if code := post("Bearer "+testToken+"X", ""); code != http.StatusUnauthorized {
		t.Errorf("token with a suffix: %d", code)
	}
	// The 401 says which: no token, or a wrong one.
	for _, tc := range []struct{ auth, body string }{
		{"", mcpserver.MissingTokenBody}, {"Basic dXNlcjpwYXNz", mcpserver.MissingTokenBody}, {"Bearer ", mcpserver.MissingTokenBody},
		{"Bearer wrong", mcpserver.WrongTokenBody}, {"Bearer " + testToken + "X", mcpserver.WrongTokenBody},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer realm="dsh"` || string(body) != tc.body+"\n" {
			t.Errorf("Authorization %q: %d, WWW-Authenticate %q, body %q; want 401, Bearer realm=\"dsh\", %q",
				tc.auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, tc.body)
		}
	}

	// Two HTTP sessions are isolated.
	client := func() *mcp.ClientSession {
		transport := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: tokenTransport{testToken}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), transport, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	a, b := client(), client()
	if got := texts(call(t, a, "bash", map[string]any{"command": "sleep 60", "description": "wait", "run_in_background": true})); got[0] != "started background task bash-1" {
		t.Fatalf("start: %q", got)
	}
	if got := texts(call(t, b, "task_list", map[string]any{})); got[0] != "(no background tasks)" {
		t.Fatalf("B sees %q", got)
	}
	if got := texts(call(t, b, "task_kill", map[string]any{"task_id": "bash-1"})); got[0] != "Error: task bash-1 belongs to another session" {
		t.Fatalf("B kills: %q", got)
	}
	if _, err := s.Handler(mcpserver.HTTPOptions{}); err == nil {
		t.Fatal("a handler without token or NoAuth")
	}
	short := "fifteen-chars-x"
	_, err = s.Handler(mcpserver.HTTPOptions{Token: short})
	if want := "mcpserver: the bearer token has 15 characters, fewer than 16: use a random one (openssl rand -hex 32)"; err == nil || err.Error() != want {
		t.Fatalf("a handler with a short token: %v, want %q", err, want)
	}
}

// testToken is a bearer token long enough for the handler.
const testToken = "s3cret-test-token-0123"

type tokenTransport struct{ token string }

func (tt tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tt.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestBadLinesOnStdio: a line that is not JSON gets a parse error and the
// session serves the next call.
func TestBadLinesOnStdio(t *testing.T) {
	ss := startStdio(t)
	ss.send(`not json`)
	if got := ss.next(); !strings.Contains(got, `"code":-32700`) {
		t.Fatalf("bad line: %s", got)
	}
	ss.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo hi","description":"say hi"}}}`)
	if got := ss.next(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, `hi\n`) {
		t.Fatalf("call after the bad line: %s", got)
	}
	ss.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	if got := ss.next(); !strings.Contains(got, `"id":3`) || !strings.Contains(got, "nope") {
		t.Fatalf("unknown tool: %s", got)
	}
	ss.end()
}

// TestRunLinesCancelledEndsItsReading: RunLines returns when its context
// is done although the input stays open, and reads no more of it: nothing
// it started still runs, and a line written afterwards is the caller's.
func TestRunLinesCancelledEndsItsReading(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := newServer(t, "")
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.RunLines(ctx, inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || !strings.Contains(lines.Text(), `"id":1`) {
		t.Fatalf("initialize: %q", lines.Text())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunLines: %v", err)
		}
	case <-time.After(proctest.Scale(10 * time.Second)):
		t.Fatal("RunLines did not return after its context was done")
	}
	for lines.Scan() {
	}
	// The input is the caller's again: no deadline left on it, nothing
	// else reading it.
	if _, err := io.WriteString(inW, "after\n"); err != nil {
		t.Fatal(err)
	}
	if err := inR.SetReadDeadline(time.Now().Add(proctest.Scale(5 * time.Second))); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(inR).ReadString('\n')
	if err != nil || got != "after\n" {
		t.Fatalf("reading the input after RunLines: %q, %v", got, err)
	}
}

func TestProgressNotifications(t *testing.T) {
	t.Parallel()
	s := newServer(t, "")
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	})
	cs := dial(t, s, client, nil)
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "for i in 1 2 3 4 5 6; do echo line-$i; sleep 0.2; done", "description": "count slowly"}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	// The SDK hands notifications to a handler goroutine, so the last ones
	// sent before the result may be handled after CallTool returned.
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	proctest.Within(proctest.Scale(5*time.Second), func() bool { return count() >= 2 })
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("%d progress notifications for a 1.2 s chatty command", len(got))
	}
	last := 0.0
	for _, p := range got {
		if p.ProgressToken != "tok" || p.Progress <= last || !strings.HasPrefix(p.Message, "line-") {
			t.Fatalf("notification %+v after progress %v", p, last)
		}
		last = p.Progress
	}
}

// TestHTTPServerCallOutlivesReadTimeout: a call whose command runs longer
// than the read timeout gets its result on the stream of its request: the
// timeout bounds reading the request, not the response that streams while
// the command runs (a response cut there makes the client resume the
// stream with Last-Event-ID).
func TestHTTPServerCallOutlivesReadTimeout(t *testing.T) {
	t.Parallel()
	s := newServer(t, "")
	hs, err := s.HTTPServer(mcpserver.HTTPOptions{Token: testToken, ReadTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	resumed := 0
	h := hs.Handler
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			mu.Lock()
			resumed++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(hs.Handler)
	srv.Config = hs
	srv.Start()
	t.Cleanup(srv.Close)
	transport := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: tokenTransport{testToken}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := texts(call(t, cs, "bash", map[string]any{"command": "sleep 1; echo done", "description": "wait a second"})); got[0] != "done\n" {
		t.Fatalf("a call of a second with a read timeout of 200ms: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if resumed != 0 {
		t.Errorf("the client resumed %d streams: the read timeout cut a response", resumed)
	}
}

// httpServer serves s through HTTPServer with opts and the test token.
func httpServer(t *testing.T, s *mcpserver.Server, opts mcpserver.HTTPOptions) string {
	t.Helper()
	opts.Token = testToken
	hs, err := s.HTTPServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(hs.Handler)
	srv.Config = hs
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// postToken posts body to url with the test token and returns the
// response and its body.
func postToken(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

func httpClient(t *testing.T, url string) (*mcp.ClientSession, error) {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tokenTransport{testToken}}}
	return mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), transport, nil)
}

// TestHTTPMaxSessions: past MaxSessions open sessions a new one is
// refused with 503 and its exact text; once one ends, a new one opens.
func TestHTTPMaxSessions(t *testing.T) {
	s := newServer(t, "")
	url := httpServer(t, s, mcpserver.HTTPOptions{MaxSessions: 2})
	a, err := httpClient(t, url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close() // before the server's Close, which waits for a's stream
	b, err := httpClient(t, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	resp, body := postToken(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != "too many sessions (limit 2); try again when one has ended\n" {
		t.Errorf("a third session: %d %q", resp.StatusCode, body)
	}
	if got := texts(call(t, b, "bash", map[string]any{"command": "echo still", "description": "run"})); got[0] != "still\n" {
		t.Errorf("an open session after the refusal: %q", got)
	}
	_ = a.Close()
	var c *mcp.ClientSession
	proctest.Within(proctest.Scale(10*time.Second), func() bool {
		c, err = httpClient(t, url)
		return err == nil
	})
	if err != nil {
		t.Fatalf("a session after one ended: %v", err)
	}
	_ = c.Close()
}

// TestHTTPRequestSize: a 5 MiB heredoc command runs over HTTP with the
// default request limit (8 MiB); a larger body gets 413.
func TestHTTPRequestSize(t *testing.T) {
	t.Parallel()
	s := newServer(t, "")
	url := httpServer(t, s, mcpserver.HTTPOptions{})
	cs, err := httpClient(t, url)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	line := strings.Repeat("x", 79) + "\n"
	body := strings.Repeat(line, 5<<20/len(line))
	cmd := "wc -c <<'EOF'\n" + body + "EOF"
	if got := texts(call(t, cs, "bash", map[string]any{"command": cmd, "description": "count a large heredoc"})); got[0] != fmt.Sprintf("%d\n", len(body)) {
		t.Errorf("a 5 MiB command: %q", got)
	}
	if resp, _ := postToken(t, url, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 9<<20)+`"}}`); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 9 MiB request: %d, want 413", resp.StatusCode)
	}
}
