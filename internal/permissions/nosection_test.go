package permissions_test

import (
	"path/filepath"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/tool"
)

// Claude Code's settings without a permissions section (issue 27, docs/spec.md
// §9.1, §9.5): the stack reads them as with claudeSettings: true and
// trustProjectAllow: false, under a default of allow.

// noSection builds the whole stack of e without a permissions section.
func (e env) noSection(t *testing.T, opts ...host.Option) *host.Stack {
	t.Helper()
	st, err := e.stackOf(t, config.File{}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestClaudeSettingsWithoutASection: a Bash(curl:*) deny in the user's
// ~/.claude/settings.json used to be ignored unless dsh's config had a
// permissions section, so curl ran. Now it denies curl with the policy's
// exact text, unasked; a managed deny denies too, a user ask asks; a
// command no rule names runs, unasked, as before.
func TestClaudeSettingsWithoutASection(t *testing.T) {
	e := newEnv(t)
	settings(t, filepath.Join(e.home, ".claude", "settings.json"), nil, []string{"Bash(touch user-asked:*)"}, []string{"Bash(curl:*)"})
	settings(t, filepath.Join(e.managed, "managed-settings.json"), nil, nil, []string{"Bash(touch managed-denied*)"})
	st := e.noSection(t)
	s := newSession(t, e.project)
	a := answering(tool.Declined, false)

	res := run(t.Context(), st, s, a, "curl --version; touch curl-ran")
	if want := "Error: denied by policy: `curl --version` matches deny rule \"curl:*\""; res.Text() != want || res.Code != tool.CodeDenied {
		t.Errorf("curl: %q (%s), want %q", res.Text(), res.Code, want)
	}
	if exists(filepath.Join(e.project, "curl-ran")) {
		t.Error("a command the user's settings deny ran")
	}
	if res := run(t.Context(), st, s, a, "touch managed-denied"); res.Text() != "Error: denied by policy: `touch managed-denied` matches deny rule \"touch managed-denied*\"" {
		t.Errorf("managed deny: %q", res.Text())
	}
	if a.count() != 0 {
		t.Errorf("a deny asked %d times", a.count())
	}
	if res := run(t.Context(), st, s, a, "touch user-asked"); res.Text() != textDeclined || a.count() != 1 || exists(filepath.Join(e.project, "user-asked")) {
		t.Errorf("user ask, declined: %q, %d questions", res.Text(), a.count())
	}
	if res := run(t.Context(), st, s, a, "echo unrelated && touch unrelated"); res.IsError || a.count() != 1 || !exists(filepath.Join(e.project, "unrelated")) {
		t.Errorf("a command no rule names: %+v, %d questions", res, a.count())
	}
}

// TestProjectAllowIgnoredWithoutASection: without a section nothing can
// set trustProjectAllow, so a project's allow rules are ignored. Under a
// default of allow an allow rule changes no decision (an ask or deny rule
// of the same part beats it, as in Claude Code), so what the test sees is
// what the call was decided by: an honoured allow rule would name itself
// (the audit log's decidedBy), an ignored one leaves the command to the
// default. The user's ask is still asked, and with nobody to ask falls
// back to a denial; the project file is listed with its allow rules
// ignored.
func TestProjectAllowIgnoredWithoutASection(t *testing.T) {
	e := newEnv(t)
	settings(t, filepath.Join(e.home, ".claude", "settings.json"), nil, []string{"Bash(touch asked:*)"}, nil)
	project := filepath.Join(e.project, ".claude", "settings.json")
	settings(t, project, []string{"Bash(touch asked:*)", "Bash(touch allowed:*)"}, nil, nil)
	st := e.noSection(t)
	s := newSession(t, e.project)

	res := run(t.Context(), st, s, nil, "touch asked")
	if want := "Error: this command needs the user's approval (`touch asked` matches ask rule \"touch asked:*\"), and this client cannot ask for it. Ask the user to run it, or to allow it in dsh's permissions config."; res.Text() != want || res.Code != permissions.CodeNoAsker {
		t.Errorf("the user's ask with a project allow: %q (%s), want %q", res.Text(), res.Code, want)
	}
	a := answering(tool.Declined, false)
	if res := run(t.Context(), st, s, a, "touch asked"); res.Text() != textDeclined || a.count() != 1 || exists(filepath.Join(e.project, "asked")) {
		t.Errorf("asked, declined: %q, %d questions", res.Text(), a.count())
	}
	res = run(t.Context(), st, s, a, "touch allowed")
	if want := (tool.Ruling{Outcome: tool.OutcomeAllow, By: "no rule (default: allow)"}); res.IsError || res.Ruling != want || !exists(filepath.Join(e.project, "allowed")) {
		t.Errorf("touch allowed: %+v, want it run by %+v, not by the project's allow rule", res, want)
	}
	if st.Gate == nil {
		t.Fatal("a stack without a permissions section has no gate")
	}
	var found bool
	for _, src := range st.Gate.Sources(s) {
		if src.Name == project {
			found = src.Rules == 0 && src.Note == "allow rules ignored (trustProjectAllow: false)"
		}
	}
	if !found {
		t.Errorf("sources %+v: the project file is not listed with its allow rules ignored", st.Gate.Sources(s))
	}
}

// TestRulelessSessionParsesNothing: a session whose settings files hold
// no Bash rule (none at all, other tools' rules, a project's ignored
// allow rules) has no policy: its calls run unparsed, decided by nothing
// (the audit log's decidedBy is empty), as in a stack without a gate. A
// session whose files hold a rule parses, and names what decided.
func TestRulelessSessionParsesNothing(t *testing.T) {
	e := newEnv(t)
	settings(t, filepath.Join(e.home, ".claude", "settings.json"), []string{"Read(./src)"}, nil, []string{"WebFetch"})
	settings(t, filepath.Join(e.project, ".claude", "settings.local.json"), []string{"Bash(touch x:*)"}, nil, nil)
	st := e.noSection(t)
	if st.Gate == nil {
		t.Fatal("a stack without a permissions section has no gate")
	}
	res := run(t.Context(), st, newSession(t, e.project), nil, "touch x && ls")
	if want := (tool.Ruling{Outcome: tool.OutcomeAllow}); res.IsError || res.Ruling != want {
		t.Errorf("ruleless: %+v, want the ruling %+v", res, want)
	}

	ruled := newEnv(t)
	settings(t, filepath.Join(ruled.home, ".claude", "settings.json"), nil, nil, []string{"Bash(rm -rf /)"})
	res = run(t.Context(), ruled.noSection(t), newSession(t, ruled.project), nil, "ls")
	if want := (tool.Ruling{Outcome: tool.OutcomeAllow, By: "read-only command"}); res.IsError || res.Ruling != want {
		t.Errorf("with a rule: %+v, want the ruling %+v", res, want)
	}
}

// TestMalformedManagedWithoutASection: a managed settings file that is not
// valid JSON denies every call without a section too (docs/spec.md §9.5):
// the administrator's rules cannot be read, so none is assumed away.
func TestMalformedManagedWithoutASection(t *testing.T) {
	e := newEnv(t)
	managed := filepath.Join(e.managed, "managed-settings.json")
	writeFile(t, managed, "{")
	res := run(t.Context(), e.noSection(t), newSession(t, e.project), nil, "touch ran")
	if want := "Error: denied by policy: managed settings file " + managed + " is malformed"; res.Text() != want || exists(filepath.Join(e.project, "ran")) {
		t.Errorf("malformed managed file: %q, want %q", res.Text(), want)
	}
}
