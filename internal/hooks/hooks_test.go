package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/hooks"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/google/jsonschema-go/jsonschema"
)

func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }

// fixture is a machine for one test: a project directory (the sessions'
// cwd) with hook scripts, and a home and managed directory for Claude
// Code's settings.
type fixture struct {
	dir, project, home, managed string
}

func newFixture(t testing.TB) fixture {
	dir := t.TempDir()
	f := fixture{dir: dir, project: filepath.Join(dir, "project"), home: filepath.Join(dir, "home"), managed: filepath.Join(dir, "etc")}
	for _, d := range []string{f.project, f.home, f.managed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// script writes an executable hook script and returns its path.
func (f fixture) script(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// stack builds the whole stack with cfg (its local section gets the test's
// spill directory and leak mark).
func (f fixture) stack(t testing.TB, cfg config.File) *host.Stack {
	t.Helper()
	cfg.Local.Env.Set = proctest.Set()
	cfg.Local.SpillDir = t.TempDir()
	cfg.Local.Grace = 200 * time.Millisecond
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	st, err := host.Standard(cfg, host.WithPermissions(permissions.Options{Home: f.home, ManagedDir: f.managed, ProjectDir: f.project}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func pre(matcher string, hooks ...config.Hook) config.Hooks {
	return config.Hooks{PreToolUse: []config.HookGroup{{Matcher: matcher, Hooks: hooks}}}
}

func command(cmd string) config.Hook { return config.Hook{Type: "command", Command: cmd} }

func (f fixture) session(t testing.TB) *session.Session {
	s := session.New("sess-"+strings.ReplaceAll(t.Name(), "/", "-"), f.project)
	t.Cleanup(s.End)
	return s
}

// bash runs command as a bash call of s.
func bash(t testing.TB, st *host.Stack, s *session.Session, args map[string]any) tool.Result {
	t.Helper()
	if _, ok := args["description"]; !ok {
		args["description"] = "test"
	}
	raw, _ := json.Marshal(args)
	return st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: raw, Session: s})
}

func (f fixture) exists(name string) bool {
	_, err := os.Stat(filepath.Join(f.project, name))
	return err == nil
}

// TestOutcomes: what one PreToolUse hook's exit and output do to a call.
func TestOutcomes(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, script string
		failClosed   bool
		runs         bool
		text         string
	}{
		{name: "silent", script: "exit 0", runs: true},
		{name: "plain text", script: "echo looks fine", runs: true},
		{name: "exit 2", script: "echo 'no touching' >&2; exit 2", text: "Error: blocked by hook: no touching"},
		{name: "exit 2 silent", script: "exit 2", text: "Error: blocked by hook: blocked by hook"},
		{name: "exit 1", script: "echo oops >&2; exit 1", runs: true},
		{name: "exit 1 fail closed", script: "echo oops >&2; exit 1", failClosed: true, text: "Error: blocked by hook: hook failed: HOOK: exit code 1"},
		{name: "missing script", script: "/nonexistent/hook.sh", runs: true},
		{name: "invalid JSON", script: "echo '{not json'", runs: true},
		{name: "deny JSON", script: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}'`, text: "Error: blocked by hook: not today"},
		{name: "JSON of another event", script: `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}'`, runs: true},
		{name: "legacy block", script: `echo '{"decision":"block","reason":"legacy says no"}'`, text: "Error: blocked by hook: legacy says no"},
		{name: "continue false", script: `echo '{"continue":false,"stopReason":"stop here"}'`, text: "Error: blocked by hook: stop here"},
		{name: "leading blanks", script: `printf '  \n{"decision":"block","reason":"r"}'`, text: "Error: blocked by hook: r"},
		{name: "bidi reason", script: `printf 'ok\342\200\256 evil' >&2; exit 2`, text: `Error: blocked by hook: ok\u202e evil`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := command(tc.script)
			hook.FailClosed = tc.failClosed
			st := f.stack(t, config.File{Hooks: pre("Bash", hook)})
			file := "made-" + strings.ReplaceAll(tc.name, " ", "-")
			res := bash(t, st, f.session(t), map[string]any{"command": "touch " + file})
			want := strings.ReplaceAll(tc.text, "HOOK", tc.script)
			if tc.runs && (res.IsError || !f.exists(file)) || !tc.runs && (res.Text() != want || res.Code != tool.CodeBlocked || f.exists(file)) {
				t.Errorf("got %q (%s), file %v; want runs %v, %q", res.Text(), res.Code, f.exists(file), tc.runs, want)
			}
		})
	}
}

// TestPayload: the JSON a hook reads, field by field (docs/spec.md §10).
func TestPayload(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(f.dir, "payload.json")
	env := filepath.Join(f.dir, "env")
	hook := f.script(t, "record.sh", fmt.Sprintf("#!/bin/bash\ncat > %s\necho \"$CLAUDE_PROJECT_DIR|$DSH_SESSION_ID|$PWD\" > %s\n", out, env))
	st := f.stack(t, config.File{Hooks: pre("", command(hook))})
	s := f.session(t)
	if err := os.Mkdir(filepath.Join(f.project, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	bash(t, st, s, map[string]any{"command": "true", "description": "do nothing", "timeoutMs": 5000, "workdir": "sub", "run_in_background": false})
	var got map[string]any
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("payload %q: %v", data, err)
	}
	id, _ := got["tool_use_id"].(string)
	want := map[string]any{
		"session_id": s.ID(), "transcript_path": "", "cwd": filepath.Join(f.project, "sub"), "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": id,
		"tool_input": map[string]any{"command": "true", "description": "do nothing", "timeout": 5000.0, "workdir": "sub", "run_in_background": false},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || !strings.HasPrefix(id, "dsh-"+s.ID()+"-") {
		t.Errorf("payload\n got %v\nwant %v", got, want)
	}
	if e, _ := os.ReadFile(env); string(e) != f.project+"|"+s.ID()+"|"+filepath.Join(f.project, "sub")+"\n" {
		t.Errorf("environment %q", e)
	}
}

// TestPostToolUse: PostToolUse sees a failing command's streams and exit
// code; its block reason and context reach the model as notes, the result
// unchanged.
func TestPostToolUse(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(f.dir, "post.json")
	hook := f.script(t, "post.sh", fmt.Sprintf(`#!/bin/bash
cat > %s
echo '{"decision":"block","reason":"the build failed","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"see the log"}}'
`, out))
	st := f.stack(t, config.File{Hooks: config.Hooks{PostToolUse: []config.HookGroup{{Matcher: "Bash", Hooks: []config.Hook{command(hook)}}}}})
	res := bash(t, st, f.session(t), map[string]any{"command": "echo out; echo err >&2; exit 3"})
	if res.Text() != "out\n[stderr]\nerr\n[exit code: 3]" || res.IsError {
		t.Errorf("result %q", res.Text())
	}
	if strings.Join(res.Notes, "|") != "[hook] the build failed|[hook] see the log" {
		t.Errorf("notes %q", res.Notes)
	}
	var got struct {
		HookEventName string         `json:"hook_event_name"`
		Response      map[string]any `json:"tool_response"`
	}
	data, _ := os.ReadFile(out)
	_ = json.Unmarshal(data, &got)
	want := map[string]any{"stdout": "out\n", "stderr": "err\n", "interrupted": false, "isImage": false, "exitCode": 3.0, "signal": nil, "timedOut": false, "text": "out\n[stderr]\nerr\n[exit code: 3]"}
	if got.HookEventName != "PostToolUse" || fmt.Sprint(got.Response) != fmt.Sprint(want) {
		t.Errorf("tool_response\n got %v\nwant %v", got.Response, want)
	}
	// A yield is seen like a background start (docs/spec.md §10, §12):
	// no exit facts, and the text the call returned.
	one := time.Millisecond // the call arrived a second ago: it yields at once
	raw, _ := json.Marshal(map[string]any{"command": "sleep 0.3", "description": "wait"})
	st = f.stack(t, config.File{Bash: config.Bash{YieldAfter: &one},
		Hooks: config.Hooks{PostToolUse: []config.HookGroup{{Matcher: "Bash", Hooks: []config.Hook{command(hook)}}}}})
	s := f.session(t)
	res = st.Tools.Execute(tool.AllowYield(context.Background(), time.Now().Add(-time.Second)), tool.Call{Name: "bash", Args: raw, Session: s})
	text := "(no output)\n[still running after 1ms; continues as background task bash-1: read it with task_output, stop it with task_kill]"
	if res.Text() != text {
		t.Errorf("yielded result %q", res.Text())
	}
	data, _ = os.ReadFile(out)
	_ = json.Unmarshal(data, &got)
	want = map[string]any{"stdout": "", "stderr": "", "interrupted": false, "isImage": false, "exitCode": nil, "signal": nil, "timedOut": false, "text": text}
	if fmt.Sprint(got.Response) != fmt.Sprint(want) {
		t.Errorf("tool_response of a yield\n got %v\nwant %v", got.Response, want)
	}
	// No PostToolUse for a refusal: a blocked call's result has no notes.
	st = f.stack(t, config.File{Hooks: config.Hooks{
		PreToolUse:  []config.HookGroup{{Hooks: []config.Hook{command("exit 2")}}},
		PostToolUse: []config.HookGroup{{Hooks: []config.Hook{command("echo '{\"decision\":\"block\",\"reason\":\"x\"}'")}}},
	}})
	if res := bash(t, st, f.session(t), map[string]any{"command": "true"}); len(res.Notes) != 0 {
		t.Errorf("PostToolUse ran for a blocked call: %q", res.Notes)
	}
}

// TestUpdatedInput: the hook listed last wins, every time; a rewrite is
// validated again.
func TestUpdatedInput(t *testing.T) {
	f := newFixture(t)
	rewrite := func(name string, delay string) config.Hook {
		return command(fmt.Sprintf(`sleep %s; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"touch %s"}}}'`, delay, name))
	}
	// The first is slower: the order of the config wins, not the finish.
	st := f.stack(t, config.File{Hooks: pre("Bash", rewrite("first", "0.2"), rewrite("second", "0"))})
	s := f.session(t)
	for i := range 50 {
		res := bash(t, st, s, map[string]any{"command": "touch original", "description": "keep me"})
		if res.IsError || f.exists("first") || f.exists("original") || !f.exists("second") || string(res.Args) != `{"command":"touch second","description":"keep me"}` {
			t.Fatalf("run %d: %+v", i, res)
		}
		if i == 0 {
			// From now on the slower one is quicker.
			st = f.stack(t, config.File{Hooks: pre("Bash", rewrite("first", "0"), rewrite("second", "0.1"))})
		}
	}
	st = f.stack(t, config.File{Hooks: pre("Bash", command(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":42}}}'`))})
	res := bash(t, st, s, map[string]any{"command": "touch invalid"})
	if res.Text() != `Error: a hook returned invalid input: invalid arguments: "command" must be a string` || f.exists("invalid") {
		t.Errorf("invalid rewrite: %q", res.Text())
	}
}

// TestParallel: two hooks run at once: the call waits about as long as the
// slower, not the sum.
func TestParallel(t *testing.T) {
	f := newFixture(t)
	st := f.stack(t, config.File{Hooks: pre("Bash", command("sleep 1"), command("sleep 1"))})
	start := time.Now()
	bash(t, st, f.session(t), map[string]any{"command": "true"})
	if d := time.Since(start); d >= 1900*time.Millisecond {
		t.Errorf("two 1 s hooks took %v", d)
	}
}

// TestTimeout: a hook past its timeout is killed (its process gone) and
// fails; with failClosed it blocks.
func TestTimeout(t *testing.T) {
	f := newFixture(t)
	pid := filepath.Join(f.dir, "pid")
	slow := config.Hook{Type: "command", Command: "echo $$ > " + pid + "; sleep 30", Timeout: 300 * time.Millisecond, FailClosed: true}
	st := f.stack(t, config.File{Hooks: pre("Bash", slow)})
	res := bash(t, st, f.session(t), map[string]any{"command": "touch late"})
	if res.Text() != "Error: blocked by hook: hook failed: "+slow.Command+": timed out after 0.3s" {
		t.Errorf("timed out: %q", res.Text())
	}
	if f.exists("late") {
		t.Error("the call ran")
	}
	proctest.AwaitGone(t, proctest.ReadPid(t, pid))
}

// TestMatchers: names, lists, regexps and `if`.
func TestMatchers(t *testing.T) {
	f := newFixture(t)
	block := func(m, ifRule string) config.Hooks {
		h := command("exit 2")
		h.If = ifRule
		return pre(m, h)
	}
	for _, tc := range []struct {
		matcher, ifRule, command string
		blocked                  bool
	}{
		{"Bash", "", "true", true},
		{"bash", "", "true", true},
		{"Read|Bash", "", "true", true},
		{"Read, Write", "", "true", false},
		{"B.*", "", "true", true},
		{"^task_", "", "true", false},
		{"*", "", "true", true},
		{"Bash", "Bash(git push *)", "true", false},
		{"Bash", "Bash(git push *)", "echo x && git push origin main", true},
		{"Bash", "Bash(git push *)", "$CMD", true}, // cannot be checked: the hook runs
		// The `if` reads the parts the policy reads (issue 25): through
		// git's global options and bash's own brace expansion.
		{"Bash", "Bash(git push *)", "git -C . push origin HEAD:main", true},
		{"Bash", "Bash(git push *)", "git --no-pager -c x=y push", true},
		{"Bash", "Bash(git push *)", `find {x},.,-name,v,-exec,git,push,{},\;}`, true},
		{"Bash", "Bash(git push *)", "git -C . status", false},
	} {
		st := f.stack(t, config.File{Hooks: block(tc.matcher, tc.ifRule)})
		res := bash(t, st, f.session(t), map[string]any{"command": tc.command})
		if res.Code == tool.CodeBlocked != tc.blocked {
			t.Errorf("matcher %q if %q, %q: %q", tc.matcher, tc.ifRule, tc.command, res.Text())
		}
	}
}

// TestHooksAreContained: a hook's processes end with it, and it gets the
// scrubbed environment.
func TestHooksAreContained(t *testing.T) {
	f := newFixture(t)
	pid := filepath.Join(f.dir, "pid")
	env := filepath.Join(f.dir, "env")
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-key")
	st := f.stack(t, config.File{Hooks: pre("Bash", command(fmt.Sprintf("env > %s; setsid sleep 60 & echo $! > %s", env, pid)))})
	bash(t, st, f.session(t), map[string]any{"command": "true"})
	proctest.AwaitGone(t, proctest.ReadPid(t, pid))
	if data, _ := os.ReadFile(env); strings.Contains(string(data), "OPENAI_API_KEY") {
		t.Error("a hook saw a credential the scrub drops")
	}
}

// TestPythonHook: a hook in another language, reading its payload.
func TestPythonHook(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP-REASON: python3 is not installed")
	}
	f := newFixture(t)
	hook := f.script(t, "guard.py", `#!/usr/bin/env python3
import json, sys
p = json.load(sys.stdin)
if "--force" in p["tool_input"]["command"]:
    print("no force pushes", file=sys.stderr)
    sys.exit(2)
`)
	st := f.stack(t, config.File{Hooks: pre("Bash", command(hook))})
	s := f.session(t)
	if res := bash(t, st, s, map[string]any{"command": "echo git push --force"}); res.Text() != "Error: blocked by hook: no force pushes" {
		t.Errorf("force: %q", res.Text())
	}
	if res := bash(t, st, s, map[string]any{"command": "echo git push"}); res.IsError {
		t.Errorf("plain push: %q", res.Text())
	}
}

// TestClaudeSettingsHooks: Claude Code's hooks only with claudeHooks, the
// project's only when trusted as well; disableAllHooks, skipped types and
// de-duplication.
func TestClaudeSettingsHooks(t *testing.T) {
	f := newFixture(t)
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	blockIf := func(word string) string {
		return fmt.Sprintf(`{"matcher":"Bash","hooks":[{"type":"command","command":"grep -q %s && exit 2 || exit 0"}]}`, word)
	}
	write(filepath.Join(f.home, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[`+blockIf("user-word")+`,{"hooks":[{"type":"http","url":"x"},{"type":"command","command":"true","async":true}]}]}}`)
	write(filepath.Join(f.project, ".claude", "settings.json"), `{"hooks":{"PreToolUse":[`+blockIf("project-word")+`]}}`)
	write(filepath.Join(f.project, ".claude", "settings.local.json"), `{"disableAllHooks":true,"hooks":{"PreToolUse":[`+blockIf("local-word")+`]}}`)
	for _, tc := range []struct {
		claude, trust bool
		blocked       map[string]bool
	}{
		{false, false, map[string]bool{"user-word": false, "project-word": false}},
		{true, false, map[string]bool{"user-word": true, "project-word": false}},
		{true, true, map[string]bool{"user-word": true, "project-word": true, "local-word": false}},
	} {
		cfg := config.File{ClaudeHooks: tc.claude, TrustProjectHooks: tc.trust, Hooks: pre("Bash", command("exit 0"))}
		st := f.stack(t, cfg)
		s := f.session(t)
		for word, want := range tc.blocked {
			if res := bash(t, st, s, map[string]any{"command": "echo " + word}); (res.Code == tool.CodeBlocked) != want {
				t.Errorf("claudeHooks %v trust %v, %s: %q", tc.claude, tc.trust, word, res.Text())
			}
		}
		if tc.claude {
			var sources []string
			for _, hd := range st.Hooks.Handlers(s) {
				sources = append(sources, filepath.Base(hd.Source))
			}
			if want := map[bool]int{false: 2, true: 3}[tc.trust]; len(sources) != want {
				t.Errorf("handlers from %q", sources)
			}
		}
	}
}

func TestNoHooksNoMiddleware(t *testing.T) {
	f := newFixture(t)
	st := f.stack(t, config.File{})
	if st.Hooks != nil {
		t.Error("hooks without any configured")
	}
}

// TestMissingScriptWarns: a hook whose script is missing (exit 127) does
// not block, and is logged at WARN every time, with its command and why.
func TestMissingScriptWarns(t *testing.T) {
	f := newFixture(t)
	var logs strings.Builder
	cfg := config.File{Hooks: pre("Bash", command("/nonexistent/guard.sh"))}
	cfg.Local.Env.Set, cfg.Local.SpillDir = proctest.Set(), t.TempDir()
	st, err := host.Standard(cfg, host.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), host.WithPermissions(permissions.Options{Home: f.home, ManagedDir: f.managed}))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := f.session(t)
	for range 2 {
		if res := bash(t, st, s, map[string]any{"command": "true"}); res.IsError {
			t.Errorf("a failing hook blocked: %q", res.Text())
		}
	}
	line := `level=WARN msg="hooks: a hook failed" event=PreToolUse command=/nonexistent/guard.sh why="exit code 127" stderr="bash: line 1: /nonexistent/guard.sh: No such file or directory" source="dsh config"`
	if n := strings.Count(logs.String(), line); n != 2 {
		t.Errorf("%d warnings, want 2:\n%s", n, logs.String())
	}
}

// asker records questions and declines them.
type asker struct{ asked []tool.Question }

func (a *asker) Ask(_ context.Context, q tool.Question) (tool.Answer, error) {
	a.asked = append(a.asked, q)
	return tool.Answer{Choice: tool.Declined}, nil
}

// TestHooksFeedThePolicy: a hook's allow settles only a "no rule allows"
// ask; a hook's ask asks; a rewrite goes through the deny rules; a deny
// wins over another hook's allow.
func TestHooksFeedThePolicy(t *testing.T) {
	f := newFixture(t)
	allow := command(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`)
	ask := command(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a human should look"}}'`)
	deny := command(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'`)
	rewrite := command(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"rm -rf /tmp/dsh-hook-test-nothing"}}}'`)
	no := false
	perm := &config.Permissions{Default: "ask", Ask: []string{"git push *"}, Deny: []string{"rm -rf *"}, ClaudeSettings: &no}
	for _, tc := range []struct {
		name    string
		hooks   []config.Hook
		perm    *config.Permissions
		command string
		asked   string // the question's reason; "" when not asked
		text    string // the result, when not "(no output)"
	}{
		{name: "allow settles no rule", hooks: []config.Hook{allow}, perm: perm, command: "touch settled"},
		{name: "allow against an ask rule", hooks: []config.Hook{allow}, perm: perm, command: "git push nowhere main",
			asked: "`git push nowhere main` matches ask rule \"git push *\""},
		{name: "ask with the policy allowing", hooks: []config.Hook{ask}, command: "echo hi", asked: "hook: a human should look"},
		{name: "deny beats allow", hooks: []config.Hook{allow, deny}, perm: perm, command: "touch denied", text: "Error: blocked by hook: no"},
		{name: "a rewrite meets the deny rules", hooks: []config.Hook{rewrite}, perm: perm, command: "echo harmless",
			text: "Error: denied by policy: `rm -rf /tmp/dsh-hook-test-nothing` matches deny rule \"rm -rf *\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := f.stack(t, config.File{Hooks: pre("Bash", tc.hooks...), Permissions: tc.perm})
			a := &asker{}
			raw, _ := json.Marshal(map[string]any{"command": tc.command, "description": "d"})
			res := st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: raw, Session: f.session(t), Asker: a})
			if tc.asked != "" {
				if len(a.asked) != 1 || a.asked[0].Reason != tc.asked || a.asked[0].Remember != nil && strings.HasPrefix(tc.asked, "hook:") {
					t.Errorf("questions %+v, want one with the reason %q", a.asked, tc.asked)
				}
				return
			}
			want := tc.text
			if want == "" {
				want = "(no output)"
			}
			if len(a.asked) != 0 || res.Text() != want {
				t.Errorf("got %q after %d questions, want %q", res.Text(), len(a.asked), want)
			}
		})
	}
}

// TestRemoteSessionsRunHooksHere: with executor ssh a session's cwd is on
// the remote host; its hooks run here, and the payload names the remote
// cwd.
func TestRemoteSessionsRunHooksHere(t *testing.T) {
	f := newFixture(t)
	payload, pwd := filepath.Join(f.dir, "payload"), filepath.Join(f.dir, "pwd")
	cfg := config.File{Hooks: pre("Bash", command(fmt.Sprintf("cat > %s; pwd > %s; exit 2", payload, pwd)))}
	cfg.Local.Env.Set, cfg.Local.SpillDir = proctest.Set(), t.TempDir()
	exec, err := local.New(cfg.Local)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Close()
	h, err := hooks.New(cfg, exec, hooks.Options{Home: f.home, ManagedDir: f.managed, DefaultCwd: f.dir, RemoteSessions: true})
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	_ = reg.Register(tool.Definition{Name: "bash", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) {
		return tool.TextResult("ran remotely"), nil
	}})
	reg.UsePre(h.Pre(reg))
	remote := session.New("remote", "/remote/only/dir")
	defer remote.End()
	res := reg.Execute(context.Background(), tool.Call{Name: "bash", Args: json.RawMessage(`{"command":"true"}`), Session: remote})
	if res.Code != tool.CodeBlocked {
		t.Errorf("a guard of a remote session did not block: %q", res.Text())
	}
	if got, _ := os.ReadFile(pwd); string(got) != f.dir+"\n" {
		t.Errorf("the hook ran in %q", got)
	}
	if got, _ := os.ReadFile(payload); !strings.Contains(string(got), `"cwd":"/remote/only/dir"`) {
		t.Errorf("payload %s", got)
	}
}

// TestHookAskOnAnotherTool: a hook's ask about a task tool asks the user.
func TestHookAskOnAnotherTool(t *testing.T) {
	f := newFixture(t)
	ask := command(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"listing?"}}'`)
	st := f.stack(t, config.File{Hooks: pre("task_list", ask)})
	a := &asker{}
	res := st.Tools.Execute(context.Background(), tool.Call{Name: "task_list", Session: f.session(t), Asker: a})
	if len(a.asked) != 1 || a.asked[0].Reason != "hook: listing?" || a.asked[0].Message != "Allow this call?\n\ntask_list {}\n\nhook: listing?" || res.Text() != "Error: the user declined to run this command" {
		t.Errorf("result %q after %+v", res.Text(), a.asked)
	}
}

// TestHooksLeaveNoSpillFiles: a hook's large output is not kept.
func TestHooksLeaveNoSpillFiles(t *testing.T) {
	f := newFixture(t)
	spill := t.TempDir()
	cfg := config.File{Hooks: pre("Bash", command("head -c 200000 /dev/zero | tr '\\0' a; head -c 200000 /dev/zero | tr '\\0' b >&2; exit 1"))}
	cfg.Local.Env.Set, cfg.Local.SpillDir, cfg.Local.Grace = proctest.Set(), spill, 200*time.Millisecond
	cfg.Local.Sandbox.Mode = config.SandboxOff // the sandbox keeps files of its own there
	st, err := host.Standard(cfg, host.WithPermissions(permissions.Options{Home: f.home, ManagedDir: f.managed}))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bash(t, st, f.session(t), map[string]any{"command": "true"})
	var files []string
	_ = filepath.WalkDir(spill, func(p string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("spill files left: %q", files)
	}
}

// TestCancelWhileHooksRun: nothing runs, and no PostToolUse follows.
func TestCancelWhileHooksRun(t *testing.T) {
	f := newFixture(t)
	post := filepath.Join(f.dir, "post")
	st := f.stack(t, config.File{Hooks: config.Hooks{
		PreToolUse:  []config.HookGroup{{Hooks: []config.Hook{command("sleep 30")}}},
		PostToolUse: []config.HookGroup{{Hooks: []config.Hook{command("touch " + post)}}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	raw, _ := json.Marshal(map[string]any{"command": "touch ran", "description": "d"})
	res := st.Tools.Execute(ctx, tool.Call{Name: "bash", Args: raw, Session: f.session(t)})
	if res.Text() != "Error: command aborted" || f.exists("ran") {
		t.Errorf("cancelled during the hooks: %q", res.Text())
	}
	if _, err := os.Stat(post); err == nil {
		t.Error("PostToolUse ran for a call that never started")
	}
}

// TestLongReasonKeepsItsStart: an exit-2 reason is the start of stderr.
func TestLongReasonKeepsItsStart(t *testing.T) {
	f := newFixture(t)
	st := f.stack(t, config.File{Hooks: pre("Bash", command("{ printf START; head -c 100000 /dev/zero | tr '\\0' a; } >&2; exit 2"))})
	res := bash(t, st, f.session(t), map[string]any{"command": "true"})
	reason := strings.TrimPrefix(res.Text(), "Error: blocked by hook: ")
	if !strings.HasPrefix(reason, "STARTaaa") || len(reason) != 10000 {
		t.Errorf("reason of %d characters starting %q", len(reason), reason[:min(20, len(reason))])
	}
}

// TestSameScriptTwoConditions: one script guarding under two `if` rules is
// two guards.
func TestSameScriptTwoConditions(t *testing.T) {
	f := newFixture(t)
	guard := func(rule string) config.Hook { h := command("exit 2"); h.If = rule; return h }
	st := f.stack(t, config.File{Hooks: pre("Bash", guard("Bash(git push *)"), guard("Bash(rm *)"))})
	if res := bash(t, st, f.session(t), map[string]any{"command": "rm nothing-here"}); res.Code != tool.CodeBlocked {
		t.Errorf("the second guard did not run: %q", res.Text())
	}
}
