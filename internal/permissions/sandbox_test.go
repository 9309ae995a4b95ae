package permissions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// Leaving the sandbox with the user's consent (docs/spec.md §11, §9.6),
// through the whole stack with a real sandbox: a call's running outside it
// is proved by a write outside the workspace that the sandbox stops.

// The exact texts of the escape.
const (
	escapeNoAsker  = "Error: this command needs the user's approval (runs outside the sandbox), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config."
	escapeDisabled = "Error: denied by policy: running outside the sandbox is disabled (allowUnsandboxed: false)"
	textDeclined   = "Error: the user declined to run this command"
)

// sandboxStack builds the whole stack with a workspace-write sandbox
// (edited by edit) and perm as its permissions section (nil: none). A
// machine where no sandbox backend runs skips the test, saying why.
func (e env) sandboxStack(t *testing.T, perm *config.Permissions, edit func(*config.Sandbox)) *host.Stack {
	t.Helper()
	cfg := config.File{Permissions: perm}
	cfg.Local.Sandbox = config.Sandbox{Mode: config.SandboxWorkspaceWrite}
	if edit != nil {
		edit(&cfg.Local.Sandbox)
	}
	st, err := e.stackOf(t, cfg)
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("SKIP-REASON: no sandbox backend runs here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// escape runs command as a bash call of s that asks to leave the sandbox,
// with the extra arguments, asking a (nil: nobody to ask).
func escape(ctx context.Context, st *host.Stack, s *session.Session, a tool.Asker, command string, extra map[string]any) tool.Result {
	args := map[string]any{"command": command, "description": "test", "dangerouslyDisableSandbox": true}
	for k, v := range extra {
		args[k] = v
	}
	data, _ := json.Marshal(args)
	call := tool.Call{Name: "bash", Args: data, Session: s}
	if a != nil {
		call.Asker = a
	}
	return st.Tools.Execute(ctx, call)
}

// outsideTarget is a file in a directory outside the workspace and every
// writable root: a sandboxed command cannot make it.
func outsideTarget(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}

// escapeQuestion is the question about command run in workdir outside the
// sandbox (exact).
func escapeQuestion(command, workdir string) string {
	return "Run this command?\n\n" + command + "\n\nin " + workdir + ", outside the sandbox\n\nruns outside the sandbox"
}

// TestEscapeAsks: without a permissions section and with one that allows
// everything, a call that leaves the sandbox is asked about every time,
// with no remember; accepted it runs outside the sandbox, declined or with
// nobody to ask (whatever askFallback says) it does not run.
func TestEscapeAsks(t *testing.T) {
	for _, tc := range []struct {
		name string
		perm *config.Permissions
	}{
		{"no permissions section", nil},
		{"a permissions section that allows everything", &config.Permissions{Default: "allow", AskFallback: "allow", ClaudeSettings: new(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			st := e.sandboxStack(t, tc.perm, nil)
			if st.Gate == nil {
				t.Fatal("a sandbox without a gate")
			}
			s := newSession(t, e.project)

			// The control: sandboxed, the write outside the workspace
			// does not land.
			control := outsideTarget(t, "control")
			if res := run(t.Context(), st, s, nil, "echo x > "+control); res.IsError || !strings.HasSuffix(res.Text(), "[exit code: 1]") || exists(control) {
				t.Fatalf("the sandbox let a write outside the workspace through, so the test proves nothing: %+v", res)
			}

			target := outsideTarget(t, "escaped")
			a := answering(tool.Accepted, true)
			res := escape(t.Context(), st, s, a, "echo x > "+target, nil)
			if res.IsError || res.Text() != "(no output)" || !exists(target) {
				t.Errorf("accepted: %+v, wrote outside the workspace: %v", res, exists(target))
			}
			if len(a.asked) != 1 {
				t.Fatalf("accepted: %d questions, want 1", len(a.asked))
			}
			q := a.asked[0]
			if want := escapeQuestion("echo x > "+target, e.project); q.Message != want || q.Reason != "runs outside the sandbox" || q.Remember != nil {
				t.Errorf("question %+v, want the message %q, no remember", q, want)
			}
			// No remember: the same call asks again.
			if res := escape(t.Context(), st, s, a, "echo x > "+target, nil); res.IsError || a.count() != 2 {
				t.Errorf("again: %+v, %d questions", res, a.count())
			}

			for _, c := range []struct {
				name  string
				asker tool.Asker
				text  string
				code  string
			}{
				{"declined", answering(tool.Declined, false), textDeclined, permissions.CodeDeclined},
				{"dismissed", answering(tool.Dismissed, false), "Error: the user dismissed the approval request; the command did not run", permissions.CodeDismissed},
				{"nobody", nil, escapeNoAsker, permissions.CodeNoAsker},
				{"cannot", &asker{answer: func(context.Context, tool.Question) (tool.Answer, error) { return tool.Answer{}, tool.ErrCannotAsk }},
					escapeNoAsker, permissions.CodeNoAsker},
			} {
				target := outsideTarget(t, c.name)
				res := escape(t.Context(), st, s, c.asker, "echo x > "+target, nil)
				if res.Text() != c.text || res.Code != c.code || exists(target) {
					t.Errorf("%s: %q (%s), ran %v; want %q (%s)", c.name, res.Text(), res.Code, exists(target), c.text, c.code)
				}
			}

			// A front end that asks between two requests gets the
			// question; nothing runs.
			later := &asker{answer: func(context.Context, tool.Question) (tool.Answer, error) { return tool.Answer{}, tool.ErrSuspend }}
			suspended := outsideTarget(t, "suspended")
			res = escape(t.Context(), st, s, later, "echo x > "+suspended, nil)
			if res.Question == nil || res.Question.Message != escapeQuestion("echo x > "+suspended, e.project) || res.Question.Remember != nil || exists(suspended) {
				t.Errorf("suspended: %+v", res)
			}
		})
	}
}

// TestEscapeWithPolicy: the escape is combined with the policy's own
// decision: a deny still denies without asking; a command the policy
// would ask about is asked once, as leaving the sandbox, with no remember
// even where the policy would offer one; a workdir shows where it runs.
func TestEscapeWithPolicy(t *testing.T) {
	e := newEnv(t)
	st := e.sandboxStack(t, &config.Permissions{Default: "ask", Deny: []string{"rm -rf *"}, AskFallback: "allow", ClaudeSettings: new(false)}, nil)
	s := newSession(t, e.project)
	a := answering(tool.Accepted, true)

	res := escape(t.Context(), st, s, a, "rm -rf /nonexistent", nil)
	if want := "Error: denied by policy: `rm -rf /nonexistent` matches deny rule \"rm -rf *\""; res.Text() != want || res.Code != tool.CodeDenied || a.count() != 0 {
		t.Errorf("denied: %q (%s), %d questions", res.Text(), res.Code, a.count())
	}

	target := outsideTarget(t, "made")
	sub := filepath.Join(e.project, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if res := escape(t.Context(), st, s, a, "touch "+target, map[string]any{"workdir": "sub"}); res.IsError || !exists(target) {
		t.Errorf("accepted: %+v", res)
	}
	if len(a.asked) != 1 || a.asked[0].Message != escapeQuestion("touch "+target, sub) || a.asked[0].Remember != nil {
		t.Fatalf("questions %+v", a.asked)
	}
	// Accepting with remember remembered nothing: the same kind of
	// command, sandboxed, is asked about again by the policy.
	if res := run(t.Context(), st, s, a, "touch "+target+"-2"); res.IsError || a.count() != 2 || a.asked[1].Reason != "no rule allows `touch "+target+"-2`" {
		t.Errorf("after the escape: %+v, questions %+v", res, a.asked)
	}
	// askFallback: allow lets the policy's ask run sandboxed, not the
	// escape.
	if res := run(t.Context(), st, s, nil, "touch fell-back"); res.IsError || !exists(filepath.Join(e.project, "fell-back")) {
		t.Errorf("askFallback allow: %+v", res)
	}
	fallback := outsideTarget(t, "fallback")
	if res := escape(t.Context(), st, s, nil, "touch "+fallback, nil); res.Text() != escapeNoAsker || exists(fallback) {
		t.Errorf("escape with askFallback allow: %q", res.Text())
	}
}

// TestEscapeDisabled: with allowUnsandboxed: false a call that still asks
// to leave is refused with the exact text, never asked about, and runs
// nothing, with or without a permissions section.
func TestEscapeDisabled(t *testing.T) {
	for _, perm := range []*config.Permissions{nil, {Default: "allow", AskFallback: "allow", ClaudeSettings: new(false)}} {
		e := newEnv(t)
		st := e.sandboxStack(t, perm, func(sb *config.Sandbox) { sb.AllowUnsandboxed = new(false) })
		a := answering(tool.Accepted, true)
		target := outsideTarget(t, "disabled")
		res := escape(t.Context(), st, newSession(t, e.project), a, "touch "+target, nil)
		if res.Text() != escapeDisabled || res.Code != tool.CodeDenied || a.count() != 0 || exists(target) {
			t.Errorf("permissions %v: %q (%s), %d questions, ran %v", perm != nil, res.Text(), res.Code, a.count(), exists(target))
		}
	}
}

// TestEscapeWithoutSandbox: with the sandbox off the argument is ignored:
// nothing asks, the command runs.
func TestEscapeWithoutSandbox(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "allow", ClaudeSettings: new(false)})
	a := answering(tool.Declined, false)
	if res := escape(t.Context(), st, newSession(t, e.project), a, "touch off", nil); res.IsError || a.count() != 0 || !exists(filepath.Join(e.project, "off")) {
		t.Errorf("sandbox off: %+v, %d questions", res, a.count())
	}
}

// TestEscapeNeedsTheGatesConsent: a middleware before the gate that allows
// the call without asking does not take it out of the sandbox: the tool
// wants the user's consent, which only an answer gives.
func TestEscapeNeedsTheGatesConsent(t *testing.T) {
	e := newEnv(t)
	st := e.sandboxStack(t, nil, nil)
	st.Tools.UsePreFirst(func(context.Context, tool.Call, tool.PreNext) tool.Decision {
		return tool.Decision{Verdict: tool.Allow}
	})
	a := answering(tool.Accepted, false)
	target := outsideTarget(t, "bypassed")
	res := escape(t.Context(), st, newSession(t, e.project), a, "touch "+target, nil)
	if want := "Error: running outside the sandbox needs the user's approval, and nothing asked for it"; res.Text() != want || res.Code != tool.CodeApprovalRequired || exists(target) {
		t.Errorf("bypassed gate: %q (%s), ran %v", res.Text(), res.Code, exists(target))
	}
}

// TestEscapeInBackground: an accepted escape started as a background task
// runs outside the sandbox too.
func TestEscapeInBackground(t *testing.T) {
	e := newEnv(t)
	st := e.sandboxStack(t, nil, nil)
	s := newSession(t, e.project)
	target := outsideTarget(t, "background")
	a := answering(tool.Accepted, false)
	res := escape(t.Context(), st, s, a, "touch "+target, map[string]any{"run_in_background": true})
	started, ok := res.Structured.(bashtool.Structured)
	if res.IsError || !ok || started.TaskID == "" || a.count() != 1 {
		t.Fatalf("background escape: %+v, %d questions", res, a.count())
	}
	args, _ := json.Marshal(map[string]any{"task_id": started.TaskID, "wait": true})
	if out := st.Tools.Execute(t.Context(), tool.Call{Name: "task_output", Args: args, Session: s}); out.IsError || !exists(target) {
		t.Errorf("the task: %q, wrote outside the workspace: %v", out.Text(), exists(target))
	}
}

// TestSandboxWithoutPermissionsHasAGate: the gate that asks about escapes
// is installed with a sandbox even without a permissions section, and
// lets every other call through unasked.
func TestSandboxWithoutPermissionsHasAGate(t *testing.T) {
	e := newEnv(t)
	st := e.sandboxStack(t, nil, nil)
	if st.Gate == nil {
		t.Fatal("no gate")
	}
	a := answering(tool.Declined, false)
	if res := run(t.Context(), st, newSession(t, e.project), a, "touch inside && rm inside"); res.IsError || a.count() != 0 {
		t.Errorf("a sandboxed call: %+v, %d questions", res, a.count())
	}
}

// TestEscapeWithoutASectionMeetsClaudeRules: without a permissions section
// a deny of the user's Claude Code settings still denies a call that asks
// to leave the sandbox, unasked, with the policy's text; a command no rule
// names is asked about as leaving the sandbox.
func TestEscapeWithoutASectionMeetsClaudeRules(t *testing.T) {
	e := newEnv(t)
	settings(t, filepath.Join(e.home, ".claude", "settings.json"), nil, nil, []string{"Bash(touch denied:*)"})
	st := e.sandboxStack(t, nil, nil)
	s := newSession(t, e.project)
	a := answering(tool.Declined, false)
	denied := outsideTarget(t, "denied")
	res := escape(t.Context(), st, s, a, "touch denied "+denied, nil)
	if want := "Error: denied by policy: `touch denied " + denied + "` matches deny rule \"touch denied:*\""; res.Text() != want || a.count() != 0 || exists(denied) {
		t.Errorf("denied escape: %q, %d questions, ran %v; want %q", res.Text(), a.count(), exists(denied), want)
	}
	other := outsideTarget(t, "other")
	if res := escape(t.Context(), st, s, a, "touch "+other, nil); res.Text() != textDeclined || a.count() != 1 || a.asked[0].Reason != "runs outside the sandbox" {
		t.Errorf("another escape: %q, questions %+v", res.Text(), a.asked)
	}
}
