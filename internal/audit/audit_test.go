package audit_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/internal/audit"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a log sink tests read while the log writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newLogger() (*slog.Logger, *syncBuffer) {
	b := &syncBuffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

func known(t *testing.T) *redact.Redactor {
	r, err := redact.New(redact.Known)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func intp(n int) *int { return &n }

// TestCallLine: every field of a call line, from the call as sent and the
// result as the registry returned it.
func TestCallLine(t *testing.T) {
	l := audit.Open(filepath.Join(t.TempDir(), "a"), audit.Options{Redactor: known(t)})
	defer l.Close()
	s := session.New("sess-1", "/work")
	defer s.End()
	start := time.Date(2026, 12, 3, 14, 5, 6, 789_000_000, time.FixedZone("x", 3600))
	end := start.Add(1234 * time.Millisecond)
	secret := "ghp_" + strings.Repeat("a", 36)
	cases := []struct {
		name string
		call tool.Call
		res  tool.Result
		want audit.CallLine
	}{
		{"allowed foreground",
			tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"make test","description":"d","workdir":"sub"}`), Session: s, Client: "claude-code/2.1", Started: start},
			tool.Result{Executed: true, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow},
				Structured: bashtool.Structured{ExitCode: intp(2), DurationMs: 1200, Stdout: &bashtool.StreamFacts{TotalBytes: 10}, Stderr: &bashtool.StreamFacts{TotalBytes: 3}}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Session: "sess-1", Client: "claude-code/2.1", Tool: "bash",
				Command: "make test", Workdir: "/work/sub", Decision: "allow", ExitCode: intp(2), DurationMs: 1234, StdoutBytes: 10, StderrBytes: 3}},
		{"rewritten by a hook, with a secret",
			tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"curl -H 'x: ` + secret + `' h","description":"d"}`), Session: s, Started: start},
			tool.Result{Executed: true, Args: json.RawMessage(`{"command":"echo no","description":"d","workdir":"/tmp"}`),
				Ruling:     tool.Ruling{Outcome: tool.OutcomeAllow, By: "hook: guard.sh"},
				Structured: bashtool.Structured{ExitCode: intp(0), Stdout: &bashtool.StreamFacts{TotalBytes: 3}, Stderr: &bashtool.StreamFacts{}}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Session: "sess-1", Tool: "bash",
				Command: "echo no", OriginalCommand: "curl -H 'x: [REDACTED:github-pat]' h", Workdir: "/tmp", Decision: "allow", DecidedBy: "hook: guard.sh",
				ExitCode: intp(0), DurationMs: 1234, StdoutBytes: 3}},
		{"denied",
			tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"rm -rf /","description":"d"}`), Session: s, Started: start},
			tool.Result{IsError: true, Content: []tool.Content{tool.TextContent("Error: denied by rule rm *")}, Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: `deny rule "rm *" (dsh config)`}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Session: "sess-1", Tool: "bash",
				Command: "rm -rf /", Workdir: "/work", Decision: "deny", DecidedBy: `deny rule "rm *" (dsh config)`, DurationMs: 1234, Error: "denied by rule rm *"}},
		{"blocked by a hook whose command holds a secret",
			tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"git push","description":"d"}`), Session: s, Started: start},
			tool.Result{IsError: true, Content: []tool.Content{tool.TextContent("Error: blocked by hook: no")},
				Ruling: tool.Ruling{Outcome: tool.OutcomeBlocked, By: "hook: guard.sh --token " + secret + " (dsh config)"}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Session: "sess-1", Tool: "bash", Command: "git push", Workdir: "/work",
				Decision: "blocked", DecidedBy: "hook: guard.sh --token [REDACTED:github-pat] (dsh config)", DurationMs: 1234, Error: "blocked by hook: no"}},
		{"background start",
			tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"sleep 9","description":"d","run_in_background":true}`), Started: start},
			tool.Result{Executed: true, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}, Structured: bashtool.Structured{TaskID: "bash-3"}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Tool: "bash",
				Command: "sleep 9", Background: true, Decision: "allow", DurationMs: 1234, TaskID: "bash-3"}},
		{"timed out",
			tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"sleep 9","description":"d","timeoutMs":100}`), Started: start},
			tool.Result{Executed: true, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}, Structured: bashtool.Structured{Signal: "SIGTERM", TimedOut: true,
				Stdout: &bashtool.StreamFacts{}, Stderr: &bashtool.StreamFacts{}}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Tool: "bash",
				Command: "sleep 9", Decision: "allow", Signal: "SIGTERM", TimedOut: true, DurationMs: 1234}},
		{"task tool",
			tool.Call{Name: "task_kill", Args: json.RawMessage(`{"task_id":"bash-3"}`), Session: s, Started: start},
			tool.Result{Executed: true, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Session: "sess-1", Tool: "task_kill", Decision: "allow", DurationMs: 1234, TaskID: "bash-3"}},
		{"invalid",
			tool.Call{Name: "bash", Args: json.RawMessage(`{"command":7}`), Started: start},
			tool.Result{IsError: true, Content: []tool.Content{tool.TextContent("Error: invalid arguments: command: expected string")}, Ruling: tool.Ruling{Outcome: tool.OutcomeInvalid}},
			audit.CallLine{Event: "call", Time: "2026-12-03T13:05:06.789Z", Tool: "bash", Decision: "invalid", DurationMs: 1234,
				Error: "invalid arguments: command: expected string"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, l.CallLine(tc.call, tc.res, end)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLinesAsJSON: the bytes of each event, field names and order
// included, as docs/spec.md §15 names them.
func TestLinesAsJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := audit.Open(path, audit.Options{})
	start := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	l.Call(t.Context(), tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"true","description":"d"}`), Started: start},
		tool.Result{Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}, Structured: bashtool.Structured{ExitCode: intp(0), Stdout: &bashtool.StreamFacts{}, Stderr: &bashtool.StreamFacts{}}})
	l.TaskEnd(tasks.Snapshot{ID: "bash-1", Owner: "s", Status: tasks.Killed, Started: start, Finished: start.Add(2500 * time.Millisecond),
		Exit: tasks.Exit{Signal: "SIGTERM", StdoutBytes: 5}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(got), "\n")
	if !strings.HasPrefix(lines[0], `{"event":"call","time":"2026-12-03T14:00:00.000Z","tool":"bash","command":"true","decision":"allow","exitCode":0,"durationMs":`) {
		t.Errorf("call line: %s", lines[0])
	}
	want := `{"event":"task-end","time":"2026-12-03T14:00:02.500Z","session":"s","taskId":"bash-1","status":"killed","signal":"SIGTERM","durationMs":2500,"stdoutBytes":5}` + "\n"
	if lines[1] != want {
		t.Errorf("task-end line:\n got %s\nwant %s", lines[1], want)
	}
}

// TestFileModeAndAppend: a new file is made with mode 0600 whatever the
// umask; an existing file is appended to, never truncated.
func TestFileModeAndAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for i := range 2 {
		l := audit.Open(path, audit.Options{})
		l.TaskEnd(tasks.Snapshot{ID: fmt.Sprint("bash-", i), Status: tasks.Completed})
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), `"event":"task-end"`); n != 2 {
		t.Errorf("%d lines after two opens, want 2:\n%s", n, data)
	}
}

// TestFailingWrite: a write that fails (a full disk: /dev/full fails every
// write, also for root) is logged once, then at most once a minute, and
// the writer returns as usual.
func TestFailingWrite(t *testing.T) {
	log, logged := newLogger()
	l := audit.Open("/dev/full", audit.Options{Logger: log})
	defer l.Close()
	for range 5 {
		l.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Completed})
	}
	got := logged.String()
	if n := strings.Count(got, "level=ERROR"); n != 1 || !strings.Contains(got, "no space left on device") {
		t.Errorf("five failed writes logged:\n%s\nwant one error naming the cause", got)
	}
}

// TestUnopenableFile: a file that cannot be opened (a directory: refused
// also for root) is an error logged at the start; the lines are dropped.
func TestUnopenableFile(t *testing.T) {
	log, logged := newLogger()
	dir := t.TempDir()
	l := audit.Open(dir, audit.Options{Logger: log})
	l.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Completed})
	l.Close()
	if got := logged.String(); !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "is a directory") {
		t.Errorf("logged:\n%s", got)
	}
}

// TestStderr: "-" writes to standard error.
func TestStderr(t *testing.T) {
	var b syncBuffer
	l := audit.Open(audit.Stderr, audit.Options{Stderr: &b})
	l.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Completed})
	l.Close()
	if !strings.HasPrefix(b.String(), `{"event":"task-end",`) {
		t.Errorf("stderr: %q", b.String())
	}
}

// TestConcurrentLinesDoNotTear: 1000 writers of 8 KB commands at once;
// every line of the file is one whole JSON object.
func TestConcurrentLinesDoNotTear(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := audit.Open(path, audit.Options{})
	var wg sync.WaitGroup
	for i := range 1000 {
		wg.Go(func() {
			args, _ := json.Marshal(map[string]string{"command": strings.Repeat(fmt.Sprint(i%10), 8<<10), "description": "d"})
			l.Call(t.Context(), tool.Call{Name: "bash", Args: args, Started: time.Now()}, tool.Result{Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}})
		})
	}
	wg.Wait()
	l.Close()
	checkLines(t, path, 1000)
}

// checkLines fails unless path holds n lines, each a JSON object.
func checkLines(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	count := 0
	for sc.Scan() {
		count++
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v", count, err)
		}
	}
	if count != n {
		t.Errorf("%d lines, want %d", count, n)
	}
}

// TestFIFOWithoutReader: an audit path that is a FIFO no one reads (a log
// shipper that is down) fails at once and is logged: opening it must not
// wait for a reader, at the start or when a line tries it again, since
// every tool call writes a line.
func TestFIFOWithoutReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("SKIP-REASON: no FIFO: %v", err)
	}
	log, logged := newLogger()
	done := make(chan struct{})
	go func() {
		defer close(done)
		l := audit.Open(path, audit.Options{Logger: log})
		l.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Completed})
		l.Close()
	}()
	select {
	case <-done:
	case <-time.After(proctest.Scale(10 * time.Second)):
		// A reader releases the open, so that nothing is left behind.
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer f.Close()
		}
		<-done
		t.Fatal("opening the audit FIFO waited for a reader")
	}
	if got := logged.String(); !strings.Contains(got, "level=ERROR") {
		t.Errorf("logged:\n%s\nwant the failure", got)
	}
}

// TestFIFOWithReader: a FIFO someone reads gets the lines.
func TestFIFOWithReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("SKIP-REASON: no FIFO: %v", err)
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := audit.Open(path, audit.Options{})
	args, _ := json.Marshal(map[string]string{"command": strings.Repeat("x", 200<<10), "description": "d"})
	read := make(chan string)
	go func() {
		line, _ := bufio.NewReaderSize(r, 1<<20).ReadString('\n')
		read <- line
	}()
	l.Call(t.Context(), tool.Call{Name: "bash", Args: args, Started: time.Now()}, tool.Result{Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}})
	l.Close()
	var v map[string]any
	if line := <-read; json.Unmarshal([]byte(line), &v) != nil || len(v["command"].(string)) != 200<<10 {
		t.Errorf("the reader got %d bytes, not the whole line", len(line))
	}
}

// TestNeverReopenedByPath is the attack of a command on an audit file dsh
// could not open at start (its directory was missing): the command makes
// the directory and a file of its own there. dsh opens by path only once,
// before commands run, so no line reaches the command's file (the old
// retry, once a second, wrote every later line to it).
func TestNeverReopenedByPath(t *testing.T) {
	log, logged := newLogger()
	dir := filepath.Join(t.TempDir(), "audit")
	path := filepath.Join(dir, "audit.jsonl")
	l := audit.Open(path, audit.Options{Logger: log})
	defer l.Close()
	if err := os.Mkdir(dir, 0o700); err != nil { // the command's
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past the old retry interval
	l.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Completed})
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("a line reached the file the command put at the path: %s", data)
	}
	if !strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("the failure to open was not logged:\n%s", logged.String())
	}
}
