package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/proctest"
)

// dshBin is the dsh binary, built once for the tests that run it.
var dshBin string

func TestMain(m *testing.M) {
	if os.Getenv(attackEnv) != "" {
		os.Exit(attackMain(os.Args[1:]))
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dsh-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	dshBin = filepath.Join(dir, "dsh")
	if out, err := exec.Command("go", "build", "-o", dshBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	// Every dsh the tests start, and every command it runs, carries the
	// run's mark: none may be alive at the end, nor a goroutine.
	os.Setenv(proctest.Name, proctest.Value)
	defer removeNobodyDir()
	return proctest.Main(m)
}

// outcome is what a run of the binary did.
type outcome struct {
	stdout, stderr string // stderr without the sweep log lines
	swept          string // those lines
	code           int
}

// dsh runs the binary with args and the test's environment plus env, and
// waits for it (at most 30 s, then it is killed and the test fails).
func dsh(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	return dshIn(t, "", env, args...)
}

// dshIn is dsh run in the directory dir ("" for the test's).
func dshIn(t *testing.T, dir string, env []string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), proctest.Scale(30*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, dshBin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("dsh %q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("dsh %q did not end within 30s; stderr:\n%s", args, stderr.String())
	}
	own, swept := splitSweepLog(stderr.String())
	return outcome{stdout: stdout.String(), stderr: own, swept: swept, code: code}
}

// sweepLogs are the messages of an executor's start-up sweeps. Any dsh
// that starts while another test process has just died (a test kills one
// on purpose) or fabricated leftovers logs them: correct, and not the
// output of the command under test.
var sweepLogs = []string{
	`msg="bash-local: killed processes left by a dsh that no longer runs"`,
	`msg="bash-local: removed spill directories of exited processes"`,
}

// splitSweepLog splits dsh's stderr into its own lines and the sweep log
// lines.
func splitSweepLog(stderr string) (own, swept string) {
	var o, s strings.Builder
	for line := range strings.SplitAfterSeq(stderr, "\n") {
		if slices.ContainsFunc(sweepLogs, func(m string) bool { return strings.Contains(line, m) }) {
			s.WriteString(line)
		} else {
			o.WriteString(line)
		}
	}
	return o.String(), s.String()
}

// offConfig is a config with the sandbox off, for a test that reads on
// the host what its commands write (pid files in its directories) or
// their host pids: the default sandbox keeps /tmp and pids its own.
func offConfig(t *testing.T) string {
	t.Helper()
	return writeFile(t, "dsh.yaml", "local: {sandbox: {mode: off}}\n")
}

// writeFile writes content to name in a fresh temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// assertGone fails unless process pid has died. A dead process may linger
// as a zombie: one orphaned to an init that reaps lazily (a grandchild
// whose parent, the shell, exited first) is dead all the same.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if !proctest.Gone(pid) {
		t.Errorf("process %d still runs", pid)
	}
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	// Claude Code's settings are read without a permissions section too:
	// a home and a project of the test's own, and the line the machine's
	// managed settings (if any) give, which TestPermissionsLine spells out.
	home, project := t.TempDir(), t.TempDir()
	claudeEnv := []string{"HOME=" + home, "CLAUDE_PROJECT_DIR=" + project}
	noSection := "permissions: " + permissionsLine(config.File{}, permissions.Options{Home: home, ProjectDir: project})
	marker := writeFile(t, "dsh.yaml", "local: {containment: marker, sandbox: {mode: off}}\n")
	got := dsh(t, claudeEnv, "doctor", "--config", marker)
	lines := strings.Split(got.stdout, "\n")
	self := "self: not dumpable: commands cannot read dsh's environment, memory or descriptors ("
	if os.Geteuid() == 0 {
		self = "self: " + rootExposed
	}
	if got.code != 0 || len(lines) != 11 || lines[0] != "sandbox: off (local.sandbox.mode: off)" ||
		!strings.HasPrefix(lines[1], "version: dsh ") || !strings.HasPrefix(lines[2], "shell: /") ||
		lines[3] != "containment: marker: the DSH_RUN_ID variable and the parent chain (chosen by the config)" ||
		!strings.HasPrefix(lines[4], "limits: pids 4096 per command not in force (containment is the marker)") ||
		lines[5] != "sessions: "+notIsolated || !strings.HasPrefix(lines[6], self) ||
		lines[7] != "config: "+marker+" (from --config)" || lines[8] != noSection || lines[9] != "hooks: none" {
		t.Errorf("doctor with the marker: %+v", got)
	}
	got = dsh(t, nil, "doctor", "--config", writeFile(t, "dsh.yaml", "local: {containment: group, sandbox: {mode: off}}\n"))
	if lines = strings.Split(got.stdout, "\n"); got.code != 0 || len(lines) != 11 ||
		lines[3] != "containment: group: the process group and its descendants by the parent chain (chosen by the config)" ||
		!strings.HasPrefix(lines[4], "limits: pids 4096 per command not in force (containment is the group)") {
		t.Errorf("doctor with the group: %+v", got)
	}
	// No config: the first line says the sandbox is on (docs/spec.md §11).
	got = dsh(t, nil, "doctor")
	if first, _, _ := strings.Cut(got.stdout, "\n"); strings.HasPrefix(first, "sandbox: NONE") {
		t.Logf("SKIP-REASON: no sandbox backend here: %s", first)
	} else if got.code != 0 || !strings.HasPrefix(first, "sandbox: on (workspace-write, ") || !strings.Contains(got.stdout, "\ncontainment: ") ||
		strings.Contains(got.stdout, "\nsessions: ") {
		t.Errorf("doctor without a config: %+v", got)
	}
	// With a sandbox: its backend, mode, what is writable and the
	// network, indented (TestDoctorSandboxBoundary has the rest).
	sandboxed := config.File{}
	sandboxed.Local.Sandbox.Mode = config.SandboxReadOnly
	noSection = "permissions: " + permissionsLine(sandboxed, permissions.Options{Home: home, ProjectDir: project})
	got = dsh(t, claudeEnv, "doctor", "--config", writeFile(t, "dsh.yaml", "local: {sandbox: {mode: read-only}}\n"))
	if got.code == 2 {
		t.Logf("SKIP-REASON: no sandbox backend here: %s", got.stderr)
	} else if got.code != 0 || !strings.Contains(got.stdout, "\nsandbox:\n  backend: ") || !strings.Contains(got.stdout, "\n  mode: read-only\n  writable: ") ||
		!strings.Contains(got.stdout, "\n  network: by domain") && !strings.Contains(got.stdout, "\n  network: off;") ||
		!strings.HasSuffix(got.stdout, "\n"+noSection+"\nhooks: none\n") {
		t.Errorf("doctor with a sandbox: %+v", got)
	}
	perm := writeFile(t, "dsh.yaml", "permissions: {default: ask, deny: [\"rm -rf *\"]}\n")
	home = t.TempDir()
	claude := writeFile(t, "settings.json", `{"permissions":{"deny":["Bash(curl *)","Read(x)"]}}`)
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(claude, filepath.Join(home, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	got = dsh(t, []string{"HOME=" + home, "CLAUDE_PROJECT_DIR=" + project}, "doctor", "--config", perm)
	if want := "permissions: default ask; rules from dsh config (1 rule), " + filepath.Join(home, ".claude", "settings.json") + " (1 rule)\nhooks: none\n"; got.code != 0 || !strings.HasSuffix(got.stdout, want) {
		t.Errorf("doctor with permissions: %+v\nwant the last line %q", got, want)
	}
	// Without the section the user's rules are listed all the same.
	got = dsh(t, []string{"HOME=" + home, "CLAUDE_PROJECT_DIR=" + project}, "doctor", "--config", writeFile(t, "dsh.yaml", "local: {containment: marker, sandbox: {mode: off}}\n"))
	if want := "\npermissions: " + permissionsLine(config.File{}, permissions.Options{Home: home, ProjectDir: project}) + "\nhooks: none\n"; got.code != 0 ||
		!strings.HasSuffix(got.stdout, want) || !strings.Contains(want, "no permissions section: default allow; rules from ") {
		t.Errorf("doctor with Claude Code settings and no section: %+v\nwant the last lines %q", got, want)
	}
	hooked := writeFile(t, "dsh.yaml", "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{type: command, command: ./check.sh}]\n")
	if got = dsh(t, nil, "doctor", "--config", hooked); got.code != 0 || !strings.HasSuffix(got.stdout, "\nhook: PreToolUse \"Bash\" ./check.sh (dsh config)\n") {
		t.Errorf("doctor with a hook: %+v", got)
	}
	if got = dsh(t, nil, "doctor", "--config", writeFile(t, "dsh.yaml", "local: {containment: vm}\n")); got.code != 2 {
		t.Errorf("doctor with a bad containment: %+v", got)
	}
}
