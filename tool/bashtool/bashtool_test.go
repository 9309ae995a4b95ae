package bashtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder wraps a real executor and records the specs it is given, so a
// test can see exactly what reached the executor.
type recorder struct {
	bash.Executor
	mu    sync.Mutex
	specs []bash.Spec
}

func (r *recorder) record(s bash.Spec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.specs = append(r.specs, s)
}

func (r *recorder) RunOrYield(ctx context.Context, s bash.Spec, yield <-chan struct{}) (bash.Result, bash.Process, error) {
	r.record(s)
	return r.Executor.RunOrYield(ctx, s, yield)
}

func (r *recorder) Start(ctx context.Context, s bash.Spec) (bash.Process, error) {
	r.record(s)
	return r.Executor.Start(ctx, s)
}

func (r *recorder) last(t *testing.T) bash.Spec {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.specs) == 0 {
		t.Fatal("nothing reached the executor")
	}
	return r.specs[len(r.specs)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.specs)
}

type fixture struct {
	reg  *tool.Registry
	exec *recorder
	rt   *tasks.Service
	cfg  config.Local
}

// newFixture makes a registry with the bash tool over a real local
// executor; with rt, background calls go to that task runtime.
func newFixture(t *testing.T, cfg config.Bash, rt *tasks.Service, tune func(*config.Local)) *fixture {
	t.Helper()
	lc := config.Local{Grace: 200 * time.Millisecond, SpillDir: t.TempDir()}
	if tune != nil {
		tune(&lc)
	}
	e, err := local.New(lc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	f := &fixture{reg: tool.NewRegistry(), exec: &recorder{Executor: e}, rt: rt, cfg: lc}
	if err := f.reg.Register(bashtool.New(f.exec, rt, cfg).Definition()); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) call(t *testing.T, s *session.Session, args string) tool.Result {
	t.Helper()
	return f.reg.Execute(context.Background(), tool.Call{Name: "bash", Args: json.RawMessage(args), Session: s})
}

func jsonArgs(kv map[string]any) string {
	b, _ := json.Marshal(kv)
	return string(b)
}

func TestForegroundExamples(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	for _, tc := range []struct {
		command   string
		timeoutMs float64
		want      string
	}{
		{"echo hello", 0, "hello\n"},
		{"true", 0, "(no output)"},
		{"echo out; echo err >&2", 0, "out\n[stderr]\nerr\n"},
		{"echo failing; exit 3", 0, "failing\n[exit code: 3]"},
		{"sleep 60", 100, "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"printf partial; exit 2", 0, "partial\n[exit code: 2]"},
		{"kill -TERM $$", 0, "(no output)\n[killed by signal: SIGTERM]"},
		{"echo err >&2; exit 1", 0, "[stderr]\nerr\n[exit code: 1]"},
	} {
		args := map[string]any{"command": tc.command, "description": "run an example"}
		if tc.timeoutMs > 0 {
			args["timeoutMs"] = tc.timeoutMs
		}
		res := f.call(t, nil, jsonArgs(args))
		if res.IsError || len(res.Content) != 1 || res.Text() != tc.want {
			t.Errorf("%q:\n got %q (isError %v)\nwant %q", tc.command, res.Text(), res.IsError, tc.want)
		}
	}
}

// TestTruncationNotices: the tail-only texts, which keepHeadBytes: 0 keeps
// byte for byte.
func TestTruncationNotices(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, func(c *config.Local) {
		c.MaxOutputBytes, c.MaxSpillBytes, c.KeepHeadBytes = 20, 100, new(int64(0))
	})
	res := f.call(t, nil, `{"command": "seq 1 10", "description": "count to ten"}`)
	text := res.Text()
	prefix := "\n2\n3\n4\n5\n6\n7\n8\n9\n10\n\n[output truncated; full output: "
	if !strings.HasPrefix(text, prefix) || !strings.HasSuffix(text, "-stdout.log]") {
		t.Fatalf("got %q", text)
	}
	path := strings.TrimSuffix(strings.TrimPrefix(text, prefix), "]")
	if data, err := os.ReadFile(path); err != nil || string(data) != "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n" {
		t.Fatalf("spill %q: %q %v", path, data, err)
	}
	res = f.call(t, nil, `{"command": "seq 1 100", "description": "count to a hundred"}`)
	if text := res.Text(); !strings.HasPrefix(text, "\n95\n96\n97\n98\n99\n100\n\n[output truncated; first 100 bytes saved: ") {
		t.Fatalf("got %q", text)
	}
	var st bashtool.Structured
	b, _ := json.Marshal(res.Structured)
	if err := json.Unmarshal(b, &st); err != nil || !st.Stdout.Truncated || st.Stdout.TotalBytes != 292 || st.Stdout.SpillPath == "" || *st.ExitCode != 0 {
		t.Fatalf("structured %s", b)
	}
}

// TestHeadAndTailTexts runs real commands through the tool and checks the
// texts of docs/spec.md §3.4a byte for byte, with the spill paths as
// <stdout> and <stderr>, and the omitted counts against the totals.
func TestHeadAndTailTexts(t *testing.T) {
	e1000, e999 := strings.Repeat("é", 1000), strings.Repeat("é", 999)
	for _, tc := range []struct {
		name           string
		max, head      int64
		command        string
		want           string
		omitted, total [2]int64 // stdout, stderr
	}{
		{"one byte over the cap; the head cut back to a newline", 20, 5, "seq 1 10",
			"1\n2\n[… 2 bytes omitted …]\n4\n5\n6\n7\n8\n9\n10\n\n[output truncated; full output: <stdout>]",
			[2]int64{2, 0}, [2]int64{21, 0}},
		{"no newline near the head's end: cut between characters, at both ends", 4000, 2001, `printf 'é%.0s' $(seq 3000)`,
			e1000 + "\n[… 2002 bytes omitted …]\n" + e999 + "\n[output truncated; full output: <stdout>]",
			[2]int64{2002, 0}, [2]int64{6000, 0}},
		{"stdout and stderr, each with a head and a tail", 20, 5, "seq 1 10; seq 11 20 >&2; exit 1",
			"1\n2\n[… 2 bytes omitted …]\n4\n5\n6\n7\n8\n9\n10\n\n[output truncated; full output: <stdout>]\n" +
				"[stderr]\n11\n[… 12 bytes omitted …]\n16\n17\n18\n19\n20\n\n[output truncated; full output: <stderr>]\n[exit code: 1]",
			[2]int64{2, 12}, [2]int64{21, 30}},
		{"exactly the cap: all of it", 21, 5, "seq 1 10", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
			[2]int64{0, 0}, [2]int64{21, 0}},
		{"keepHeadBytes 0: the tail alone, as before", 20, 0, "seq 1 10; seq 11 20 >&2",
			"\n2\n3\n4\n5\n6\n7\n8\n9\n10\n\n[output truncated; full output: <stdout>]\n" +
				"[stderr]\n4\n15\n16\n17\n18\n19\n20\n\n[output truncated; full output: <stderr>]",
			[2]int64{1, 10}, [2]int64{21, 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, config.Bash{}, nil, func(c *config.Local) {
				c.MaxOutputBytes, c.KeepHeadBytes = tc.max, &tc.head
			})
			res := f.call(t, nil, jsonArgs(map[string]any{"command": tc.command, "description": "print a lot"}))
			var st bashtool.Structured
			b, _ := json.Marshal(res.Structured)
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			text := res.Text()
			for _, s := range []struct{ path, name string }{{st.Stdout.SpillPath, "<stdout>"}, {st.Stderr.SpillPath, "<stderr>"}} {
				if s.path != "" {
					text = strings.ReplaceAll(text, s.path, s.name)
				}
			}
			if text != tc.want {
				t.Errorf("got  %q\nwant %q", text, tc.want)
			}
			for i, facts := range []*bashtool.StreamFacts{st.Stdout, st.Stderr} {
				if facts.OmittedBytes != tc.omitted[i] || facts.TotalBytes != tc.total[i] {
					t.Errorf("stream %d: omitted %d of %d, want %d of %d", i, facts.OmittedBytes, facts.TotalBytes, tc.omitted[i], tc.total[i])
				}
			}
		})
	}
}

// TestHeadAndTailDefaults: the example of docs/spec.md §3.4a and of
// README's "What the model sees", with the default caps: seq 1 30000
// writes 168894 bytes; the model reads the 16000-byte head cut back to its
// last newline (1 … 3421, 15998 bytes), the omitted count, the 48000-byte
// tail (22001 … 30000) and the truncation notice.
func TestHeadAndTailDefaults(t *testing.T) {
	seq := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	f := newFixture(t, config.Bash{}, nil, nil)
	res := f.call(t, nil, jsonArgs(map[string]any{"command": "seq 1 30000", "description": "print a lot"}))
	var st bashtool.Structured
	b, _ := json.Marshal(res.Structured)
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	want := seq(1, 3421) + "[… 104896 bytes omitted …]\n" + seq(22001, 30000) +
		"\n[output truncated; full output: " + st.Stdout.SpillPath + "]"
	if got := res.Text(); st.Stdout.SpillPath == "" || got != want {
		t.Errorf("got %d bytes, want %d:\n%.200q…\n%.200q…", len(got), len(want), got, want)
	}
	if o := st.Stdout; o.TotalBytes != 168894 || o.OmittedBytes != 104896 {
		t.Errorf("omitted %d of %d, want 104896 of 168894", o.OmittedBytes, o.TotalBytes)
	}
}

func TestValueValidation(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	for _, tc := range []struct{ args, want string }{
		{`{"command": "", "description": "d"}`, "Error: invalid command: expected a non-empty string"},
		{`{"command": "  \n", "description": ""}`, "Error: invalid command: expected a non-empty string"},
		{`{"command": "ls", "description": " "}`, "Error: invalid description: expected a non-empty string\n" + bashtool.DescriptionHint},
		{`{"command": "ls", "description": "d", "timeoutMs": -1}`, "Error: invalid timeoutMs: expected a positive number, got -1"},
		{`{"command": "ls", "description": "d", "timeoutMs": 0}`, "Error: invalid timeoutMs: expected a positive number, got 0"},
		{`{"command": "ls", "description": "d", "timeoutMs": 1e400}`, "Error: invalid timeoutMs: expected a positive number, got 1e400"},
		{`{"command": 5, "description": "d", "timeoutMs": "x"}`, `Error: invalid arguments: "command" must be a string; "timeoutMs" must be a number`},
	} {
		res := f.call(t, nil, tc.args)
		if res.Text() != tc.want || !res.IsError || res.Code != tool.CodeInvalidArgs {
			t.Errorf("%s:\n got %q (%v, %s)\nwant %q", tc.args, res.Text(), res.IsError, res.Code, tc.want)
		}
	}
	if n := f.exec.count(); n != 0 {
		t.Fatalf("%d invalid calls reached the executor", n)
	}
}

func TestBackgroundChecksInOrder(t *testing.T) {
	off := false
	disabled := newFixture(t, config.Bash{EnableRunInBackground: &off}, nil, nil)
	res := disabled.call(t, nil, `{"command": "sleep 1", "description": "d", "run_in_background": true}`)
	if res.Text() != "Error: run_in_background is disabled for this deployment (enableRunInBackground: false)" || !res.IsError {
		t.Errorf("disabled: %q", res.Text())
	}
	// The checks come in the order of docs/spec.md §3.2: a value error first, then disabled,
	// then no runtime, then cancellation.
	res = disabled.call(t, nil, `{"command": " ", "description": "d", "run_in_background": true}`)
	if res.Text() != "Error: invalid command: expected a non-empty string" {
		t.Errorf("value error on a disabled deployment: %q", res.Text())
	}
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	res = disabled.reg.Execute(cancelled, tool.Call{Name: "bash", Args: json.RawMessage(`{"command": "sleep 1", "description": "d", "run_in_background": true}`)})
	if res.Text() != "Error: run_in_background is disabled for this deployment (enableRunInBackground: false)" {
		t.Errorf("disabled and cancelled: %q", res.Text())
	}
	noRuntime := newFixture(t, config.Bash{}, nil, nil)
	res = noRuntime.reg.Execute(cancelled, tool.Call{Name: "bash", Args: json.RawMessage(`{"command": "sleep 1", "description": "d", "run_in_background": true}`)})
	if res.Text() != "Error: background tasks unavailable: load the task runtime and the task tools" {
		t.Errorf("no runtime and cancelled: %q", res.Text())
	}
	res = noRuntime.call(t, nil, `{"command": "sleep 1", "description": "d", "run_in_background": true}`)
	if res.Text() != "Error: background tasks unavailable: load the task runtime and the task tools" || !res.IsError {
		t.Errorf("no runtime: %q", res.Text())
	}
	rt := tasks.New(tasks.Config{})
	defer rt.Close()
	defer rt.AttachTools()()
	withRuntime := newFixture(t, config.Bash{}, rt, nil)
	// Disabled deployments ignore a run_in_background that is not true,
	// whatever its type: the property is not in their schema.
	for _, v := range []string{`"yes"`, `false`, `1`} {
		res := disabled.call(t, nil, `{"command": "echo fg", "description": "d", "run_in_background": `+v+`}`)
		if res.Text() != "fg\n" || res.IsError {
			t.Errorf("disabled, run_in_background %s: %q", v, res.Text())
		}
	}
	disabledRuns := disabled.exec.count()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = withRuntime.reg.Execute(ctx, tool.Call{Name: "bash", Args: json.RawMessage(`{"command": "sleep 1", "description": "d", "run_in_background": true}`)})
	if res.Text() != "Error: command aborted" || !res.IsError {
		t.Errorf("cancelled: %q", res.Text())
	}
	for _, f := range []*fixture{noRuntime, withRuntime} {
		if n := f.exec.count(); n != 0 {
			t.Errorf("a refused background call reached the executor %d times", n)
		}
	}
	if n := disabled.exec.count(); n != disabledRuns {
		t.Errorf("a refused background call reached the executor")
	}
	if len(rt.List(nil)) != 0 {
		t.Error("a refused call registered a task")
	}
}

func TestForegroundAborted(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := f.reg.Execute(ctx, tool.Call{Name: "bash", Args: json.RawMessage(`{"command": "true", "description": "d"}`)})
	if res.Text() != "Error: command aborted" || !res.IsError {
		t.Fatalf("got %+v", res)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	res = f.call(t, nil, jsonArgs(map[string]any{"command": "true", "description": "d", "workdir": missing}))
	if want := fmt.Sprintf("Error: bash-local: workdir %q does not exist", missing); res.Text() != want || !res.IsError {
		t.Fatalf("got %q, want %q", res.Text(), want)
	}
}

func TestSchemaAndDescription(t *testing.T) {
	off := false
	for _, tc := range []struct {
		cfg        config.Bash
		properties []string
	}{
		{config.Bash{}, []string{"command", "description", "timeoutMs", "workdir", "run_in_background", "tty", "cols", "rows"}},
		{config.Bash{EnableRunInBackground: &off}, []string{"command", "description", "timeoutMs", "workdir"}},
	} {
		s := bashtool.Parameters(tc.cfg)
		if !slices.Equal(s.PropertyOrder, tc.properties) || len(s.Properties) != len(tc.properties) || !slices.Equal(s.Required, []string{"command", "description"}) {
			t.Errorf("schema %v / %v", s.PropertyOrder, s.Required)
		}
		d := bashtool.Description(tc.cfg)
		hasBg := strings.Contains(d, "task_output") && strings.Contains(d, "task_kill")
		hasNoBg := strings.Contains(d, "Background execution is not available; long-running commands must finish within the timeout.")
		if hasBg == hasNoBg || hasBg != (tc.cfg.EnableRunInBackground == nil) {
			t.Errorf("description %q", d)
		}
		// The sentence on guarded output is exact (docs/spec.md §3.1).
		if guard := " names a file with the full output. Output lines resembling markers start with >."; !strings.Contains(d, guard) || !strings.HasPrefix(marker.Prefix, ">") {
			t.Errorf("description %q lacks %q, or the prefix %q is not what it says", d, guard, marker.Prefix)
		}
		for _, fact := range []string{"fresh", "persists", "workdir", "[exit code: N]", "start and end", "full output"} {
			if !strings.Contains(d, fact) {
				t.Errorf("description lacks %q", fact)
			}
		}
	}
	// One clause says that a long foreground command becomes a task too,
	// while yielding and background runs are on.
	const clause = " (a foreground command still running after "
	zero, ms := time.Duration(0), 1500*time.Millisecond
	for _, tc := range []struct {
		cfg  config.Bash
		want string
	}{
		{config.Bash{}, clause + "50s goes on as a task too)."},
		{config.Bash{YieldAfter: &ms}, clause + "1500ms goes on as a task too)."},
		{config.Bash{YieldAfter: &zero}, ""},
		{config.Bash{EnableRunInBackground: &off}, ""},
	} {
		d := bashtool.Description(tc.cfg)
		if got := strings.Contains(d, clause); got != (tc.want != "") || tc.want != "" && !strings.Contains(d, tc.want) {
			t.Errorf("%+v: description %q", tc.cfg, d)
		}
	}
	if bashtool.Section.Name != "tool:bash" || bashtool.Section.Order != 105 || !strings.Contains(bashtool.Section.Text, "[exit code: N]") {
		t.Errorf("section %+v", bashtool.Section)
	}
}

func TestWorkdirAndRequest(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	withCwd := session.New("a", base)
	noCwd := session.New("b", "")
	defer withCwd.End()
	defer noCwd.End()
	processCwd, _ := os.Getwd()
	for _, tc := range []struct {
		s       *session.Session
		workdir string
		want    string
	}{
		{withCwd, "", base},
		{withCwd, "sub", filepath.Join(base, "sub")},
		{withCwd, base, base},
		{noCwd, "", processCwd},
		{noCwd, base, base},
		{nil, "", processCwd},
	} {
		args := map[string]any{"command": "pwd", "description": "print the directory"}
		if tc.workdir != "" {
			args["workdir"] = tc.workdir
		}
		res := f.call(t, tc.s, jsonArgs(args))
		if res.Text() != tc.want+"\n" {
			t.Errorf("workdir %q in session cwd %q: %q, want %q", tc.workdir, cwdOf(tc.s), res.Text(), tc.want)
		}
	}
	// A relative workdir without a session cwd stays relative.
	f.call(t, noCwd, `{"command": "true", "description": "d", "workdir": "rel/dir"}`)
	if got := f.exec.last(t).Workdir; got != "rel/dir" {
		t.Errorf("relative workdir without a session cwd became %q", got)
	}
}

func cwdOf(s *session.Session) string {
	if s == nil {
		return "(no session)"
	}
	return s.Cwd()
}

func TestModelEnvAndStdinNeverReachTheExecutor(t *testing.T) {
	rt := tasks.New(tasks.Config{})
	defer rt.Close()
	defer rt.AttachTools()()
	f := newFixture(t, config.Bash{}, rt, nil)
	for _, bg := range []bool{false, true} {
		args := jsonArgs(map[string]any{
			"command": "echo ${INJECTED:-clean}; cat", "description": "check the environment",
			"env": map[string]string{"INJECTED": "yes"}, "stdin": "payload", "run_in_background": bg,
		})
		res := f.call(t, nil, args)
		if res.IsError {
			t.Fatalf("background=%v: %q", bg, res.Text())
		}
		spec := f.exec.last(t)
		if spec.Env != nil || spec.Stdin != nil {
			t.Errorf("background=%v: the executor got env %v, stdin %q", bg, spec.Env, spec.Stdin)
		}
		if !bg && res.Text() != "clean\n" {
			t.Errorf("foreground output %q", res.Text())
		}
	}
}

func TestUnavailableSpillThroughTheRegistry(t *testing.T) {
	// A spill directory that cannot be made (its base is a file): the
	// output is truncated and the path is unavailable; the run is fine.
	f := newFixture(t, config.Bash{}, nil, func(c *config.Local) {
		c.MaxOutputBytes, c.KeepHeadBytes = 10, new(int64(0))
		c.SpillDir = filepath.Join(c.SpillDir, "file")
		if err := os.WriteFile(c.SpillDir, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	res := f.call(t, nil, `{"command": "seq 1 10; exit 4", "description": "count"}`)
	if want := "\n7\n8\n9\n10\n\n[output truncated; full output: (unavailable)]\n[exit code: 4]"; res.Text() != want {
		t.Fatalf("got %q, want %q", res.Text(), want)
	}
}

func TestAbortedCallLeavesNoSpillFile(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, func(c *config.Local) { c.MaxOutputBytes = 10 })
	ready := readyFifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan tool.Result, 1)
	go func() {
		got <- f.reg.Execute(ctx, tool.Call{Name: "bash", Args: json.RawMessage(jsonArgs(map[string]any{
			"command": "seq 1 100; echo > " + ready.path + "; sleep 60", "description": "count and wait"}))})
	}()
	ready.wait(t)
	cancel()
	if res := <-got; res.Text() != "Error: command aborted" {
		t.Fatalf("got %q", res.Text())
	}
	var left []string
	_ = filepath.WalkDir(f.cfg.SpillDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Fatalf("an aborted call left %v", left)
	}
}

func TestSessionEndDeletesItsSpillFiles(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, func(c *config.Local) { c.MaxOutputBytes = 10 })
	s := session.New("s", "")
	other := session.New("o", "")
	defer other.End()
	paths := func(res tool.Result) string {
		var st bashtool.Structured
		b, _ := json.Marshal(res.Structured)
		_ = json.Unmarshal(b, &st)
		return st.Stdout.SpillPath
	}
	mine := paths(f.call(t, s, `{"command": "seq 1 100", "description": "count"}`))
	theirs := paths(f.call(t, other, `{"command": "seq 1 100", "description": "count"}`))
	for _, p := range []string{mine, theirs} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	s.End()
	if _, err := os.Stat(mine); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the ended session's spill file survived")
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Fatal("another session's spill file went with it")
	}
}

// remoteSpills is an executor whose spill files are not this machine's
// (bash.SpillRemover): it records what it is asked to remove.
type remoteSpills struct {
	bash.Executor
	mu      sync.Mutex
	removed []string
}

func (r *remoteSpills) RemoveSpills(paths ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removed = append(r.removed, paths...)
}

// TestSpillsGoThroughTheExecutorsRemover: with an executor whose spill
// files live elsewhere (the SSH executor's), the paths of an ended session
// and of an aborted call go to its RemoveSpills, never to os.Remove.
func TestSpillsGoThroughTheExecutorsRemover(t *testing.T) {
	e, err := local.New(config.Local{Grace: 200 * time.Millisecond, SpillDir: t.TempDir(), MaxOutputBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	rs := &remoteSpills{Executor: e}
	reg := tool.NewRegistry()
	if err := reg.Register(bashtool.New(rs, nil, config.Bash{}).Definition()); err != nil {
		t.Fatal(err)
	}
	s := session.New("s", "")
	res := reg.Execute(context.Background(), tool.Call{Name: "bash", Args: json.RawMessage(`{"command": "seq 1 100", "description": "count"}`), Session: s})
	st, _ := res.Structured.(bashtool.Structured)
	if st.Stdout == nil || st.Stdout.SpillPath == "" {
		t.Fatalf("no spill: %+v", res)
	}
	s.End()
	rs.mu.Lock()
	removed := slices.Clone(rs.removed)
	rs.mu.Unlock()
	if !slices.Equal(removed, []string{st.Stdout.SpillPath}) {
		t.Fatalf("RemoveSpills got %q, want the session's spill file", removed)
	}
	if _, err := os.Stat(st.Stdout.SpillPath); err != nil {
		t.Fatalf("the tool removed the file itself: %v", err)
	}
}

func TestPresenters(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	present := func(args string) *tool.View {
		v, err := f.reg.PresentCall("bash", json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := present(`{"command": "ls -la", "description": "list files", "workdir": "src"}`)
	if v.Kind != tool.ViewTerminal || *v.Terminal != (tool.TerminalView{Command: "ls -la", Description: "list files", Cwd: "src"}) {
		t.Errorf("foreground call: %+v", v.Terminal)
	}
	v = present(`{"command": "ls", "description": "list files"}`)
	if v.Terminal.Cwd != "" {
		t.Errorf("cwd without a workdir: %q", v.Terminal.Cwd)
	}
	v = present(`{"command": "npm run dev", "description": "start the server", "run_in_background": true}`)
	if v.Kind != tool.ViewGeneric || v.Generic.Title != "npm run dev" || v.Generic.Kind != "execute" || v.Generic.RawInput != "npm run dev" ||
		len(v.Generic.Content) != 1 || v.Generic.Content[0].Text != "start the server" {
		t.Errorf("background call: %+v", v.Generic)
	}
	if v := present(`{"command": 1}`); v != nil {
		t.Errorf("malformed arguments gave a view: %+v", v)
	}

	result := func(args string, res tool.Result) *tool.View {
		v, err := f.reg.PresentResult("bash", json.RawMessage(args), res)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	fg := `{"command": "make", "description": "build"}`
	for _, tc := range []struct {
		text   string
		code   int
		signal string
	}{
		{"ok\n", 0, ""},
		{"failing\n[exit code: 3]", 3, ""},
		{"(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]", 0, "SIGTERM"},
		{"[exit code: 3]", 0, ""},
	} {
		v := result(fg, tool.TextResult(tc.text))
		if v == nil || v.Kind != tool.ViewTerminal || v.Terminal.Output != tc.text || v.Terminal.ExitCode != tc.code || v.Terminal.Signal != tc.signal {
			t.Errorf("%q: %+v", tc.text, v)
		}
	}
	v = result(fg, tool.ErrorResult(tool.CodeFailed, "command aborted"))
	if v.Kind != tool.ViewGeneric || v.Generic.Content[0].Text != "```console\nError: command aborted\n```" {
		t.Errorf("error result: %+v", v.Generic)
	}
	v = result(`{"command": "sleep 9", "description": "d", "run_in_background": true}`, tool.TextResult("started background task bash-1\n\n"))
	if v.Kind != tool.ViewGeneric || v.Generic.Content[0].Text != "```console\nstarted background task bash-1\n```" {
		t.Errorf("background result: %+v", v.Generic)
	}
	yielded := "built 1 of 9\n[still running after 50000ms; continues as background task bash-3: read it with task_output, stop it with task_kill]"
	v = result(fg, tool.TextResult(yielded))
	if v.Kind != tool.ViewGeneric || v.Generic.Title != "make" || v.Generic.Content[0].Text != "```console\n"+yielded+"\n```" {
		t.Errorf("yielded result: %+v", v)
	}
	// Output that merely ends in a look-alike of the line is a terminal.
	for _, text := range []string{"[still running after 5ms; continues as background task bash-3: read it with task_output, stop it with task_kill]",
		"x\n[still running after soon; continues as background task bash-3: read it with task_output, stop it with task_kill]"} {
		if v := result(fg, tool.TextResult(text)); v.Kind != tool.ViewTerminal {
			t.Errorf("%q: %+v", text, v)
		}
	}
	two := tool.Result{Content: []tool.Content{tool.TextContent("a"), tool.TextContent("b")}}
	if v := result(fg, two); v != nil {
		t.Errorf("two blocks gave a view: %+v", v)
	}
}
