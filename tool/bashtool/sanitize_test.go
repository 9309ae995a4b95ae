package bashtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// escapes is output that a terminal acts on: colours, a title (OSC), a
// clipboard write (OSC 52), carriage returns, a backspace and a bell.
const escapes = `printf '\033[31mred\033[0m\r\n\033]0;title\a\033]52;c;Y2xpcA==\033\\ok\b!\a\n'`

// TestForegroundTextIsSanitized: escape sequences and controls other than
// newline and tab never reach the model; the spill file keeps the bytes.
func TestForegroundTextIsSanitized(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	res := f.call(t, nil, jsonArgs(map[string]any{"command": escapes, "description": "print escapes"}))
	if got, want := res.Text(), "red\nok!\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	f = newFixture(t, config.Bash{}, nil, func(c *config.Local) { c.MaxOutputBytes = 20 })
	res = f.call(t, nil, jsonArgs(map[string]any{"command": escapes + "; seq 1 20", "description": "print escapes, then more"}))
	if strings.ContainsAny(res.Text(), "\x1b\r\a\b") {
		t.Errorf("a truncated text keeps controls: %q", res.Text())
	}
	var st struct{ Stdout struct{ SpillPath string } }
	b, _ := json.Marshal(res.Structured)
	_ = json.Unmarshal(b, &st)
	raw, err := os.ReadFile(st.Stdout.SpillPath)
	if err != nil || !strings.HasPrefix(string(raw), "\x1b[31mred\x1b[0m\r\n\x1b]0;title\a") {
		t.Errorf("the spill file %q holds %q, %v: want the raw bytes", st.Stdout.SpillPath, raw, err)
	}
}

// TestBackgroundReadIsSanitized: a task's output reads without controls.
func TestBackgroundReadIsSanitized(t *testing.T) {
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()
	id := s.start(t, a, escapes)
	if got, want := s.output(t, a, id), "red\nok!\n[status: completed, exit code: 0]"; got != want {
		t.Errorf("task_output %q, want %q", got, want)
	}
}

// TestProgressIsSanitized: the progress message is the last line without
// controls.
func TestProgressIsSanitized(t *testing.T) {
	if got := firstProgress(t, `printf '\033]0;t\a\033[1mbuilding\033[0m\r\n'`); got != "building" {
		t.Errorf("progress message %q, want \"building\"", got)
	}
}

// firstProgress runs command in the foreground with a progress reporter
// and returns the first progress message; the command is held (at a FIFO)
// until that message came, so the report never races its end.
func firstProgress(t *testing.T, command string) string {
	t.Helper()
	f := newFixture(t, config.Bash{}, nil, nil)
	gate := t.TempDir() + "/gate"
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	ctx := tool.WithProgress(context.Background(), func(_ float64, msg string) {
		select {
		case first <- msg:
		default:
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		args := jsonArgs(map[string]any{"command": command + "; read x < " + gate, "description": "report progress"})
		f.reg.Execute(ctx, tool.Call{Name: "bash", Args: json.RawMessage(args)})
	}()
	var msg string
	select {
	case msg = <-first:
	case <-time.After(proctest.Scale(10 * time.Second)):
		t.Error("no progress within 10 s")
	}
	w, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	<-done
	return msg
}

// invisibles are the characters that reorder or hide text (bidi controls
// and marks, zero-width characters, a tag), and what the model reads of
// them.
const (
	invisibles      = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff\U000e0041"
	invisiblesShown = `\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d\u2060\ufeff\U000e0041`
)

// printfBytes is a printf command that writes s, its bytes in octal.
func printfBytes(s string) string {
	var b strings.Builder
	b.WriteString("printf '")
	for i := range len(s) {
		fmt.Fprintf(&b, `\%03o`, s[i])
	}
	b.WriteString("'")
	return b.String()
}

// TestInvisibleCharactersAreShown: a command that prints bidi controls
// and zero-width characters shows them to the model as escapes, in the
// foreground on both streams; text that already reads \u202e is kept.
func TestInvisibleCharactersAreShown(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, nil)
	command := printfBytes("if admin"+invisibles+"{\n") + "; echo '\\u202e literal'; " + printfBytes("e\u202er\n") + " >&2"
	res := f.call(t, nil, jsonArgs(map[string]any{"command": command, "description": "print invisible characters"}))
	want := "if admin" + invisiblesShown + "{\n\\u202e literal\n[stderr]\ne\\u202er\n"
	if got := res.Text(); got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// TestInvisibleCharactersKeepRawCounts: output limits and the omitted
// count are the command's bytes; an escape lengthens only the text.
func TestInvisibleCharactersKeepRawCounts(t *testing.T) {
	f := newFixture(t, config.Bash{}, nil, func(c *config.Local) { c.MaxOutputBytes = 30 })
	res := f.call(t, nil, jsonArgs(map[string]any{"command": printfBytes(strings.Repeat("\u200b", 100)), "description": "print zero-width spaces"}))
	// Head: 7 bytes, cut back to 2 characters; tail: 23 bytes, cut
	// forward to 7; omitted: 300 − 6 − 21.
	want := strings.Repeat(`\u200b`, 2) + "\n[… 273 bytes omitted …]\n" + strings.Repeat(`\u200b`, 7)
	if got, _, _ := strings.Cut(res.Text(), "\n[output truncated"); got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// TestInvisibleCharactersInBackgroundReads: task_output shows them too.
func TestInvisibleCharactersInBackgroundReads(t *testing.T) {
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()
	id := s.start(t, a, printfBytes("x"+invisibles+"y\n"))
	if got, want := s.output(t, a, id), "x"+invisiblesShown+"y\n[status: completed, exit code: 0]"; got != want {
		t.Errorf("task_output %q, want %q", got, want)
	}
}

// TestInvisibleCharactersInProgress: the progress message shows them too.
func TestInvisibleCharactersInProgress(t *testing.T) {
	if got, want := firstProgress(t, printfBytes("build\u202eing\n")), `build\u202eing`; got != want {
		t.Errorf("progress message %q, want %q", got, want)
	}
}
