package permissions

import (
	"slices"
	"testing"

	"github.com/dsh-go/dsh/tasks"
)

// TestSubmittedLines: the lines a shell would run, as its line editor
// makes them from what was typed before and the input; a line edited with
// keys the gate cannot follow is unknown, and so is one a backslash ends.
func TestSubmittedLines(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, input string
		truncated     bool
		want          []pending
		after         pending
	}{
		{"one line", "", "ls -l\r", false, []pending{{text: "ls -l"}}, pending{}},
		{"lines in text", "", "a\rb\nc", false, []pending{{text: "a"}, {text: "b"}}, pending{text: "c"}},
		{"the line typed before", "echo hi\rrm -rf ", "/\r", false, []pending{{text: "rm -rf /"}}, pending{}},
		{"backspace", "", "lss\x7f\x7f\r", false, []pending{{text: "l"}}, pending{}},
		{"C-u clears a known line", "rm x", "\x15ls\r", false, []pending{{text: "ls"}}, pending{}},
		{"C-u keeps an edited line unknown", "", ";rm victim\x01\x15echo hi\r", false, []pending{{text: ";rm victim" + "echo hi", unknown: true}}, pending{}},
		{"C-c drops the line", "rm x", "\x03", false, nil, pending{}},
		{"history is unknown", "", "\x1b[A\r", false, []pending{{text: "[A", unknown: true}}, pending{}},
		{"C-o leaves the line unknown", "", "rm x\x0f", false, nil, pending{text: "rm x", unknown: true}},
		{"a byte readline may take for Meta", "", "\u0099 -rf\r", false, []pending{{text: " -rf", unknown: true}}, pending{}},
		{"a backslash ends a line it cannot follow", "", "r\\\rm victim\r", false, []pending{{text: "r\\", unknown: true}, {text: "m victim", unknown: true}}, pending{}},
		{"and the next", "r\\\r", "m victim\r", false, []pending{{text: "m victim", unknown: true}}, pending{}},
		{"a truncated record's line is unknown", "", "x\r", true, []pending{{text: "x", unknown: true}}, pending{}},
	} {
		_, got, after := submitted([]byte(tc.before), tc.truncated, []byte(tc.input))
		if !slices.Equal(got, tc.want) || after != tc.after {
			t.Errorf("%s: %+v then %+v, want %+v then %+v", tc.name, got, after, tc.want, tc.after)
		}
	}
}

// TestInteractiveOnly: lines that use what only an interactive shell
// does later or elsewhere are asked about.
func TestInteractiveOnly(t *testing.T) {
	for line, want := range map[string]bool{
		"echo rm victim":                false,
		"!!":                            true,
		"echo x; !-1":                   true,
		"^rm^ls":                        true,
		"alias x='rm victim'":           true,
		"PROMPT_COMMAND='rm victim'":    true,
		"PS1='$(rm victim) '":           true,
		"trap 'rm victim' DEBUG":        true,
		"[ 1 != 2 ] && echo ok":         false,
		"echo hi!":                      false,
		"git log --format=%h":           false,
		"fc -s":                         true,
		"python3 -c 'print(\"hello\")'": false,
	} {
		if got := interactiveOnly(line); got != want {
			t.Errorf("interactiveOnly(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestShellReads: input goes to a shell only when every process of the
// foreground group is a system shell run interactively; a wrapper shell
// running a command, or a program named like a shell, is not one.
func TestShellReads(t *testing.T) {
	g := &Gate{}
	bin := findShells()
	var bashExe string
	for exe := range bin {
		if len(exe) >= 4 && exe[len(exe)-4:] == "bash" {
			bashExe = exe
		}
	}
	if bashExe == "" {
		t.Skip("SKIP-REASON: no bash found")
	}
	for _, tc := range []struct {
		name    string
		fg      []tasks.Program
		command string
		program string
		shell   bool
	}{
		{"interactive bash", []tasks.Program{{Exe: bashExe, Args: []string{"bash", "--norc", "-i"}}}, "bash -i", "", true},
		{"the wrapper runs a program", []tasks.Program{{Exe: bashExe, Args: []string{"bash", "-c", "cd . && python3 -q"}}, {Exe: "/usr/bin/python3", Args: []string{"python3", "-q"}}}, "", "python3", false},
		{"a wrapper shell alone", []tasks.Program{{Exe: bashExe, Args: []string{"bash", "-c", "read x"}}}, "", "bash -c", false},
		{"a program named bash", []tasks.Program{{Exe: "/tmp/x/bash", Args: []string{"bash", "-i"}}}, "", "bash", false},
		{"python", []tasks.Program{{Exe: "/usr/bin/python3.11", Args: []string{"python3", "-q"}}}, "", "python3", false},
		{"unknown: the command's program", nil, "python3 -q", "python3", false},
		{"unknown, even a shell's", nil, "bash -i", "bash", false},
	} {
		program, shell := g.shellReads(TypedTask{Foreground: tc.fg, Command: tc.command})
		if program != tc.program || shell != tc.shell {
			t.Errorf("%s: %q %v, want %q %v", tc.name, program, shell, tc.program, tc.shell)
		}
	}
}

// TestProgramOf: the program a command line starts, and whether lines
// typed into it go to a shell.
func TestProgramOf(t *testing.T) {
	for cmd, want := range map[string]string{
		"bash --norc -i":         "bash",
		"/bin/sh":                "sh",
		"FOO=1 exec env A=b zsh": "zsh",
		"python3 -q":             "python3",
		"bash -c python3":        "bash -c",
		"bash -lc 'psql'":        "bash -lc",
		"bash script.sh":         "bash script.sh",
		"":                       "",
	} {
		if got := programOf(cmd); got != want {
			t.Errorf("programOf(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestTypedQuestion: the question's exact text, with the keys and the line
// the input continues.
func TestTypedQuestion(t *testing.T) {
	q := typedQuestion("rm -rf ", "/tmp/x", []string{"Enter"}, "bash -i", "why")
	want := "Type this into a task?\n\n/tmp/x\n(keys: Enter)\n(after the line typed before: rm -rf )\n\ninto: bash -i\n\nwhy"
	if q.Message != want || q.Reason != "why" || q.Title != "Type into a task?" {
		t.Errorf("%q, want %q", q.Message, want)
	}
	if q := typedQuestion("", "x", nil, "python3", "r"); q.Message != "Type this into a task?\n\nx\n\ninto: python3\n\nr" {
		t.Errorf("%q", q.Message)
	}
}
