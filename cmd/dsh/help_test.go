package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite testdata/help/*.golden from what --help prints")

// TestHelpGolden checks every command's --help (dsh, dsh run, dsh
// completion bash, ...) against testdata/help/<path>.golden; go test
// -run TestHelpGolden -update rewrites them.
func TestHelpGolden(t *testing.T) {
	var paths [][]string
	walk(newRoot(streams{out: new(bytes.Buffer), err: new(bytes.Buffer)}), func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		paths = append(paths, strings.Fields(c.CommandPath())[1:])
	})
	if len(paths) < 12 {
		t.Fatalf("only %d commands: %v", len(paths), paths)
	}
	seen := map[string]bool{}
	for _, p := range paths {
		name := strings.Join(append([]string{"dsh"}, p...), "_") + ".golden"
		seen[name] = true
		var out, errOut bytes.Buffer
		if code := execute(append(p, "--help"), streams{out: &out, err: &errOut}); code != 0 || errOut.Len() != 0 {
			t.Errorf("dsh %v --help: exit %d, stderr %q", p, code, errOut.String())
		}
		file := filepath.Join("testdata", "help", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("dsh %v --help: %v (run go test -run TestHelpGolden -update)", p, err)
			continue
		}
		if out.String() != string(want) {
			t.Errorf("dsh %v --help differs from %s (go test -run TestHelpGolden -update rewrites it):\n%s", p, file, out.String())
		}
		// What each command of dsh's own documents.
		if _, ours := helpTexts[strings.Join(p, " ")]; ours {
			for _, part := range []string{"Examples:\n", "Exit status:\n"} {
				if !strings.Contains(out.String(), part) {
					t.Errorf("dsh %v --help lacks %q", p, part)
				}
			}
		}
	}
	// A golden file of a command that no longer exists is stale.
	files, _ := filepath.Glob(filepath.Join("testdata", "help", "*.golden"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s: no such command any more", f)
		}
	}
}

// TestHelpNamesConfigAndWorkdir checks that the commands reading a config
// name docs/config.md, and those with --workdir its fallbacks.
func TestHelpNamesConfigAndWorkdir(t *testing.T) {
	for path, h := range helpTexts {
		switch path {
		case "", "version", "policy":
			continue
		}
		long := strings.Join(strings.Fields(h.long), " ")
		if !strings.Contains(long, "docs/config.md") {
			t.Errorf("dsh %s: the help does not point to docs/config.md", path)
		}
		if path != "tools" && path != "doctor" && path != "clean" && !strings.Contains(long, "is --workdir, else") {
			t.Errorf("dsh %s: the help does not give --workdir's fallbacks", path)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, `dsh: unknown command "rnu" for "dsh"; did you mean run?` + "\n"},
		{[]string{"srve"}, `dsh: unknown command "srve" for "dsh"; did you mean serve?` + "\n"},
		{[]string{"policy", "chek"}, `dsh: unknown command "chek" for "dsh policy"; did you mean check?` + "\n"},
		{[]string{"frobnicate"}, `dsh: unknown command "frobnicate" for "dsh"` + "\n"},
		{[]string{"run", "--workdri", "x", "--", "true"}, "dsh: run: unknown flag: --workdri; did you mean --workdir?\n"},
		{[]string{"serve", "--adr=x"}, "dsh: serve: unknown flag: --adr; did you mean --addr?\n"},
		{[]string{"mcp", "--log-lvel", "debug"}, "dsh: mcp: unknown flag: --log-lvel; did you mean --log-level?\n"},
		{[]string{"--versoin"}, "dsh: unknown flag: --versoin; did you mean --version?\n"},
		{[]string{"doctor", "--frobnicate"}, "dsh: doctor: unknown flag: --frobnicate\n"},
		{[]string{"policy"}, "dsh: policy: missing command: try dsh policy --help\n"},
		{[]string{"mcp", "--log-level", "loud"}, `dsh: mcp: --log-level "loud": want one of error, warn, info, debug` + "\n"},
	} {
		var out, errOut bytes.Buffer
		code := execute(tc.args, streams{out: &out, err: &errOut})
		if code != exitUsage || errOut.String() != tc.want || out.Len() != 0 {
			t.Errorf("dsh %v: exit %d, stderr %q, stdout %q; want exit 2, stderr %q", tc.args, code, errOut.String(), out.String(), tc.want)
		}
	}
}

// TestLogLevel runs dsh mcp with an empty stdin, which logs the session's
// start and end at INFO.
func TestLogLevel(t *testing.T) {
	t.Parallel()
	for level, wantInfo := range map[string]bool{"error": false, "warn": false, "info": true, "debug": true} {
		got := dsh(t, nil, "mcp", "--log-level", level)
		if got.code != 0 || strings.Contains(got.stderr, "level=INFO") != wantInfo {
			t.Errorf("dsh mcp --log-level %s: exit %d, stderr %q; INFO lines wanted: %v", level, got.code, got.stderr, wantInfo)
		}
	}
}

// TestBashCompletion loads dsh's bash completion script in bash (with the
// bash-completion package, as a user's shell has it) and completes a
// subcommand and --log-level's values; the script calls the dsh on PATH.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	const lib = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("SKIP-REASON: %s not found (apt install bash-completion)", lib)
	}
	script := dsh(t, nil, "completion", "bash")
	if script.code != 0 {
		t.Fatalf("dsh completion bash: %+v", script)
	}
	file := writeFile(t, "dsh.bash", script.stdout)
	complete := func(line string, words ...string) string {
		t.Helper()
		prog := `source "$1"; source "$2"; shift 2
COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; shift
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_dsh 2>/dev/null; printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command("bash", append([]string{"--norc", "-c", prog, "bash", lib, file, line}, words...)...)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(dshBin)+":"+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("completing %q: %v", line, err)
		}
		return string(out)
	}
	if got := complete("dsh ru", "dsh", "ru"); got != "run\n" {
		t.Errorf("dsh ru<TAB> = %q, want run", got)
	}
	if got := complete("dsh mcp --log-level ", "dsh", "mcp", "--log-level", ""); got != "error\nwarn\ninfo\ndebug\n" {
		t.Errorf("dsh mcp --log-level <TAB> = %q, want the four levels", got)
	}
	for _, shell := range []string{"zsh", "fish"} {
		if got := dsh(t, nil, "completion", shell); got.code != 0 || !strings.Contains(got.stdout, "__complete") {
			t.Errorf("dsh completion %s: %+v", shell, got)
		}
	}
}

// TestCompletionUnsupportedShell: a shell dsh has no completion script for
// is a usage error naming the ones it has, on one stderr line (exit 2);
// powershell is not offered while dsh does not build on Windows
// (docs/spec.md §6.1).
func TestCompletionUnsupportedShell(t *testing.T) {
	for _, shell := range []string{"tcsh", "powershell"} {
		var out, errOut bytes.Buffer
		code := execute([]string{"completion", shell}, streams{out: &out, err: &errOut})
		want := `dsh: completion: unsupported shell "` + shell + `" (supported: bash, zsh, fish)` + "\n"
		if code != exitUsage || errOut.String() != want || out.Len() != 0 {
			t.Errorf("dsh completion %s: exit %d, stderr %q, stdout %q; want exit 2, stderr %q", shell, code, errOut.String(), out.String(), want)
		}
	}
	var names []string
	for _, c := range newRoot(streams{out: new(bytes.Buffer), err: new(bytes.Buffer)}).Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, sub := range c.Commands() {
			names = append(names, sub.Name())
		}
	}
	if got := strings.Join(names, " "); got != "bash fish zsh" {
		t.Errorf("dsh completion offers %q, want bash fish zsh", got)
	}
}
