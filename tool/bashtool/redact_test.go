package bashtool_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// fakePAT is a GitHub token of the real format, not a real one.
const fakePAT = "ghp_Zq3T9xLmV2bN8cR1dF6gH0jK4pW7sY5aE2uI"

// TestForegroundSecretsRedacted: a secret a command prints reaches the
// model as [REDACTED:<rule>] (by default), whole when the output is
// truncated too; the spill file keeps it.
func TestForegroundSecretsRedacted(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	res := f.call(t, nil, jsonArgs(map[string]any{"command": "echo GITHUB_TOKEN=" + fakePAT, "description": "print a token"}))
	if got, want := res.Text(), "GITHUB_TOKEN=[REDACTED:github-pat]\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	f = newFixture(t, config.Bash{}, nil, func(c *config.Local) { c.MaxOutputBytes = 100 })
	res = f.call(t, nil, jsonArgs(map[string]any{"command": "echo " + fakePAT + "; seq 1 100; echo " + fakePAT, "description": "print a token twice"}))
	if strings.Contains(res.Text(), fakePAT) || strings.Count(res.Text(), "[REDACTED:github-pat]") != 2 {
		t.Errorf("truncated text %q: want the token redacted in head and tail", res.Text())
	}
	var st struct{ Stdout struct{ SpillPath string } }
	b, _ := json.Marshal(res.Structured)
	_ = json.Unmarshal(b, &st)
	if raw, err := os.ReadFile(st.Stdout.SpillPath); err != nil || !strings.HasPrefix(string(raw), fakePAT+"\n") {
		t.Errorf("the spill file holds %.60q, %v: want the raw output", raw, err)
	}
}

// TestRedactionHidesNoEscapedToken: an escape sequence inside a token does
// not hide it: the text is sanitized first.
func TestRedactionHidesNoEscapedToken(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	res := f.call(t, nil, jsonArgs(map[string]any{"command": `printf 'ghp_Zq3T9xLm\033[0mV2bN8cR1dF6gH0jK4pW7sY5aE2uI\n'`, "description": "print a token with an escape"}))
	if got, want := res.Text(), "[REDACTED:github-pat]\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// TestRedactionHidesNoTokenAfterAnInvisibleCharacter: a zero-width
// character before a token does not hide it: it is shown as an escape
// after the redaction, since the escape's last hex digit would glue to
// the token and make it part of a longer word.
func TestRedactionHidesNoTokenAfterAnInvisibleCharacter(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	res := f.call(t, nil, jsonArgs(map[string]any{"command": `printf '\342\200\213` + fakePAT + `\357\273\277` + fakePAT + `\n'`, "description": "print tokens after invisible characters"}))
	if got, want := res.Text(), `\u200b[REDACTED:github-pat]\ufeff[REDACTED:github-pat]`+"\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// TestRedactOff: with the Off redactor the model reads the output as is.
func TestRedactOff(t *testing.T) {
	off, err := redact.New(redact.Off)
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	f := newFixture(t, config.Bash{}, nil, nil)
	if err := reg.Register(bashtool.New(f.exec, nil, config.Bash{}, bashtool.WithRedactor(off)).Definition()); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), tool.Call{Name: "bash", Args: json.RawMessage(jsonArgs(map[string]any{"command": "echo " + fakePAT, "description": "print a token"}))})
	if got := res.Text(); got != fakePAT+"\n" {
		t.Errorf("text %q, want the token", got)
	}
}

// TestBackgroundAndProgressSecretsRedacted: task reads and progress
// messages are redacted too.
func TestBackgroundAndProgressSecretsRedacted(t *testing.T) {
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()
	id := s.start(t, a, "echo token "+fakePAT)
	if got, want := s.output(t, a, id), "token [REDACTED:github-pat]\n[status: completed, exit code: 0]"; got != want {
		t.Errorf("task_output %q, want %q", got, want)
	}

	if got := firstProgress(t, "echo using "+fakePAT); got != "using [REDACTED:github-pat]" {
		t.Errorf("progress message %q", got)
	}
}
