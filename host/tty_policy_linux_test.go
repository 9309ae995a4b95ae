package host_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/tool"
)

// The attacks on the policy over typed input (docs/spec.md §4.2a) that a
// review found: each tries to run `rm victim`, which the policy denies,
// through a tty task, unsandboxed. The user accepts starting the tasks and
// declines every question about input; the file must stay.

type attackRig struct {
	*ttyRig
	victim string
	mu     sync.Mutex
	asked  []string
	accept bool // accept questions about input too (what a user let through before)
}

func newAttackRig(t *testing.T, sandboxed bool) *attackRig {
	yaml := "permissions:\n  default: allow\n  deny: [\"rm *\"]\n  claudeSettings: false\n"
	if !sandboxed {
		yaml += "local: {sandbox: {mode: off}}\n"
	}
	r := &attackRig{ttyRig: newTTYRig(t, yaml)}
	if sandboxed && r.st.Local.Sandbox() == nil {
		t.Skip("SKIP-REASON: no sandbox backend works here")
	}
	r.asker = tool.AskerFunc(func(_ context.Context, q tool.Question) (tool.Answer, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !strings.HasPrefix(q.Message, "Type this into a task?") || r.accept {
			return tool.Answer{Choice: tool.Accepted}, nil // starting a task
		}
		r.asked = append(r.asked, q.Message)
		return tool.Answer{Choice: tool.Declined}, nil
	})
	r.victim = filepath.Join(r.sess.Cwd(), "victim")
	if err := os.WriteFile(r.victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// survives fails the test when the victim is gone, after what a line that
// got through would have needed to run.
func (r *attackRig) survives(t *testing.T, how string) {
	t.Helper()
	// No event says a refused line did not run: give one that got through
	// the time it would need.
	time.Sleep(proctest.Scale(300 * time.Millisecond))
	if _, err := os.Stat(r.victim); err != nil {
		t.Errorf("%s: the denied rm ran: %v", how, err)
	}
}

// refusedOrAsked: the input was refused (denied, or asked and declined).
func refusedOrAsked(t *testing.T, res tool.Result, how string) {
	t.Helper()
	if !res.IsError {
		t.Errorf("%s: typed unasked: %s", how, res.Text())
	}
}

// TestTypedAttacks: outside the sandbox every one is refused (input into
// a shell there is always asked about, a denied line refused unasked); in
// the sandbox the policy's deny still holds for what is typed into a shell
// (there a python the shell starts is the sandbox's to bound).
func TestTypedAttacks(t *testing.T) {
	need(t, "python3", "vim")
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "unsandboxed", true: "sandboxed"}[sandboxed], func(t *testing.T) { typedAttacks(t, sandboxed) })
	}
}

func typedAttacks(t *testing.T, sandboxed bool) {
	for _, tc := range []struct {
		name    string
		command string
		ready   string   // the output that says the program waits for input
		before  []string // calls typed first, refused or not
		input   string
	}{
		{"a refused call does not move the line", "bash --norc --noprofile -i", `[$#] $`, nil, "rm victim\r"},
		{"a backslash continues the line", "bash --norc --noprofile -i", `[$#] $`, nil, "r\\\rm victim\r"},
		{"continued across calls", "bash --norc --noprofile -i", `[$#] $`, []string{"r\\\r"}, "m victim\r"},
		{"two lines, the second for vim", "bash --norc --noprofile -i", `[$#] $`, nil, "vim -u NONE -N\r:!rm victim\r"},
		{"history expansion", "bash --norc --noprofile -i", `[$#] $`, []string{"echo rm victim\r"}, "!!:1-2\r"},
		{"C-a C-u keeps text after the cursor", "bash --norc --noprofile -i", `[$#] $`, nil, ";rm victim\x01\x15echo hi\r"},
		{"C-o runs the line without an Enter", "bash --norc --noprofile -i", `[$#] $`, nil, "rm victim\x0f"},
		{"a comment's backslash", "bash --norc --noprofile -i", `[$#] $`, nil, "echo ok #\\\nrm victim\n"},
		{"a prompt command", "bash --norc --noprofile -i", `[$#] $`, nil, "PROMPT_COMMAND='rm victim'\r"},
		{"the wrapper shell runs python", "cd . && python3 -q", `>>> $`, nil, "import os; os.remove('victim')\r"},
	} {
		if sandboxed && strings.Contains(tc.command, "python3") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newAttackRig(t, sandboxed)
			id := r.start(tc.command)
			r.output(id, tc.ready)
			if tc.name == "a refused call does not move the line" {
				res := r.call("task_input", map[string]any{"task_id": id, "text": "echo ", "waitFor": "("})
				if !res.IsError || len(r.asked) != 0 {
					t.Fatalf("a bad pattern: %s (asked %q)", res.Text(), r.asked)
				}
			}
			r.mu.Lock()
			r.accept = true // the user lets the harmless-looking start through
			r.mu.Unlock()
			for _, b := range tc.before {
				r.typed(id, b, nil, "")
			}
			r.mu.Lock()
			r.accept, r.asked = false, nil
			r.mu.Unlock()
			refusedOrAsked(t, r.typed(id, tc.input, nil, ""), tc.name)
			r.survives(t, tc.name)
		})
	}
}

// TestTypedNothingAskedForARefusal: a call the tool refuses anyway (bad
// pattern, unknown key, too long, a finished task) asks nothing.
func TestTypedNothingAskedForARefusal(t *testing.T) {
	need(t, "python3")
	r := newAttackRig(t, false)
	py := r.start("python3 -q")
	for _, args := range []map[string]any{
		{"task_id": py, "text": "x", "waitFor": "("},
		{"task_id": py, "keys": []string{"Ctrl-C"}},
		{"task_id": py, "text": strings.Repeat("x", 70000)},
	} {
		if res := r.call("task_input", args); !res.IsError || !strings.HasPrefix(res.Text(), "Error: ") {
			t.Errorf("%v: %s", args["keys"], res.Text())
		}
	}
	r.call("task_kill", map[string]any{"task_id": py})
	r.call("task_output", map[string]any{"task_id": py, "wait": true})
	if res := r.typed(py, "x", nil, ""); !strings.Contains(res.Text(), "has finished") {
		t.Errorf("finished: %s", res.Text())
	}
	if len(r.asked) != 0 {
		t.Errorf("asked about calls refused anyway: %q", r.asked)
	}
	// C-c alone is a signal, not a command: never asked.
	py2 := r.start("python3 -q")
	r.output(py2, `>>> $`)
	if res := r.typed(py2, "", []string{"C-c"}, "KeyboardInterrupt"); res.IsError || len(r.asked) != 0 {
		t.Errorf("C-c: %s (asked %q)", res.Text(), r.asked)
	}
}

// TestLandlockCannotReadOtherTerminals: a command in the Landlock sandbox
// cannot open the terminal of another task (nor the user's own) to read
// the keys typed into it.
func TestLandlockCannotReadOtherTerminals(t *testing.T) {
	r := newTTYRig(t, "local: {sandbox: {backend: landlock}}\n")
	if r.st.Local.Sandbox() == nil {
		t.Skip("SKIP-REASON: no Landlock here")
	}
	r.asker = tool.AskerFunc(func(context.Context, tool.Question) (tool.Answer, error) {
		return tool.Answer{Choice: tool.Accepted}, nil
	})
	victim := r.start("tty; cat", "dangerouslyDisableSandbox", true)
	pts := regexp.MustCompile(`/dev/pts/\d+`).FindString(r.output(victim, `/dev/pts/\d+`))
	res := r.call("bash", map[string]any{"command": "cat " + pts + " </dev/null; ls /dev/pts", "description": "spy", "timeoutMs": 5000})
	if !strings.Contains(res.Text(), "Permission denied") || strings.Contains(res.Text(), "[timed out") {
		t.Fatalf("a sandboxed command opened %s:\n%s", pts, res.Text())
	}
}

// TestTypedIntoASandboxedShell: lines typed into a sandboxed shell are
// still the policy's: a denied one is refused and not typed.
func TestTypedIntoASandboxedShell(t *testing.T) {
	r := newTTYRig(t, "permissions:\n  default: allow\n  deny: [\"rm *\"]\n  claudeSettings: false\n")
	if r.st.Local.Sandbox() == nil {
		t.Skip("SKIP-REASON: no sandbox backend works here")
	}
	r.asker = tool.AskerFunc(func(context.Context, tool.Question) (tool.Answer, error) {
		return tool.Answer{Choice: tool.Accepted}, nil // starting the shell
	})
	victim := filepath.Join(r.sess.Cwd(), "victim")
	if err := os.WriteFile(victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sh := r.start("bash --norc --noprofile -i")
	r.output(sh, `[$#] $`)
	if res := r.typed(sh, "rm victim", []string{"Enter"}, ""); !res.IsError || !strings.Contains(res.Text(), "rm victim") {
		t.Fatalf("a denied line: %s", res.Text())
	}
	if res := r.typed(sh, "echo fine", []string{"Enter"}, "(?m)^fine"); res.IsError {
		t.Fatalf("an allowed line: %s", res.Text())
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatal("the denied line ran")
	}
}
