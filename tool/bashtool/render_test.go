package bashtool

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/internal/sanitize"
	"github.com/dsh-go/dsh/tasks"
)

func TestRender(t *testing.T) {
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		name string
		r    bash.Result
		want string
	}{
		{"stdout", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "hello\n"}}, "hello\n"},
		{"nothing", bash.Result{ExitCode: code(0)}, "(no output)"},
		{"both", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "out\n"}, Stderr: bash.Output{Text: "err\n"}}, "out\n[stderr]\nerr\n"},
		{"stdout without newline", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "out"}, Stderr: bash.Output{Text: "err\n"}}, "out\n[stderr]\nerr\n"},
		{"stderr only", bash.Result{ExitCode: code(0), Stderr: bash.Output{Text: "err\n"}}, "[stderr]\nerr\n"},
		{"exit code", bash.Result{ExitCode: code(3), Stdout: bash.Output{Text: "failing\n"}}, "failing\n[exit code: 3]"},
		{"exit code, no newline", bash.Result{ExitCode: code(2), Stdout: bash.Output{Text: "partial"}}, "partial\n[exit code: 2]"},
		{"exit code, no output", bash.Result{ExitCode: code(1)}, "(no output)\n[exit code: 1]"},
		{"timeout", bash.Result{Signal: "SIGTERM", TimedOut: true, Timeout: 100 * time.Millisecond}, "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"timeout, trapped, exit 0", bash.Result{ExitCode: code(0), TimedOut: true, Timeout: 100 * time.Millisecond}, "(no output)\n[timed out after 100ms]"},
		{"signal", bash.Result{Signal: "SIGKILL", Stdout: bash.Output{Text: "x\n"}}, "x\n[killed by signal: SIGKILL]"},
		// Truncated streams as keepHeadBytes: 0 reports them: no head,
		// the bytes before the tail counted, today's texts.
		{"truncated with path", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "tail\n", Truncated: true, OmittedBytes: 9, SpillPath: "/s/1-stdout.log"}},
			"tail\n\n[output truncated; full output: /s/1-stdout.log]"},
		{"truncated without path", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "tail", Truncated: true, OmittedBytes: 1}},
			"tail\n[output truncated; full output: (unavailable)]"},
		{"spill capped", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "tail", Truncated: true, OmittedBytes: 70000000, SpillPath: "/s/1-stdout.log", SpillCapped: true, SpillBytes: 67108864}},
			"tail\n[output truncated; first 67108864 bytes saved: /s/1-stdout.log]"},
		{"stderr truncated, exit", bash.Result{ExitCode: code(1), Stderr: bash.Output{Text: "e", Truncated: true, OmittedBytes: 3, SpillPath: "/s/2-stderr.log"}},
			"[stderr]\ne\n[output truncated; full output: /s/2-stderr.log]\n[exit code: 1]"},
	} {
		if got := Render(tc.r); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestRenderHeadAndTail: the texts of docs/spec.md §3.4a, byte for byte.
func TestRenderHeadAndTail(t *testing.T) {
	code := func(n int) *int { return &n }
	out := func(head, tail string, omitted int64) bash.Output {
		return bash.Output{Head: head, Text: tail, OmittedBytes: omitted, Truncated: true, SpillPath: "/s/1-stdout.log"}
	}
	for _, tc := range []struct {
		name string
		r    bash.Result
		want string
	}{
		{"head ending in a newline", bash.Result{ExitCode: code(0), Stdout: out("error: first\n", "make: *** Error 1\n", 120894)},
			"error: first\n[… 120894 bytes omitted …]\nmake: *** Error 1\n\n[output truncated; full output: /s/1-stdout.log]"},
		{"head cut inside a line", bash.Result{ExitCode: code(0), Stdout: out("ééé", "tail", 7)},
			"ééé\n[… 7 bytes omitted …]\ntail\n[output truncated; full output: /s/1-stdout.log]"},
		{"a tail starting inside a line", bash.Result{ExitCode: code(0), Stdout: out("a\n", "9\n10\n", 1)},
			"a\n[… 1 bytes omitted …]\n9\n10\n\n[output truncated; full output: /s/1-stdout.log]"},
		{"both streams, exit code", bash.Result{ExitCode: code(2),
			Stdout: out("1\n", "9\n", 14),
			Stderr: bash.Output{Head: "e1\n", Text: "e9", OmittedBytes: 30, Truncated: true, SpillPath: "/s/2-stderr.log"}},
			"1\n[… 14 bytes omitted …]\n9\n\n[output truncated; full output: /s/1-stdout.log]\n" +
				"[stderr]\ne1\n[… 30 bytes omitted …]\ne9\n[output truncated; full output: /s/2-stderr.log]\n[exit code: 2]"},
		{"spill capped", bash.Result{ExitCode: code(0), Stdout: bash.Output{Head: "h\n", Text: "t\n", OmittedBytes: 1 << 30, Truncated: true, SpillPath: "/s/1-stdout.log", SpillCapped: true, SpillBytes: 67108864}},
			"h\n[… 1073741824 bytes omitted …]\nt\n\n[output truncated; first 67108864 bytes saved: /s/1-stdout.log]"},
		{"spill unavailable, timed out", bash.Result{Signal: "SIGTERM", TimedOut: true, Timeout: 100 * time.Millisecond, Stdout: bash.Output{Head: "h", Text: "t", OmittedBytes: 5, Truncated: true}},
			"h\n[… 5 bytes omitted …]\nt\n[output truncated; full output: (unavailable)]\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"stderr only", bash.Result{ExitCode: code(0), Stderr: bash.Output{Head: "w\n", Text: "x\n", OmittedBytes: 2, Truncated: true, SpillPath: "/s/2-stderr.log"}},
			"[stderr]\nw\n[… 2 bytes omitted …]\nx\n\n[output truncated; full output: /s/2-stderr.log]"},
	} {
		if got := Render(tc.r); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestReadText(t *testing.T) {
	for _, tc := range []struct {
		r    bash.ReadResult
		want string
	}{
		{bash.ReadResult{Delta: "a\n"}, "a\n"},
		{bash.ReadResult{Delta: "a\n", StdoutSpill: "/o"}, "a\n"},
		{bash.ReadResult{Delta: "tail", Lossy: true, StdoutSpill: "/o", StderrSpill: "/e"}, "tail\n[some output was dropped from memory; full output: /o, /e]"},
		{bash.ReadResult{Delta: "tail\n", Lossy: true, StderrSpill: "/e"}, "tail\n[some output was dropped from memory; full output: /e]"},
		{bash.ReadResult{Lossy: true}, "[some output was dropped from memory; full output: (unavailable)]"},
	} {
		if got := readText(tc.r); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.r, got, tc.want)
		}
	}
}

var errLost = errors.New("ssh: connection to build1 lost")

func TestOutcome(t *testing.T) {
	zero, three := 0, 3
	for _, tc := range []struct {
		st   bash.State
		want tasks.Outcome
	}{
		{bash.State{Status: bash.StatusCompleted, ExitCode: &zero},
			tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0", Exit: tasks.Exit{Code: &zero}}},
		{bash.State{Status: bash.StatusCompleted, ExitCode: &three, StdoutBytes: 5, StderrBytes: 7},
			tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 3", Exit: tasks.Exit{Code: &three, StdoutBytes: 5, StderrBytes: 7}}},
		{bash.State{Status: bash.StatusKilled, Signal: "SIGTERM"},
			tasks.Outcome{Status: tasks.Killed, Detail: "signal: SIGTERM", Exit: tasks.Exit{Signal: "SIGTERM"}}},
		// The exit raced the kill: the facts, like the detail, name no code.
		{bash.State{Status: bash.StatusKilled, ExitCode: &zero},
			tasks.Outcome{Status: tasks.Killed, Detail: "killed before exit"}},
		// The executor lost the process (its connection dropped): failed,
		// with the executor's reason.
		{bash.State{Status: bash.StatusKilled, Err: errLost},
			tasks.Outcome{Status: tasks.Failed, Err: errLost}},
		// A yielded run's timeout ended it (docs/spec.md §12, exact).
		{bash.State{Status: bash.StatusKilled, Signal: "SIGTERM", TimedOut: true},
			tasks.Outcome{Status: tasks.Killed, Detail: "timed out after 1500ms", Exit: tasks.Exit{Signal: "SIGTERM", TimedOut: true}}},
	} {
		if diff := cmp.Diff(tc.want, outcome(tc.st, 1500), cmpopts.EquateErrors()); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.st, diff)
		}
	}
}

func TestParseExit(t *testing.T) {
	for _, tc := range []struct {
		text   string
		code   int
		signal string
	}{
		{"hello\n", 0, ""},
		{"failing\n[exit code: 3]", 3, ""},
		{"(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]", 0, "SIGTERM"},
		{"(no output)\n[timed out after 100ms]", 0, ""},
		{"[exit code: 3]", 0, ""},          // no leading newline: plain output
		{"x\n[exit code: 3]\nmore", 0, ""}, // not at the very end
		{"x\n[killed by signal: SIGKILL]", 0, "SIGKILL"},
		{"x\n[exit code: nope]", 0, ""},
	} {
		code, sig := parseExit(tc.text)
		if code != tc.code || sig != tc.signal {
			t.Errorf("%q: got %d %q, want %d %q", tc.text, code, sig, tc.code, tc.signal)
		}
	}
}

func TestLastLine(t *testing.T) {
	long := strings.Repeat("é", 250)
	for _, tc := range []struct {
		tail string
		cut  bool
		want string
	}{
		{"a\nb\n", false, "b"},
		{"a\nb\n\n  \n", false, "b"},
		{"partial", false, "partial"},
		{"", false, ""},
		{"x\n" + long, false, strings.Repeat("é", 200)},
		{"ok\n\xff\xfe\n", false, "\uFFFD\uFFFD"},
		// A cut tail's first line is a fragment: a token cut there has
		// lost its prefix, so it is never the message.
		{"1234567890abcdef1234567890abcdef1234\n", true, ""},
		{"1234567890abcdef1234567890abcdef1234\nnext\n", true, "next"},
		{"1234567890abcdef1234567890abcdef1234\n", false, "1234567890abcdef1234567890abcdef1234"},
	} {
		if got := lastLine([]byte(tc.tail), tc.cut, func(_, s string) string { return sanitize.Text(s) }); got != tc.want {
			t.Errorf("lastLine(%q, %v) = %q, want %q", tc.tail, tc.cut, got, tc.want)
		}
	}
}

// TestEveryMarkerIsGuarded: every line this package writes beside command
// output begins with an opening of package marker, so output imitating it
// is guarded (docs/spec.md §3.4). A new marker goes in this list.
func TestEveryMarkerIsGuarded(t *testing.T) {
	for _, line := range []string{
		truncatedNotice("/tmp/x.log"), truncatedNotice(unavailablePath), cappedNotice(10, "/tmp/x.log"),
		omittedMarker(5), timedOutMarker(100), signalMarker("SIGTERM"), exitMarker(3),
		droppedNotice(nil), droppedNotice([]string{"/a", "/b"}), startedText("bash-1"), yieldedLine(50000, "bash-2"),
		hintLine(sandboxCfg(config.SandboxWorkspaceWrite, false, true)), hintLine(sandboxCfg(config.SandboxReadOnly, true, false)),
	} {
		if !marker.Is(line) {
			t.Errorf("%q is not guarded: add its opening to package marker", line)
		}
	}
}
