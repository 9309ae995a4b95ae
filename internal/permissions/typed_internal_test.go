package permissions

import (
	"slices"
	"testing"
)

// TestTypedLines: the lines a shell would run, as its line editor makes
// them from text and keys; a line edited with keys the gate cannot follow
// is unknown.
func TestTypedLines(t *testing.T) {
	for _, tc := range []struct {
		name      string
		before    pending
		text      string
		keys      []string
		submitted []pending
		after     pending
	}{
		{"one line", pending{}, "ls -l", []string{"Enter"}, []pending{{text: "ls -l"}}, pending{}},
		{"lines in text", pending{}, "a\rb\nc", nil, []pending{{text: "a"}, {text: "b"}}, pending{text: "c"}},
		{"continues the pending line", pending{text: "rm -rf "}, "/", []string{"Enter"}, []pending{{text: "rm -rf /"}}, pending{}},
		{"backspace", pending{}, "lss\x7f", []string{"Backspace", "Enter"}, []pending{{text: "l"}}, pending{}},
		{"C-u clears", pending{text: "rm x"}, "\x15ls", []string{"Enter"}, []pending{{text: "ls"}}, pending{}},
		{"C-c clears", pending{text: "rm x"}, "", []string{"C-c"}, nil, pending{}},
		{"history is unknown", pending{}, "", []string{"Up", "Enter"}, []pending{{unknown: true}}, pending{}},
		{"escape in text is unknown", pending{}, "\x1b[A", []string{"Enter"}, []pending{{text: "[A", unknown: true}}, pending{}},
		{"tab is unknown until submitted", pending{}, "gi\t", nil, nil, pending{text: "gi", unknown: true}},
		{"C-m submits", pending{}, "ls", []string{"C-m"}, []pending{{text: "ls"}}, pending{}},
	} {
		l := &typedLine{cur: tc.before}
		sub, after := l.typed(tc.text, tc.keys)
		if !slices.Equal(sub, tc.submitted) || after != tc.after {
			t.Errorf("%s: submitted %+v after %+v, want %+v %+v", tc.name, sub, after, tc.submitted, tc.after)
		}
		if l.cur != tc.before {
			t.Errorf("%s: typed changed the line before it was allowed", tc.name)
		}
	}
}

// TestProgramOf: the program a task's command starts, and whether lines
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
