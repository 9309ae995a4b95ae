package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// Interactive tasks (docs/spec.md §4.2a) through the whole stack, with
// real programs under a real pty: python's REPL, an interactive bash, less
// and vim. The default config is used (the sandbox on where it works),
// unless a test says otherwise.

// ttyRig is a stack, a session and the calls the tests make.
type ttyRig struct {
	t     testing.TB
	st    *host.Stack
	sess  *session.Session
	asker tool.Asker
}

func newTTYRig(t testing.TB, yaml string) *ttyRig {
	t.Helper()
	st := standard(t, yaml)
	sess := session.New("tty", t.TempDir())
	t.Cleanup(func() {
		sess.End()
		st.Close()
	})
	return &ttyRig{t: t, st: st, sess: sess}
}

// call runs a tool call in the rig's session.
func (r *ttyRig) call(name string, args map[string]any) tool.Result {
	r.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.st.Tools.Execute(context.Background(), tool.Call{Name: name, Args: raw, Session: r.sess, Asker: r.asker})
}

// start starts command under a terminal and returns its task id.
func (r *ttyRig) start(command string, extra ...any) string {
	r.t.Helper()
	args := map[string]any{"command": command, "description": "interactive", "run_in_background": true, "tty": true}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	res := r.call("bash", args)
	id, ok := strings.CutPrefix(res.Text(), "started background task ")
	if res.IsError || !ok {
		r.t.Fatalf("start %q: %s", command, res.Text())
	}
	return id
}

// typed types text and keys into task id and returns the result.
func (r *ttyRig) typed(id, text string, keys []string, waitFor string) tool.Result {
	r.t.Helper()
	args := map[string]any{"task_id": id, "timeout_ms": proctest.Scale(10 * time.Second).Milliseconds()}
	if text != "" {
		args["text"] = text
	}
	if keys != nil {
		args["keys"] = keys
	}
	if waitFor != "" {
		args["waitFor"] = waitFor
	}
	return r.call("task_input", args)
}

// screen waits until task id's screen matches waitFor and returns it.
func (r *ttyRig) screen(id, waitFor string) string {
	r.t.Helper()
	res := r.call("task_output", map[string]any{"task_id": id, "screen": true, "waitFor": waitFor,
		"timeout_ms": proctest.Scale(10 * time.Second).Milliseconds()})
	if res.IsError || strings.Contains(res.Text(), "[waitFor: no match") {
		r.t.Fatalf("screen of %s never matched %q:\n%s", id, waitFor, res.Text())
	}
	return res.Text()
}

// output waits until task id's new output matches waitFor.
func (r *ttyRig) output(id, waitFor string) string {
	r.t.Helper()
	res := r.call("task_output", map[string]any{"task_id": id, "waitFor": waitFor,
		"timeout_ms": proctest.Scale(10 * time.Second).Milliseconds()})
	if res.IsError || strings.Contains(res.Text(), "[waitFor: no match") {
		r.t.Fatalf("output of %s never matched %q:\n%s", id, waitFor, res.Text())
	}
	return res.Text()
}

func need(t *testing.T, programs ...string) {
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("SKIP-REASON: %s is not installed", p)
		}
	}
}

// TestTTYPython: python's REPL answers a typed line, and waitFor returns
// once the answer shows; C-c interrupts it and the REPL goes on.
func TestTTYPython(t *testing.T) {
	need(t, "python3")
	r := newTTYRig(t, "")
	id := r.start("python3 -q")
	r.output(id, `>>> $`)
	start := time.Now()
	res := r.typed(id, "print(6*7)", []string{"Enter"}, `(?m)^42\s*$`)
	took := time.Since(start)
	if res.IsError || !strings.Contains(res.Text(), "42") || !strings.HasSuffix(res.Text(), "[status: running]") {
		t.Fatalf("print(6*7): %s", res.Text())
	}
	t.Logf("typed and matched in %v", took)
	if res := r.typed(id, "import time; time.sleep(100)", []string{"Enter"}, ""); res.IsError {
		t.Fatal(res.Text())
	}
	if res := r.typed(id, "", []string{"C-c"}, "KeyboardInterrupt"); res.IsError || !strings.Contains(res.Text(), "KeyboardInterrupt") {
		t.Fatalf("C-c: %s", res.Text())
	}
	if res := r.typed(id, "print('still here')", []string{"Enter"}, "(?m)^still here"); res.IsError {
		t.Fatalf("after C-c: %s", res.Text())
	}
	list := r.call("task_list", map[string]any{}).Text()
	if want := id + " [bash, tty 80x24] running — python3 -q"; list != want {
		t.Errorf("task_list: %q, want %q", list, want)
	}
}

// TestTTYBashPrompt: an interactive bash answers read -p, runs a typed
// line, and C-c interrupts the sleep it runs without ending it.
func TestTTYBashPrompt(t *testing.T) {
	r := newTTYRig(t, "")
	id := r.start("bash --norc --noprofile -i")
	r.typed(id, `read -p "name? " n; echo "hi $n"`, []string{"Enter"}, `name\? $`)
	if res := r.typed(id, "dsh", []string{"Enter"}, `hi dsh`); res.IsError {
		t.Fatal(res.Text())
	}
	r.typed(id, "sleep 100", []string{"Enter"}, "")
	start := time.Now()
	r.typed(id, "", []string{"C-c"}, "")
	if res := r.typed(id, "echo alive", []string{"Enter"}, `(?m)^alive`); res.IsError {
		t.Fatalf("after C-c: %s", res.Text())
	}
	if d := time.Since(start); d > proctest.Scale(10*time.Second) {
		t.Errorf("C-c did not interrupt sleep 100: %v", d)
	}
}

// TestTTYLess: less shows a file's first page; PageDown the next.
func TestTTYLess(t *testing.T) {
	need(t, "less")
	r := newTTYRig(t, "")
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	file := filepath.Join(r.sess.Cwd(), "lines.txt")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	id := r.start("less lines.txt")
	first := r.screen(id, `(?m)^line 23$`)
	if !strings.HasPrefix(first, "line 1\nline 2\n") || strings.Contains(first, "line 24\n") || !strings.Contains(first, "[cursor: row 24, col ") {
		t.Fatalf("first page:\n%s", first)
	}
	r.typed(id, "", []string{"PageDown"}, "")
	next := r.screen(id, `(?m)^line 46$`)
	if !strings.HasPrefix(next, "line 24\n") {
		t.Fatalf("after PageDown:\n%s", next)
	}
	r.typed(id, "q", nil, "")
	r.call("task_output", map[string]any{"task_id": id, "wait": true})
}

// TestTTYVim: vim edits and writes a file in the session's workspace.
func TestTTYVim(t *testing.T) {
	need(t, "vim")
	r := newTTYRig(t, "")
	id := r.start("vim -u NONE -i NONE -N notes.txt")
	r.screen(id, `notes\.txt`)
	r.typed(id, "ihello from vim", []string{"Escape"}, "")
	r.typed(id, ":wq", []string{"Enter"}, "")
	res := r.call("task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": proctest.Scale(10 * time.Second).Milliseconds()})
	if !strings.HasSuffix(res.Text(), "[status: completed, exit code: 0]") {
		t.Fatalf("vim did not exit: %s", res.Text())
	}
	got, err := os.ReadFile(filepath.Join(r.sess.Cwd(), "notes.txt"))
	if err != nil || string(got) != "hello from vim\n" {
		t.Fatalf("notes.txt: %q, %v", got, err)
	}
}

// TestTTYLargeOutput: 10 MB to the terminal keeps head and tail bounded,
// with the whole in a spill file, and the task's screen is its last rows.
func TestTTYLargeOutput(t *testing.T) {
	r := newTTYRig(t, "")
	id := r.start("seq 1 1200000; echo done")
	res := r.call("task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": proctest.Scale(60 * time.Second).Milliseconds()})
	text := res.Text()
	if !strings.HasSuffix(text, "[status: completed, exit code: 0]") || len(text) > 200<<10 {
		t.Fatalf("read of %d bytes, ending %q", len(text), text[max(0, len(text)-300):])
	}
	m := regexp.MustCompile(`full output: (\S+)\]`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no spill file named: %q", text[max(0, len(text)-300):])
	}
	if fi, err := os.Stat(m[1]); err != nil || fi.Size() < 9_000_000 {
		t.Errorf("spill file %s: %v %v", m[1], fi, err)
	}
	scr := r.call("task_output", map[string]any{"task_id": id, "screen": true}).Text()
	if !strings.Contains(scr, "1200000\ndone\n") {
		t.Errorf("final screen:\n%s", scr)
	}
}

// TestTTYBadInput: every refusal is exact and types nothing.
func TestTTYBadInput(t *testing.T) {
	r := newTTYRig(t, "")
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "cat", "description": "d", "tty": true}, "Error: tty needs run_in_background: true (a foreground call cannot be typed into)"},
		{map[string]any{"command": "cat", "description": "d", "tty": true, "run_in_background": true, "cols": 19}, "Error: invalid cols: expected a whole number from 20 to 500, got 19"},
		{map[string]any{"command": "cat", "description": "d", "tty": true, "run_in_background": true, "rows": 201}, "Error: invalid rows: expected a whole number from 5 to 200, got 201"},
		{map[string]any{"command": "cat", "description": "d", "tty": true, "run_in_background": true, "rows": 24.5}, `Error: invalid arguments: "rows" must be an integer`},
	} {
		if res := r.call("bash", tc.args); res.Text() != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, res.Text(), tc.want)
		}
	}
	id := r.start("cat", "cols", 120, "rows", 40)
	plain := r.call("bash", map[string]any{"command": "sleep 30", "description": "d", "run_in_background": true})
	plainID := strings.TrimPrefix(plain.Text(), "started background task ")
	other := session.New("other", t.TempDir())
	defer other.End()
	keysList := "Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, C-a…C-z, F1…F12"
	for _, tc := range []struct {
		args map[string]any
		sess *session.Session
		want string
	}{
		{map[string]any{"task_id": id}, r.sess, "Error: nothing to type: send text, keys or both"},
		{map[string]any{"task_id": id, "text": "x", "waitFor": "("}, r.sess, "Error: invalid waitFor: error parsing regexp: missing closing ): `(`"},
		{map[string]any{"task_id": id, "keys": []string{"Enter", "Ctrl-C"}}, r.sess, `Error: unknown key "Ctrl-C"; keys are: ` + keysList},
		{map[string]any{"task_id": id, "text": strings.Repeat("x", 64<<10+1)}, r.sess, "Error: input too long: 65537 bytes, at most 65536"},
		{map[string]any{"task_id": plainID, "text": "x"}, r.sess, "Error: task " + plainID + " has no terminal: only a bash task started with tty: true takes input"},
		{map[string]any{"task_id": id, "text": "x"}, other, "Error: task " + id + " belongs to another session"},
		{map[string]any{"task_id": id, "screen": true}, other, "Error: task " + id + " belongs to another session"},
	} {
		name := "task_input"
		if tc.args["screen"] != nil {
			name = "task_output"
		}
		raw, _ := json.Marshal(tc.args)
		res := r.st.Tools.Execute(context.Background(), tool.Call{Name: name, Args: raw, Session: tc.sess})
		if res.Text() != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, res.Text(), tc.want)
		}
	}
	if scr := r.screen(id, ""); scr != "[cursor: row 1, col 1]\n[status: running]" {
		t.Errorf("refused input was typed:\n%s", scr)
	}
	if list := r.call("task_list", map[string]any{}).Text(); !strings.Contains(list, id+" [bash, tty 120x40] running — cat") {
		t.Errorf("task_list: %s", list)
	}
	r.call("task_kill", map[string]any{"task_id": id})
	r.call("task_output", map[string]any{"task_id": id, "wait": true})
	if res := r.typed(id, "x", nil, ""); res.Text() != "Error: task "+id+" has finished: it takes no more input" {
		t.Errorf("finished: %q", res.Text())
	}
}

// TestTTYPolicy: with a policy, a denied line typed into a shell is refused
// unasked and not typed; other input into a shell outside the sandbox,
// and input into another program, is asked about with the exact question.
func TestTTYPolicy(t *testing.T) {
	need(t, "python3")
	const perms = "permissions:\n  default: allow\n  deny: [\"rm *\"]\n  claudeSettings: false\n"
	r := newTTYRig(t, perms+"local: {sandbox: {mode: off}}\n")
	var mu sync.Mutex
	var asked []string
	answer := tool.Accepted // starting a shell is asked about: the policy cannot see into it
	r.asker = tool.AskerFunc(func(_ context.Context, q tool.Question) (tool.Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, q.Message)
		return tool.Answer{Choice: answer}, nil
	})
	sh := r.start("bash --norc --noprofile -i")
	py := r.start("python3 -q")
	r.output(sh, `[$#] $`)
	mu.Lock()
	asked, answer = nil, tool.Declined
	mu.Unlock()
	victim := filepath.Join(r.sess.Cwd(), "victim")
	if err := os.WriteFile(victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := r.typed(sh, "rm victim", []string{"Enter"}, "")
	if !res.IsError || !strings.Contains(res.Text(), "rm victim") || len(asked) != 0 {
		t.Fatalf("denied line: %s (asked %q)", res.Text(), asked)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the denied line ran: %v", err)
	}
	res = r.typed(sh, "echo fine", []string{"Enter"}, "")
	want := "Type this into a task?\n\necho fine\n(keys: Enter)\n\ninto: bash --norc --noprofile -i\n\n" +
		"the shell runs outside the sandbox, and the command policy cannot follow what an interactive shell does with input (key bindings, history, terminal settings)"
	mu.Lock()
	got := asked
	asked, answer = nil, tool.Accepted
	mu.Unlock()
	if len(got) != 1 || got[0] != want || !res.IsError {
		t.Fatalf("asked %q (result %s), want %q", got, res.Text(), want)
	}
	if res := r.typed(sh, "echo fine", []string{"Enter"}, "(?m)^fine"); res.IsError {
		t.Fatalf("accepted: %s", res.Text())
	}

	mu.Lock()
	asked, answer = nil, tool.Declined
	mu.Unlock()
	r.output(py, `>>> $`) // the foreground is python's, not a launcher's
	res = r.typed(py, "print(1)", []string{"Enter"}, "")
	want = "Type this into a task?\n\nprint(1)\n(keys: Enter)\n\ninto: python3 -q\n\npython3 is not a shell: the command policy cannot tell what this input runs"
	mu.Lock()
	got = asked
	answer = tool.Accepted
	mu.Unlock()
	if len(got) != 1 || got[0] != want || !res.IsError {
		t.Fatalf("asked %q (result %s), want %q", got, res.Text(), want)
	}
	if res := r.typed(py, "print(6*7)", []string{"Enter"}, "(?m)^42"); res.IsError {
		t.Fatalf("accepted: %s", res.Text())
	}
}

// TestTTYSandboxedNeedsNoAsk: input to a sandboxed REPL goes on unasked
// under a policy: the sandbox is the boundary.
func TestTTYSandboxedNeedsNoAsk(t *testing.T) {
	need(t, "python3")
	r := newTTYRig(t, "permissions:\n  default: ask\n  allow: [\"python3 *\"]\n  claudeSettings: false\n")
	if r.st.Local.Sandbox() == nil {
		t.Skip("SKIP-REASON: no sandbox backend works here")
	}
	r.asker = tool.AskerFunc(func(context.Context, tool.Question) (tool.Answer, error) {
		t.Error("asked about input to a sandboxed task")
		return tool.Answer{}, nil
	})
	py := r.start("python3 -q")
	if res := r.typed(py, "print(6*7)", []string{"Enter"}, "(?m)^42"); res.IsError {
		t.Fatal(res.Text())
	}
}
