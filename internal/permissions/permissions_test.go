package permissions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }

// env is a user's machine for one test: a home, a managed settings
// directory and a project, each empty until a test writes settings there.
type env struct {
	home, managed, project string
}

func newEnv(t *testing.T) env {
	dir := t.TempDir()
	e := env{home: filepath.Join(dir, "home"), managed: filepath.Join(dir, "etc"), project: filepath.Join(dir, "project")}
	for _, d := range []string{e.home, e.managed, e.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// settings writes a Claude Code settings file with these rule lists.
func settings(t *testing.T, path string, allow, ask, deny []string) {
	t.Helper()
	var s struct {
		Permissions map[string][]string `json:"permissions"`
	}
	s.Permissions = map[string][]string{"allow": allow, "ask": ask, "deny": deny}
	data, _ := json.Marshal(s)
	writeFile(t, path, string(data))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stack builds the whole stack with perm as its permissions section, its
// Claude Code files in e.
func (e env) stack(t *testing.T, perm config.Permissions, opts ...host.Option) *host.Stack {
	t.Helper()
	st, err := e.stackOf(t, config.File{Permissions: &perm}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// stackOf builds the whole stack of cfg for a test: its commands marked as
// the test's, its Claude Code files in e; host.Standard's error is
// returned.
func (e env) stackOf(t *testing.T, cfg config.File, opts ...host.Option) (*host.Stack, error) {
	t.Helper()
	cfg.Local.Env.Set = proctest.Set()
	cfg.Local.SpillDir = t.TempDir()
	cfg.Local.Grace = 200 * time.Millisecond
	if cfg.Local.Sandbox.Mode == "" {
		// The policy's tests, unsandboxed unless they say otherwise,
		// as they were written before the sandbox was the default.
		cfg.Local.Sandbox.Mode = config.SandboxOff
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	opts = append(opts, host.WithPermissions(permissions.Options{Home: e.home, ManagedDir: e.managed, ProjectDir: e.project}))
	st, err := host.Standard(cfg, opts...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, nil
}

// asker answers every question with answer, recording them.
type asker struct {
	mu     sync.Mutex
	asked  []tool.Question
	answer func(ctx context.Context, q tool.Question) (tool.Answer, error)
}

func (a *asker) Ask(ctx context.Context, q tool.Question) (tool.Answer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, q)
	a.mu.Unlock()
	return a.answer(ctx, q)
}

func (a *asker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

func answering(c tool.Choice, remember bool) *asker {
	return &asker{answer: func(context.Context, tool.Question) (tool.Answer, error) {
		return tool.Answer{Choice: c, Remember: remember}, nil
	}}
}

// run runs command as a bash call of s, asking a (nil: nobody to ask).
func run(ctx context.Context, st *host.Stack, s *session.Session, a tool.Asker, command string) tool.Result {
	args, _ := json.Marshal(map[string]any{"command": command, "description": "test"})
	call := tool.Call{Name: "bash", Args: args, Session: s}
	if a != nil {
		call.Asker = a
	}
	return st.Tools.Execute(ctx, call)
}

func newSession(t *testing.T, cwd string) *session.Session {
	s := session.New(t.Name(), cwd)
	t.Cleanup(s.End)
	return s
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestDecisions(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", Allow: []string{"touch allowed*"}, Deny: []string{"rm -rf *"}, ClaudeSettings: new(false)})
	s := newSession(t, e.project)
	a := answering(tool.Declined, false)

	if res := run(t.Context(), st, s, a, "touch allowed"); res.IsError || !exists(filepath.Join(e.project, "allowed")) {
		t.Errorf("allowed: %+v", res)
	}
	res := run(t.Context(), st, s, a, "touch denied && rm -rf /nonexistent")
	if want := "Error: denied by policy: `rm -rf /nonexistent` matches deny rule \"rm -rf *\""; res.Text() != want || res.Code != tool.CodeDenied {
		t.Errorf("denied: %q (%s), want %q", res.Text(), res.Code, want)
	}
	if exists(filepath.Join(e.project, "denied")) {
		t.Error("a denied command ran")
	}
	if a.count() != 0 {
		t.Errorf("allow and deny asked %d times", a.count())
	}
	// Another tool is not the policy's.
	if res := st.Tools.Execute(t.Context(), tool.Call{Name: "task_list", Session: s}); res.IsError {
		t.Errorf("task_list: %+v", res)
	}
}

// TestBackgroundStartsAreChecked: a background start is decided like a
// foreground call (docs/spec.md §9): denied, or asked and declined, it
// starts no task and runs nothing; allowed, it starts one.
func TestBackgroundStartsAreChecked(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", Allow: []string{"touch allowed*"}, Deny: []string{"rm -rf *"}, ClaudeSettings: new(false)})
	s := newSession(t, e.project)
	background := func(a tool.Asker, command string) tool.Result {
		args, _ := json.Marshal(map[string]any{"command": command, "description": "test", "run_in_background": true})
		call := tool.Call{Name: "bash", Args: args, Session: s}
		if a != nil {
			call.Asker = a
		}
		return st.Tools.Execute(t.Context(), call)
	}
	a := answering(tool.Declined, false)
	if res := background(a, "touch bg-denied; rm -rf /nonexistent"); res.Text() != "Error: denied by policy: `rm -rf /nonexistent` matches deny rule \"rm -rf *\"" {
		t.Errorf("denied: %q", res.Text())
	}
	if res := background(a, "touch bg-declined"); res.Text() != "Error: the user declined to run this command" || a.count() != 1 {
		t.Errorf("declined: %q, %d questions", res.Text(), a.count())
	}
	if res := st.Tools.Execute(t.Context(), tool.Call{Name: "task_list", Session: s}); res.Text() != "(no background tasks)" {
		t.Errorf("a refused start started a task: %q", res.Text())
	}
	if res := background(a, "touch allowed"); res.IsError || res.Text() != "started background task bash-1" {
		t.Fatalf("allowed: %q", res.Text())
	}
	proctest.Eventually(t, proctest.Wait, func() error {
		if !exists(filepath.Join(e.project, "allowed")) {
			return errors.New("the allowed background command did not run")
		}
		return nil
	})
	for _, name := range []string{"bg-denied", "bg-declined"} {
		if exists(filepath.Join(e.project, name)) {
			t.Errorf("%s ran", name)
		}
	}
}

func TestAskOutcomes(t *testing.T) {
	e := newEnv(t)
	perm := config.Permissions{Default: "ask", ClaudeSettings: new(false)}
	st := e.stack(t, perm)
	for _, tc := range []struct {
		name   string
		asker  tool.Asker
		runs   bool
		text   string
		code   string
		before func(context.CancelFunc)
	}{
		{name: "accepted", asker: answering(tool.Accepted, false), runs: true, text: "(no output)"},
		{name: "declined", asker: answering(tool.Declined, false), text: "Error: the user declined to run this command", code: permissions.CodeDeclined},
		{name: "dismissed", asker: answering(tool.Dismissed, false), text: "Error: the user dismissed the approval request; the command did not run", code: permissions.CodeDismissed},
		{name: "failed", asker: &asker{answer: func(context.Context, tool.Question) (tool.Answer, error) {
			return tool.Answer{}, errors.New("broken pipe")
		}},
			text: "Error: the user dismissed the approval request; the command did not run", code: permissions.CodeDismissed},
		{name: "nobody", asker: nil, text: "Error: this command needs the user's approval (no rule allows `touch nobody`), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config.", code: permissions.CodeNoAsker},
		{name: "cannot", asker: &asker{answer: func(context.Context, tool.Question) (tool.Answer, error) { return tool.Answer{}, tool.ErrCannotAsk }},
			text: "Error: this command needs the user's approval (no rule allows `touch cannot`), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config.", code: permissions.CodeNoAsker},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, e.project)
			res := run(t.Context(), st, s, tc.asker, "touch "+tc.name)
			if res.Text() != tc.text || res.Code != tc.code || exists(filepath.Join(e.project, tc.name)) != tc.runs {
				t.Errorf("got %q (%s), ran %v; want %q (%s), ran %v", res.Text(), res.Code, exists(filepath.Join(e.project, tc.name)), tc.text, tc.code, tc.runs)
			}
			if a, ok := tc.asker.(*asker); ok {
				want := "Run this command?\n\ntouch " + tc.name + "\n\nin " + e.project + "\n\nno rule allows `touch " + tc.name + "`"
				if len(a.asked) != 1 || a.asked[0].Message != want {
					t.Errorf("questions %+v, want one: %q", a.asked, want)
				}
			}
		})
	}
}

func TestAskFallbackAllow(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", AskFallback: "allow", ClaudeSettings: new(false)})
	if res := run(t.Context(), st, newSession(t, e.project), nil, "touch fell-back"); res.IsError || !exists(filepath.Join(e.project, "fell-back")) {
		t.Errorf("askFallback allow: %+v", res)
	}
}

// TestAskTimeout: an unanswered question is dismissed after askTimeoutMs.
func TestAskTimeout(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", AskTimeout: 100 * time.Millisecond, ClaudeSettings: new(false)})
	silent := &asker{answer: func(ctx context.Context, _ tool.Question) (tool.Answer, error) {
		<-ctx.Done()
		return tool.Answer{}, ctx.Err()
	}}
	start := time.Now()
	res := run(t.Context(), st, newSession(t, e.project), silent, "touch late")
	if res.Text() != "Error: the user dismissed the approval request; the command did not run" || exists(filepath.Join(e.project, "late")) {
		t.Errorf("timed out ask: %q", res.Text())
	}
	if d := time.Since(start); d > proctest.Scale(5*time.Second) {
		t.Errorf("the ask took %v", d)
	}
}

// TestAskAborted: a call cancelled while the user is asked is aborted.
func TestAskAborted(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", ClaudeSettings: new(false)})
	ctx, cancel := context.WithCancel(t.Context())
	blocked := &asker{answer: func(ctx context.Context, _ tool.Question) (tool.Answer, error) {
		cancel()
		<-ctx.Done()
		return tool.Answer{}, ctx.Err()
	}}
	res := run(ctx, st, newSession(t, e.project), blocked, "touch aborted")
	if res.Text() != "Error: command aborted" || exists(filepath.Join(e.project, "aborted")) {
		t.Errorf("aborted ask: %q", res.Text())
	}
}

func TestSuspend(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", ClaudeSettings: new(false)})
	later := &asker{answer: func(context.Context, tool.Question) (tool.Answer, error) { return tool.Answer{}, tool.ErrSuspend }}
	res := run(t.Context(), st, newSession(t, e.project), later, "touch suspended")
	if res.Question == nil || res.IsError || exists(filepath.Join(e.project, "suspended")) {
		t.Fatalf("suspended: %+v", res)
	}
	if res.Question.Reason != "no rule allows `touch suspended`" || strings.Join(res.Question.Remember, ",") != "touch suspended *" {
		t.Errorf("question %+v", res.Question)
	}
}

// TestRemember: accepting with remember allows that kind of command for the
// rest of the session, not for another session, and not past an ask rule.
func TestRemember(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", Ask: []string{"git push *"}, ClaudeSettings: new(false)})
	s := newSession(t, e.project)
	a := answering(tool.Accepted, true)
	run(t.Context(), st, s, a, "touch one")
	if len(a.asked) != 1 || strings.Join(a.asked[0].Remember, ",") != "touch one *" || a.asked[0].RememberTitle() != "Allow `touch one *` for the rest of this session" {
		t.Fatalf("questions %+v", a.asked)
	}
	if res := run(t.Context(), st, s, a, "touch one two"); res.IsError || a.count() != 1 || !exists(filepath.Join(e.project, "two")) {
		t.Errorf("remembered: %+v, %d questions", res, a.count())
	}
	run(t.Context(), st, s, a, "git push origin main")
	if a.count() != 2 || a.asked[1].Remember != nil {
		t.Errorf("an ask rule: %+v", a.asked)
	}
	other := answering(tool.Declined, false)
	if res := run(t.Context(), st, newSession(t, e.project), other, "touch one three"); !res.IsError || other.count() != 1 {
		t.Errorf("another session: %+v, %d questions", res, other.count())
	}
}

// TestOneAskAtATime: a second ask of the session waits for the first, and
// is decided again after a remember: it is not asked.
func TestOneAskAtATime(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", ClaudeSettings: new(false)})
	s := newSession(t, e.project)
	release := make(chan struct{})
	var concurrent, most atomic.Int32
	a := &asker{answer: func(ctx context.Context, _ tool.Question) (tool.Answer, error) {
		n := concurrent.Add(1)
		defer concurrent.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		return tool.Answer{Choice: tool.Accepted, Remember: true}, nil
	}}
	var wg sync.WaitGroup
	results := make([]tool.Result, 2)
	for i := range results {
		wg.Go(func() { results[i] = run(t.Context(), st, s, a, "touch both "+string(rune('a'+i))) })
	}
	proctest.Eventually(t, proctest.Wait, func() error {
		if a.count() != 1 {
			return errors.New("the first question was not asked")
		}
		return nil
	})
	close(release)
	wg.Wait()
	if a.count() != 1 || most.Load() != 1 {
		t.Errorf("%d questions, %d at once; want 1, 1", a.count(), most.Load())
	}
	for i, res := range results {
		if res.IsError {
			t.Errorf("call %d: %+v", i, res)
		}
	}
}

func TestQuestionCutsALongCommand(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", ClaudeSettings: new(false)})
	a := answering(tool.Declined, false)
	long := "touch " + strings.Repeat("é", 3000)
	run(t.Context(), st, newSession(t, e.project), a, long)
	shown := string([]rune(long)[:2000]) + "…"
	if len(a.asked) != 1 || !strings.HasPrefix(a.asked[0].Message, "Run this command?\n\n"+shown+"\n\nin ") {
		t.Errorf("the question does not show the command's first 2000 code points")
	}
}

func TestClaudeSettings(t *testing.T) {
	e := newEnv(t)
	settings(t, filepath.Join(e.home, ".claude", "settings.json"), nil, nil, []string{"Bash(touch user-denied*)", "Read(./secrets)"})
	settings(t, filepath.Join(e.project, ".claude", "settings.json"), []string{"Bash(touch project-allowed*)"}, nil, []string{"Bash(touch project-denied*)"})
	settings(t, filepath.Join(e.project, ".claude", "settings.local.json"), nil, []string{"Bash(touch local-asked*)"}, nil)
	settings(t, filepath.Join(e.managed, "managed-settings.d", "10-team.json"), nil, nil, []string{"Bash(touch managed-denied:*)"})

	for _, trust := range []bool{false, true} {
		st := e.stack(t, config.Permissions{Default: "allow", TrustProjectAllow: trust, Ask: []string{"touch project-allowed*"}})
		s := newSession(t, e.project)
		for cmd, want := range map[string]string{
			"touch user-denied":    "Error: denied by policy: `touch user-denied` matches deny rule \"touch user-denied*\"",
			"touch project-denied": "Error: denied by policy: `touch project-denied` matches deny rule \"touch project-denied*\"",
			"touch managed-denied": "Error: denied by policy: `touch managed-denied` matches deny rule \"touch managed-denied:*\"",
			"touch local-asked":    "Error: the user declined to run this command",
		} {
			if res := run(t.Context(), st, s, answering(tool.Declined, false), cmd); res.Text() != want {
				t.Errorf("%s: %q, want %q", cmd, res.Text(), want)
			}
		}
		// dsh's own ask rule beats a project's allow; the project's allow
		// counts only when trusted, and then only against the default.
		if res, _ := st.Gate.Check(s, "touch project-allowed"); res.Reason() != "`touch project-allowed` matches ask rule \"touch project-allowed*\"" {
			t.Errorf("trust %v: %q", trust, res.Reason())
		}
		var names []string
		for _, src := range st.Gate.Sources(s) {
			names = append(names, filepath.Base(src.Name)+":"+src.Note)
		}
		if len(names) != 5 {
			t.Errorf("sources %q", names)
		}
	}
}

// TestSettingsFiles: the files are read in Claude Code's order (managed,
// its drop-ins by name, user, project, project local), and PROJECT is
// CLAUDE_PROJECT_DIR from dsh's environment when set, else the session's
// cwd (docs/spec.md §9.5).
func TestSettingsFiles(t *testing.T) {
	e := newEnv(t)
	settings(t, filepath.Join(e.managed, "managed-settings.json"), nil, nil, []string{"Bash(touch m-json*)"})
	settings(t, filepath.Join(e.managed, "managed-settings.d", "20-b.json"), nil, nil, []string{"Bash(touch m-b*)"})
	settings(t, filepath.Join(e.managed, "managed-settings.d", "10-a.json"), nil, []string{"Bash(touch m-a*)"}, nil)
	settings(t, filepath.Join(e.home, ".claude", "settings.json"), nil, nil, []string{"Bash(touch user*)"})
	cwd, envProject := e.project, t.TempDir()
	settings(t, filepath.Join(cwd, ".claude", "settings.json"), nil, nil, []string{"Bash(touch cwd*)"})
	settings(t, filepath.Join(envProject, ".claude", "settings.local.json"), nil, nil, []string{"Bash(touch env*)"})

	for _, tc := range []struct {
		name, env, project string
	}{{"CLAUDE_PROJECT_DIR", envProject, envProject}, {"session cwd", "", cwd}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CLAUDE_PROJECT_DIR", tc.env)
			noProject := e
			noProject.project = "" // the gate's default: the environment, else the cwd
			st := noProject.stack(t, config.Permissions{Default: "allow"})
			s := newSession(t, cwd)
			var got []string
			for _, src := range st.Gate.Sources(s) {
				got = append(got, src.Name)
			}
			want := []string{"dsh config",
				filepath.Join(e.managed, "managed-settings.json"),
				filepath.Join(e.managed, "managed-settings.d", "10-a.json"),
				filepath.Join(e.managed, "managed-settings.d", "20-b.json"),
				filepath.Join(e.home, ".claude", "settings.json")}
			if tc.project == cwd {
				want = append(want, filepath.Join(cwd, ".claude", "settings.json"))
			} else {
				want = append(want, filepath.Join(envProject, ".claude", "settings.local.json"))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("sources\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for cmd, denied := range map[string]bool{
				"touch m-json": true, "touch m-b": true, "touch user": true,
				"touch cwd": tc.project == cwd, "touch env": tc.project == envProject,
			} {
				res, err := st.Gate.Check(s, cmd)
				if err != nil || (res.Decision == "deny") != denied {
					t.Errorf("%s: %s, %v; want denied %v", cmd, res.Decision, err, denied)
				}
			}
			if res, _ := st.Gate.Check(s, "touch m-a"); res.Decision != "ask" {
				t.Errorf("the managed drop-in's ask rule: %s", res.Decision)
			}
		})
	}
}

func TestProjectAllowNeedsTrust(t *testing.T) {
	e := newEnv(t)
	settings(t, filepath.Join(e.project, ".claude", "settings.local.json"), []string{"Bash(touch trusted*)"}, nil, nil)
	for trust, want := range map[bool]bool{false: false, true: true} {
		st := e.stack(t, config.Permissions{Default: "deny", TrustProjectAllow: trust})
		s := newSession(t, e.project)
		res := run(t.Context(), st, s, nil, "touch trusted")
		if ran := !res.IsError; ran != want {
			t.Errorf("trustProjectAllow %v: %q", trust, res.Text())
		}
		src := st.Gate.Sources(s)
		if last := src[len(src)-1]; !trust && last.Note != "allow rules ignored (trustProjectAllow: false)" {
			t.Errorf("source %+v", last)
		}
	}
}

// TestSettingsReadAtSessionStart: a command that rewrites the settings does
// not change its own session's policy; a new session reads the new file.
func TestSettingsReadAtSessionStart(t *testing.T) {
	e := newEnv(t)
	local := filepath.Join(e.project, ".claude", "settings.local.json")
	settings(t, local, nil, nil, []string{"Bash(touch x*)"})
	st := e.stack(t, config.Permissions{Default: "allow"})
	s := newSession(t, e.project)
	rewrite := `printf '{"permissions":{"deny":[]}}' > .claude/settings.local.json`
	if res := run(t.Context(), st, s, nil, rewrite); res.IsError {
		t.Fatalf("rewrite: %+v", res)
	}
	if res := run(t.Context(), st, s, nil, "touch x1"); !res.IsError {
		t.Error("the session's policy changed when its settings file did")
	}
	if res := run(t.Context(), st, newSession(t, e.project), nil, "touch x2"); res.IsError {
		t.Errorf("a new session kept the old rules: %q", res.Text())
	}
}

// TestMalformedSettings: a user or project file that is not JSON, and an
// entry that is not a rule, are skipped with a warning naming the file
// (and the entry); a malformed managed file denies every call.
func TestMalformedSettings(t *testing.T) {
	e := newEnv(t)
	user, project := filepath.Join(e.home, ".claude", "settings.json"), filepath.Join(e.project, ".claude", "settings.json")
	writeFile(t, user, "{not json")
	settings(t, project, nil, nil, []string{"Bash(touch \"unbalanced)", "Bash(touch bad*)"})
	var logs strings.Builder
	st := e.stack(t, config.Permissions{Default: "allow"}, host.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	s := newSession(t, e.project)
	if res := run(t.Context(), st, s, nil, "touch fine"); res.IsError {
		t.Errorf("a malformed user file or entry broke the session: %q", res.Text())
	}
	if res := run(t.Context(), st, s, nil, "touch bad"); !res.IsError {
		t.Error("the file's usable entry was dropped with the unusable one")
	}
	for _, want := range []string{
		`level=WARN msg="permissions: skipping a Claude Code settings file" file=` + user + ` err=`,
		`level=WARN msg="permissions: skipping an unusable rule" file=` + project + ` entry="Bash(touch \"unbalanced)" err=`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no warning %q in the log:\n%s", want, logs.String())
		}
	}
	if src := st.Gate.Sources(s); len(src) < 2 || src[1].Name != user || !strings.HasPrefix(src[1].Note, "unusable: ") {
		t.Errorf("sources %+v: the user file is not listed as unusable", src)
	}

	managed := filepath.Join(e.managed, "managed-settings.json")
	writeFile(t, managed, "[")
	st = e.stack(t, config.Permissions{Default: "allow"})
	res := run(t.Context(), st, newSession(t, e.project), nil, "true")
	if want := "Error: denied by policy: managed settings file " + managed + " is malformed"; res.Text() != want {
		t.Errorf("malformed managed file: %q, want %q", res.Text(), want)
	}
}

// TestSettingsThatNeverEnd: a cloned repository commits its settings
// files as a symlink to /dev/zero and as a FIFO. The session's first call
// used to read without end or block forever; now both files are skipped
// with a warning and the call runs.
func TestSettingsThatNeverEnd(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.project, ".claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "settings.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "settings.local.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	st := e.stack(t, config.Permissions{Default: "allow"}, host.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if res := run(t.Context(), st, newSession(t, e.project), nil, "true"); res.IsError {
		t.Fatalf("the call failed: %q", res.Text())
	}
	for _, name := range []string{"settings.json", "settings.local.json"} {
		want := `msg="permissions: skipping a Claude Code settings file" file=` + filepath.Join(dir, name) + ` err="not a regular file`
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no warning %q in the log:\n%s", want, logs.String())
		}
	}
}

// TestQuestionShowsHiddenCharacters: a carriage return, an escape sequence
// or a bidirectional override cannot make the question show another
// command than the one that runs.
func TestQuestionShowsHiddenCharacters(t *testing.T) {
	e := newEnv(t)
	st := e.stack(t, config.Permissions{Default: "ask", ClaudeSettings: new(false)})
	a := answering(tool.Declined, false)
	run(t.Context(), st, newSession(t, e.project), a, "touch victim #\rls -la \x1b[K\u202e")
	want := "Run this command?\n\ntouch victim #\\rls -la \\x1b[K\\u202e\n\nin " + e.project + "\n\nno rule allows `touch victim`"
	if len(a.asked) != 1 || a.asked[0].Message != want {
		t.Errorf("question %+v\nwant %q", a.asked, want)
	}
}

// TestRemoteSessionsReadNoProjectFiles: with the SSH executor a session's
// cwd is a path on the remote host (docs/spec.md §13), so PROJECT comes
// from CLAUDE_PROJECT_DIR alone: a local directory that happens to have
// the same path is not read as the project. Not parallel: it clears
// CLAUDE_PROJECT_DIR.
func TestRemoteSessionsReadNoProjectFiles(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	e := newEnv(t)
	settings(t, filepath.Join(e.project, ".claude", "settings.json"), nil, nil, []string{"Bash(touch project-denied*)"})
	for remote, want := range map[bool]string{false: "deny", true: "allow"} {
		g := permissions.New(config.Permissions{Default: "allow"}, permissions.Options{Home: e.home, ManagedDir: e.managed, RemoteSessions: remote})
		res, err := g.Check(newSession(t, e.project), "touch project-denied")
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(res.Decision); got != want {
			t.Errorf("remote sessions %v: %s (%s), want %s", remote, got, res.DenyText(), want)
		}
	}
}
