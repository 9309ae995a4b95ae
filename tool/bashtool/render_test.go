package bashtool

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/bash"
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
		{"timeout", bash.Result{Signal: "SIGTERM", TimedOut: true, TimeoutMs: 100}, "(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]"},
		{"timeout, trapped, exit 0", bash.Result{ExitCode: code(0), TimedOut: true, TimeoutMs: 100}, "(no output)\n[timed out after 100ms]"},
		{"signal", bash.Result{Signal: "SIGKILL", Stdout: bash.Output{Text: "x\n"}}, "x\n[killed by signal: SIGKILL]"},
		{"truncated with path", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "tail\n", Truncated: true, SpillPath: "/s/1-stdout.log"}},
			"tail\n\n[output truncated; full output: /s/1-stdout.log]"},
		{"truncated without path", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "tail", Truncated: true}},
			"tail\n[output truncated; full output: (unavailable)]"},
		{"spill capped", bash.Result{ExitCode: code(0), Stdout: bash.Output{Text: "tail", Truncated: true, SpillPath: "/s/1-stdout.log", SpillCapped: true, SpillBytes: 67108864}},
			"tail\n[output truncated; first 67108864 bytes saved: /s/1-stdout.log]"},
		{"stderr truncated, exit", bash.Result{ExitCode: code(1), Stderr: bash.Output{Text: "e", Truncated: true, SpillPath: "/s/2-stderr.log"}},
			"[stderr]\ne\n[output truncated; full output: /s/2-stderr.log]\n[exit code: 1]"},
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

func TestOutcome(t *testing.T) {
	zero, three := 0, 3
	for _, tc := range []struct {
		st   bash.State
		want tasks.Outcome
	}{
		{bash.State{Status: bash.StatusCompleted, ExitCode: &zero},
			tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0", Exit: tasks.Exit{Code: &zero}}},
		{bash.State{Status: bash.StatusCompleted, ExitCode: &three},
			tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 3", Exit: tasks.Exit{Code: &three}}},
		{bash.State{Status: bash.StatusKilled, Signal: "SIGTERM"},
			tasks.Outcome{Status: tasks.Killed, Detail: "signal: SIGTERM", Exit: tasks.Exit{Signal: "SIGTERM"}}},
		// The exit raced the kill: the facts, like the detail, name no code.
		{bash.State{Status: bash.StatusKilled, ExitCode: &zero},
			tasks.Outcome{Status: tasks.Killed, Detail: "killed before exit"}},
	} {
		if diff := cmp.Diff(tc.want, outcome(tc.st)); diff != "" {
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
	for tail, want := range map[string]string{
		"a\nb\n":         "b",
		"a\nb\n\n  \n":   "b",
		"partial":        "partial",
		"":               "",
		"x\n" + long:     strings.Repeat("é", 200),
		"ok\n\xff\xfe\n": "\uFFFD\uFFFD",
	} {
		if got := lastLine([]byte(tail)); got != want {
			t.Errorf("lastLine(%q) = %q, want %q", tail, got, want)
		}
	}
}
