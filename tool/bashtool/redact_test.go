package bashtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
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

// The attacks of a secret split where output is cut (docs/spec.md §14):
// fakePAT's two halves, each of which must never reach the model.
var patHalves = [2]string{fakePAT[:11], fakePAT[11:]} // "ghp_Zq3T9xL", 7 characters after the prefix

// showsPart reports which part of fakePAT text shows, "" for none: a
// half, or 6 characters of it anywhere.
func showsPart(text string) string {
	for i := 0; i+6 <= len(fakePAT); i++ {
		if strings.Contains(text, fakePAT[i:i+6]) {
			return fakePAT[i : i+6]
		}
	}
	return ""
}

// openGate lets a command waiting with `read _ < gate` go on.
func openGate(t *testing.T, gate fifo) {
	t.Helper()
	w, err := os.OpenFile(gate.path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// TestSecretSplitBetweenReads: a command prints a token's first half,
// waits, then prints the rest; the model reads the task between the two.
// Neither read shows a part of the token, and together they read as the
// whole output would.
func TestSecretSplitBetweenReads(t *testing.T) {
	reads := readsAcrossAGate(t, "token "+patHalves[0], patHalves[1]+"\\n")
	if got, want := reads[len(reads)-2]+"|"+reads[len(reads)-1], "token \n[status: running]|[REDACTED:github-pat]\n[status: completed, exit code: 0]"; got != want {
		t.Errorf("the two reads: %q, want %q", got, want)
	}
}

// TestSecretAcrossTheHeadTailCut: tokens straddle the end of a
// foreground result's head and the start of its tail, in a small output
// and in a long one with the default limits. Neither shows in part.
func TestSecretAcrossTheHeadTailCut(t *testing.T) {
	head := int64(100)
	for _, tc := range []struct {
		name, command string
		tune          func(*config.Local)
	}{
		// 91 bytes, then the token: the head's 100 bytes end 9 into it; 79
		// bytes after the second token: the tail's 100 start 21 into it.
		{"small", "printf '%090d %s' 0 " + fakePAT + "; seq 1 100; printf '%s %077d\\n' " + fakePAT + " 0",
			func(c *config.Local) { c.MaxOutputBytes, c.KeepHeadBytes = 200, &head }},
		// The default 16 000-byte head ends 9 bytes into the first token,
		// the 48 000-byte tail starts 19 bytes into the second.
		{"default limits", "printf '%015990d %s' 0 " + fakePAT + "; seq 1 30000; printf '%s %047979d\\n' " + fakePAT + " 0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, config.Bash{}, nil, tc.tune)
			res := f.call(t, nil, jsonArgs(map[string]any{"command": tc.command, "description": "print tokens around the cut"}))
			text := res.Text()
			if part := showsPart(text); part != "" {
				t.Errorf("the result shows %q of a token", part)
			}
			if !strings.Contains(text, "[REDACTED:github-pat]\n[… ") || !strings.Contains(text, "omitted …]\n[REDACTED:github-pat]") {
				t.Errorf("want the placeholder at the head's end and the tail's start: %.120q … %.120q", text, text[max(0, len(text)-300):])
			}
		})
	}
}

// TestSecretCutByTheCommand: output that ends inside a token, as head -c
// of a file (a spill file, read in parts) does, shows no part of it.
func TestSecretCutByTheCommand(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	file := t.TempDir() + "/env"
	if err := os.WriteFile(file, []byte("GITHUB_TOKEN="+fakePAT+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := f.call(t, nil, jsonArgs(map[string]any{"command": "head -c 24 " + file, "description": "read the start of a file"}))
	if got, want := res.Text(), "GITHUB_TOKEN=[REDACTED:github-pat]"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// TestSecretAtALossyReadsStart: a background stream outgrows its tail
// unread, and the tail starts inside a token: the read, lossy, starts
// with the token's placeholder, not its end. No head is kept, so the
// tail is the whole 2000 bytes.
func TestSecretAtALossyReadsStart(t *testing.T) {
	s := newStack(t, func(c *config.Local) { c.MaxOutputBytes, c.KeepHeadBytes = 2000, new(int64(0)) })
	a := session.New("a", "")
	defer a.End()
	// 1979 bytes after the token: the 2000-byte tail starts 21 into it.
	id := s.start(t, a, "printf 'pad %s\\n' "+fakePAT+"; printf '%01977d\\n' 0")
	got := s.output(t, a, id)
	if part := showsPart(got); part != "" {
		t.Errorf("the read shows %q of the token: %.80q", part, got)
	}
	if !strings.HasPrefix(got, "[REDACTED:github-pat]\n0000") || !strings.Contains(got, "[some output was dropped from memory") {
		t.Errorf("read %.80q…, want it to start with the placeholder", got)
	}
}

// TestSecretSplitByAYield: a foreground call yields while the output so
// far ends inside a token; the task's first read has its rest. Neither
// shows a part of it.
func TestSecretSplitByAYield(t *testing.T) {
	s := newStackBash(t, nil, tasks.Config{}, config.Bash{YieldAfter: ms(300)})
	a := session.New("a", "")
	defer a.End()
	gate := readyFifo(t)
	res := s.callYielding(t, a, time.Now(), map[string]any{"command": "printf 'token " + patHalves[0] + "'; read _ < " + gate.path + "; printf '" + patHalves[1] + "\\n'", "description": "print a token slowly"})
	openGate(t, gate)
	read := s.output(t, a, "bash-1")
	for _, text := range []string{res.Text(), read} {
		if part := showsPart(text); part != "" {
			t.Errorf("%q shows %q of the token", text, part)
		}
	}
	if !strings.HasSuffix(read, "[REDACTED:github-pat]\n[status: completed, exit code: 0]") {
		t.Errorf("the task's read %q", read)
	}
}

// TestProgressCutsNoSecret: the last line of the output so far, a
// progress message, ends inside a token (more is coming): the token is
// replaced, not shown in part.
func TestProgressCutsNoSecret(t *testing.T) {
	if got := firstProgress(t, "printf 'using "+patHalves[0]+"'"); got != "using [REDACTED:github-pat]" {
		t.Errorf("progress message %q", got)
	}
}

// TestSecretAfterAnEscapeSequence: a removed escape sequence or control
// is a word boundary, as on a terminal: a token right after a colour
// reset or a carriage return is still a token.
func TestSecretAfterAnEscapeSequence(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	for _, cmd := range []string{`printf 'ok\033[0m%s\n' `, `printf 'done\r%s\n' `} {
		res := f.call(t, nil, jsonArgs(map[string]any{"command": cmd + fakePAT, "description": "a token after a control"}))
		if part := showsPart(res.Text()); part != "" || !strings.Contains(res.Text(), "[REDACTED:github-pat]") {
			t.Errorf("%s: %q shows %q of the token", cmd, res.Text(), part)
		}
	}
}

// TestEscapeSplitAtTheTailCut: the tail starts inside the colour sequence
// before a token ("2m" of "\033[32m"): the sequence is removed whole, with
// the text before the cut, and the token is redacted.
func TestEscapeSplitAtTheTailCut(t *testing.T) {
	head := int64(100)
	f := newFixture(t, config.Bash{}, nil, func(c *config.Local) { c.MaxOutputBytes, c.KeepHeadBytes = 200, &head })
	cmd := "seq 1 100; printf '\\033[32m%s %056d\\n' " + fakePAT + " 0"
	res := f.call(t, nil, jsonArgs(map[string]any{"command": cmd, "description": "a token after a cut colour"}))
	if part := showsPart(res.Text()); part != "" || !strings.Contains(res.Text(), "omitted …]\n[REDACTED:github-pat]") {
		t.Errorf("the result %q shows %q of the token", res.Text(), part)
	}
}

// TestEscapeSplitBetweenReads: a colour sequence split between two reads
// ("\033[3", then "2m" and a token) is removed whole in the second.
func TestEscapeSplitBetweenReads(t *testing.T) {
	readsAcrossAGate(t, "token \\033[3", "2m"+fakePAT+"\\n")
}

// readsAcrossAGate runs a background task that prints first (printf
// format, starting "token"), waits for the test, then prints second; it
// reads the task until the first part is there, lets it go on, reads it
// to its end, and fails if any read shows part of a token. It returns the
// reads.
func readsAcrossAGate(t *testing.T, first, second string) []string {
	t.Helper()
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()
	ready, gate := readyFifo(t), readyFifo(t)
	id := s.start(t, a, "printf '"+first+"'; echo > "+ready.path+"; read _ < "+gate.path+"; printf '"+second+"'")
	ready.wait(t)
	// The first part reaches the collector through a goroutine: read
	// until the text before it is there.
	var reads []string
	proctest.Eventually(t, proctest.Wait, func() error {
		read := s.call(t, a, "task_output", map[string]any{"task_id": id}).Text()
		reads = append(reads, read)
		if !strings.HasPrefix(read, "token") {
			return fmt.Errorf("read %q", read)
		}
		return nil
	})
	openGate(t, gate)
	reads = append(reads, s.output(t, a, id))
	for _, read := range reads {
		if part := showsPart(read); part != "" {
			t.Errorf("a read shows %q of the token: %q", part, read)
		}
	}
	return reads
}

// TestProgressShowsNoKeyLine: a private key whose BEGIN line has left the
// progress message's last 1 KiB: the base64 line it would show is part of
// the key, found with the output before it as context.
func TestProgressShowsNoKeyLine(t *testing.T) {
	line := "MIIEowIBAAKCAQEAzQ3x9Lk2Vb8Rr1dF6gH0jK4pW7sY5aE2uIZq3T9xLmV2bN8c"
	cmd := "printf -- '-----BEGIN RSA PRIVATE KEY-----\\n'; for i in $(seq 30); do echo " + line + "; done"
	if got := firstProgress(t, cmd); strings.Contains(got, line[:20]) {
		t.Errorf("a progress message shows a line of a private key: %q", got)
	}
}
