package local

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
)

func TestRunBasics(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	for _, tc := range []struct {
		command        string
		stdout, stderr string
		exit           string
	}{
		{"echo hello", "hello\n", "", "0"},
		{"true", "", "", "0"},
		{"echo out; echo err >&2", "out\n", "err\n", "0"},
		{"echo failing; exit 3", "failing\n", "", "3"},
		{"kill -TERM $$", "", "", "signal SIGTERM"},
		{"kill -KILL $$", "", "", "signal SIGKILL"},
		{"cat", "", "", "0"}, // stdin is /dev/null: returns at once
		{"echo $0; [ -t 0 ] || echo no-tty", "bash\nno-tty\n", "", "0"},
		{"shopt -q login_shell || echo non-login; [[ $- == *i* ]] || echo non-interactive", "non-login\nnon-interactive\n", "", "0"},
		{"exec 3>/dev/tty", "", "/dev/tty", "1"}, // no controlling terminal
		{"[ $$ -eq $(ps -o pgid= $$) ] && [ $$ -eq $(ps -o sid= $$) ] && echo leader", "leader\n", "", "0"},
		{"printf 'caf\\xc3'", "caf\uFFFD", "", "0"},
	} {
		r := runCmd(t, e, tc.command, 5000)
		if r.Stdout.Text != tc.stdout || !strings.Contains(r.Stderr.Text, tc.stderr) || exitCode(r) != tc.exit {
			t.Errorf("%q: stdout %q stderr %q exit %s; want %q, %q, %s",
				tc.command, r.Stdout.Text, r.Stderr.Text, exitCode(r), tc.stdout, tc.stderr, tc.exit)
		}
		if r.TimedOut || r.Aborted || r.TimeoutMs != 5000 {
			t.Errorf("%q: timedOut %v aborted %v timeoutMs %d", tc.command, r.TimedOut, r.Aborted, r.TimeoutMs)
		}
	}
}

func TestSelfKillIsNotATimeoutNorAnAbort(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	r := runCmd(t, e, "kill -TERM $$", 5000)
	if r.Signal != "SIGTERM" || r.ExitCode != nil || r.TimedOut || r.Aborted {
		t.Fatalf("got %+v", r)
	}
}

func TestTimeoutKillsWithSIGTERM(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	begin := time.Now()
	r := runCmd(t, e, "sleep 60", 100)
	if !r.TimedOut || r.Aborted || r.Signal != "SIGTERM" || r.TimeoutMs != 100 {
		t.Fatalf("got %+v", r)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
}

func TestTrappedTERMDiesBySIGKILLAfterGrace(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.GraceMs = 300
	e := newExecutor(t, cfg)
	ready, reached := readyFifo(t)
	spec, _ := e.Resolve(bash.Request{Command: "trap '' TERM; echo > " + ready + "; sleep 60"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan bash.Result, 1)
	go func() { r, _ := e.Run(ctx, spec); got <- r }()
	reached()
	begin := time.Now()
	cancel()
	r := <-got
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Fatalf("SIGKILL came after %v, before the grace", took)
	}
	if !r.Aborted || r.Signal != "SIGKILL" {
		t.Fatalf("got %+v", r)
	}
	// The same through the timeout: timed out, SIGKILL.
	r = runCmd(t, e, "trap '' TERM; sleep 60", 500)
	if !r.TimedOut || r.Signal != "SIGKILL" {
		t.Fatalf("timeout: got %+v", r)
	}
}

func TestTrapThatExitsZeroStillTimedOut(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	r := runCmd(t, e, "trap 'exit 0' TERM; sleep 60 & wait", 500)
	if !r.TimedOut || exitCode(r) != "0" {
		t.Fatalf("got %+v", r)
	}
}

func TestKillReachesGrandchildren(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	pidFile := tempFile(t, "pid")
	killOnCleanup(t, pidFile)
	r := runCmd(t, e, "sleep 60 & echo $! > "+pidFile+"; wait", 2000)
	if !r.TimedOut {
		t.Fatalf("got %+v", r)
	}
	if pid := proctest.ReadPid(t, pidFile); !proctest.Gone(pid) {
		t.Fatalf("grandchild %d survived the kill", pid)
	}
}

func TestCancelAborts(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	ready, reached := readyFifo(t)
	spec, _ := e.Resolve(bash.Request{Command: "echo started; echo > " + ready + "; sleep 60"})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan bash.Result, 1)
	go func() { r, _ := e.Run(ctx, spec); got <- r }()
	reached()
	cancel()
	if r := <-got; !r.Aborted || r.TimedOut || r.Signal != "SIGTERM" || r.Stdout.Text != "started\n" {
		t.Fatalf("got %+v", r)
	}
	// The caller's own deadline is an abort too, not the executor's timeout.
	// (2 s, so that even a loaded machine has spawned the command by then:
	// a deadline passed before Run is an error, not a result.)
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	spec, _ = e.Resolve(bash.Request{Command: "sleep 60"})
	if r, _ := e.Run(ctx, spec); !r.Aborted || r.TimedOut {
		t.Fatalf("caller deadline: got %+v", r)
	}
}

func TestAbortedBeforeSpawn(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	marker := tempFile(t, "ran")
	spec, _ := e.Resolve(bash.Request{Command: "touch " + marker})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Run(ctx, spec)
	if err == nil || err.Error() != "aborted before spawn: aborted" {
		t.Fatalf("err = %v", err)
	}
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(errors.New("client went away"))
	_, err = e.Run(ctx, spec)
	if err == nil || err.Error() != "aborted before spawn: client went away" {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a cancelled run spawned its command")
	}
}

func TestUnusableWorkdir(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	file := tempFile(t, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		missing: fmt.Sprintf("bash-local: workdir %q does not exist", missing),
		file:    fmt.Sprintf("bash-local: workdir %q is not a directory", file),
	} {
		spec, _ := e.Resolve(bash.Request{Command: "true", Workdir: dir})
		if _, err := e.Run(context.Background(), spec); err == nil || err.Error() != want {
			t.Errorf("Run: err = %v, want %s", err, want)
		}
		if _, err := e.Start(spec); err == nil || err.Error() != want {
			t.Errorf("Start: err = %v, want %s", err, want)
		}
	}
}

func TestWorkdir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t)
	cfg.Cwd = dir
	e := newExecutor(t, cfg)
	if r := runCmd(t, e, "pwd", 0); r.Stdout.Text != dir+"\n" {
		t.Fatalf("default cwd: %q", r.Stdout.Text)
	}
	other := t.TempDir()
	spec, _ := e.Resolve(bash.Request{Command: "pwd", Workdir: other})
	if r, _ := e.Run(context.Background(), spec); r.Stdout.Text != other+"\n" {
		t.Fatalf("given workdir: %q", r.Stdout.Text)
	}
}

func TestShellNotFound(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Shell = "dsh-no-such-shell"
	e := newExecutor(t, cfg)
	spec, _ := e.Resolve(bash.Request{Command: "true"})
	if _, err := e.Run(context.Background(), spec); err == nil || !strings.Contains(err.Error(), `shell "dsh-no-such-shell" not found`) {
		t.Fatalf("err = %v", err)
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	spec, _ := e.Resolve(bash.Request{Command: "cat; echo", Stdin: []byte("from stdin")})
	if r, _ := e.Run(context.Background(), spec); r.Stdout.Text != "from stdin\n" {
		t.Fatalf("got %q", r.Stdout.Text)
	}
	// 1 MiB into a command that never reads it: the write fails (EPIPE)
	// and is ignored; the real exit status is reported.
	spec, _ = e.Resolve(bash.Request{Command: "exit 7", Stdin: make([]byte, 1<<20)})
	if r, _ := e.Run(context.Background(), spec); exitCode(r) != "7" {
		t.Fatalf("got exit %s", exitCode(r))
	}
	// A command that neither reads nor exits is still timed out, and the
	// writer blocked on the full pipe does not outlive the run.
	spec, _ = e.Resolve(bash.Request{Command: "sleep 60", Stdin: make([]byte, 1<<20), TimeoutMs: new(100.0)})
	if r, _ := e.Run(context.Background(), spec); !r.TimedOut {
		t.Fatalf("got %+v", r)
	}
}

func TestOutputOfExactlyTheCap(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes = 500
	e := newExecutor(t, cfg)
	r := runCmd(t, e, "head -c 500 /dev/zero | tr '\\0' x", 0)
	if len(r.Stdout.Text) != 500 || r.Stdout.Truncated || r.Stdout.SpillPath != "" || r.Stdout.TotalBytes != 500 {
		t.Fatalf("got %+v", r.Stdout)
	}
	if entries, _ := os.ReadDir(cfg.SpillDir); len(entries) != 0 {
		t.Fatalf("spill made for output that fit: %v", entries)
	}
}

func TestLongOutputKeepsTailAndSpills(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes = 500
	e := newExecutor(t, cfg)
	r := runCmd(t, e, "for i in $(seq 1 200); do printf 'line-%04d\\n' $i; done", 0)
	out := r.Stdout
	if !strings.Contains(out.Text, "line-0200\n") || strings.Contains(out.Text, "line-0001") || !out.Truncated {
		t.Fatalf("tail: %+v", out)
	}
	if len(out.Text) > 500 || out.TotalBytes != 2000 {
		t.Fatalf("kept %d of %d bytes", len(out.Text), out.TotalBytes)
	}
	data, err := os.ReadFile(out.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 2000 || !strings.HasPrefix(string(data), "line-0001\n") || !strings.HasSuffix(string(data), "line-0200\n") {
		t.Fatalf("spill holds %d bytes: %.30q…", len(data), data)
	}
	if r.Stderr.SpillPath != "" {
		t.Fatal("stderr spilled")
	}
	file, _ := os.Lstat(out.SpillPath)
	dir, _ := os.Lstat(filepath.Dir(out.SpillPath))
	if file.Mode() != 0o600 || dir.Mode() != os.ModeDir|0o700 {
		t.Fatalf("modes: file %v dir %v", file.Mode(), dir.Mode())
	}
	if filepath.Dir(filepath.Dir(out.SpillPath)) != cfg.SpillDir {
		t.Fatalf("private dir %s not under spillDir %s", filepath.Dir(out.SpillPath), cfg.SpillDir)
	}
}

// TestForegroundKeepsTheHead: a foreground stream that overflows keeps
// its first keepHeadBytes (cut back to a line end) and a tail of the rest
// of maxOutputBytes, on each stream, and counts the bytes in neither
// (docs/spec.md §3.4a).
func TestForegroundKeepsTheHead(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes, cfg.KeepHeadBytes = 104, new(32.0)
	e := newExecutor(t, cfg)
	r := runCmd(t, e, "seq 1 100; seq 1001 1100 >&2", 0)
	for _, tc := range []struct {
		name string
		got  bash.Output
		want bash.Output
	}{
		// seq 1 100 is 292 bytes; its first 32 end inside "14\n", its
		// last 72 inside "77\n".
		{"stdout", r.Stdout, bash.Output{Head: seqLines(1, 13), Text: "7\n" + seqLines(78, 100), OmittedBytes: 292 - 30 - 72, SpillBytes: 292, TotalBytes: 292}},
		// seq 1001 1100 is 500 bytes, in lines of 5.
		{"stderr", r.Stderr, bash.Output{Head: seqLines(1001, 1006), Text: "6\n" + seqLines(1087, 1100), OmittedBytes: 500 - 30 - 72, SpillBytes: 500, TotalBytes: 500}},
	} {
		got := tc.got
		if !got.Truncated || got.SpillPath == "" {
			t.Fatalf("%s: %+v", tc.name, got)
		}
		got.Truncated, got.SpillPath = false, ""
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	if data, err := os.ReadFile(r.Stderr.SpillPath); err != nil || string(data) != seqLines(1001, 1100) {
		t.Fatalf("stderr spill: %v\n%s", err, data)
	}
}

// TestBackgroundKeepsNoHead: a background process's reads consume the
// stream as it comes, so its collectors keep a tail of the whole
// maxOutputBytes and no head.
func TestBackgroundKeepsNoHead(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes, cfg.KeepHeadBytes = 104, new(50.0)
	e := newExecutor(t, cfg)
	p := start(t, e, "seq 1 100")
	wait(t, p)
	if r := p.Read(); !r.Lossy || r.Delta != "\n"+seqLines(67, 100) {
		t.Fatalf("read %+v", r)
	}
}

// seqLines is what seq from to prints.
func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestSpillCapped(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes, cfg.MaxSpillBytes = 100, 1000
	e := newExecutor(t, cfg)
	r := runCmd(t, e, "head -c 5000 /dev/zero", 0)
	if !r.Stdout.SpillCapped || r.Stdout.SpillBytes != 1000 || r.Stdout.TotalBytes != 5000 {
		t.Fatalf("got %+v", r.Stdout)
	}
	if info, _ := os.Stat(r.Stdout.SpillPath); info.Size() != 1000 {
		t.Fatalf("spill size %d", info.Size())
	}
}

// closeFailingSpill wraps the real spill directory but fails every close.
type closeFailingSpill struct{ *capture.SpillDir }

type closeFailingFile struct{ capture.File }

func (f closeFailingFile) Close() error {
	_ = f.File.Close()
	return syscall.EIO
}

func (s closeFailingSpill) Create(stream string) (capture.File, error) {
	f, err := s.SpillDir.Create(stream)
	if err != nil {
		return nil, err
	}
	return closeFailingFile{f}, nil
}

func TestFailingSpillCloseWithholdsPath(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes, cfg.KeepHeadBytes = 10, new(0.0)
	e := newExecutor(t, cfg)
	e.spill = closeFailingSpill{e.spill.(*capture.SpillDir)}
	r := runCmd(t, e, "seq 1 100", 0)
	if r.Stdout.SpillPath != "" || !r.Stdout.Truncated || r.Stdout.Text != "98\n99\n100\n" || exitCode(r) != "0" {
		t.Fatalf("got %+v", r)
	}
}

// TestLogsGoToTheInjectedLogger: what an executor logs, here a start-up
// sweep's work and a spill file withheld, goes to the logger given with
// WithLogger, and none of it to slog's default. Not parallel: it replaces
// the default.
func TestLogsGoToTheInjectedLogger(t *testing.T) {
	var def, own bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	cfg := testConfig(t)
	cfg.MaxOutputBytes = 10
	stale := procfs.Stamp{PidNS: procfs.PidNamespace(), Pid: 999999, Start: 1}
	if err := os.Mkdir(filepath.Join(cfg.SpillDir, "dsh-out-"+stale.String()+"-abc"), 0o700); err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&own, nil))))
	if err != nil {
		t.Fatal(err)
	}
	e.spill = closeFailingSpill{e.spill.(*capture.SpillDir)}
	runCmd(t, e, "seq 1 100", 0)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"bash-local: removed spill directories of exited processes", "bash-local: spill file withheld"} {
		if !strings.Contains(own.String(), msg) {
			t.Errorf("the injected logger lacks %q; it got:\n%s", msg, own.String())
		}
	}
	if def.Len() > 0 {
		t.Errorf("slog's default logger got:\n%s", def.String())
	}
}

func TestSpillDirectoryRetention(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes = 10
	stale := filepath.Join(cfg.SpillDir, fmt.Sprintf("dsh-out-%d-999999-1-abcdef", procfs.PidNamespace()))
	// Named before the pid namespace was in the name: it may be a live
	// one of another namespace, so it stays.
	oldFormat := filepath.Join(cfg.SpillDir, "dsh-spill-999999-1-123")
	for _, dir := range []string{stale, oldFormat} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("stale spill directory of a dead process survived New")
	}
	if _, err := os.Stat(oldFormat); err != nil {
		t.Fatalf("New removed a spill directory it cannot attribute: %v", err)
	}
	if err := os.Remove(oldFormat); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, e, "seq 1 100", 0)
	if _, err := os.Stat(r.Stdout.SpillPath); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(cfg.SpillDir); len(entries) != 0 {
		t.Fatalf("Close left %v", entries)
	}
}

func TestHugeHeredocCommand(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	body := strings.Repeat("0123456789abcdef\n", 300<<10/17+1) // > 300 KiB
	target := tempFile(t, "f")
	command := "cat > " + target + " <<'EOF'\n" + body + "EOF\nwc -c < " + target + "; echo $0; ls /proc/self/fd | tr '\\n' ' '"
	if len(command) <= 128<<10 {
		t.Fatal("command is not over the single-argument limit")
	}
	r := runCmd(t, e, command, 0)
	if exitCode(r) != "0" || r.Stderr.Text != "" {
		t.Fatalf("got %+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout.Text), "\n")
	if lines[0] != fmt.Sprint(len(body)) || lines[1] != "bash" {
		t.Fatalf("output %q", r.Stdout.Text)
	}
	// The script pipe (fd 3) is not inherited by what the command runs:
	// its children see the fds a short command's children see.
	if base := runCmd(t, e, "ls /proc/self/fd | tr '\\n' ' '", 0).Stdout.Text; lines[2] != strings.TrimSpace(base) {
		t.Fatalf("fds of a command's child: %q, want %q", lines[2], base)
	}
	data, _ := os.ReadFile(target)
	if string(data) != body {
		t.Fatal("heredoc content changed")
	}
}

func TestEscapedGrandchildHoldingStdout(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.GraceMs = 300
	e := newExecutor(t, cfg)

	// The command exits at once; an escaped process keeps stdout open.
	pidFile := tempFile(t, "pid")
	killOnCleanup(t, pidFile)
	begin := time.Now()
	r := runCmd(t, e, "setsid sleep 60 & echo $! > "+pidFile+"; echo started", 5000)
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
	if r.Stdout.Text != "started\n" || exitCode(r) != "0" || r.TimedOut {
		t.Fatalf("got %+v", r)
	}

	// The command times out while the escaped process holds stdout.
	pidFile2 := tempFile(t, "pid2")
	killOnCleanup(t, pidFile2)
	begin = time.Now()
	r = runCmd(t, e, "setsid sleep 60 & echo $! > "+pidFile2+"; sleep 60", 200)
	if took := time.Since(begin); took > 200*time.Millisecond+300*time.Millisecond+2*time.Second {
		t.Fatalf("took %v, more than timeout+grace", took)
	}
	if !r.TimedOut {
		t.Fatalf("got %+v", r)
	}
}

func TestEnvironment(t *testing.T) {
	// t.Setenv: not parallel. The executor reads the environment once, in New.
	for name, value := range map[string]string{
		"OPENAI_API_KEY":         "sk-abcdefghijklmnop",
		"GITHUB_TOKEN":           "x",
		"AWS_SECRET_ACCESS_KEY":  "x",
		"DB_PASSWORD":            "x",
		"NPMTOKEN":               "x",
		"MONKEY":                 "banana",
		"KEYBOARD_LAYOUT":        "us",
		"TOKENIZERS_PARALLELISM": "false",
		"INNOCENT_NAME":          "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"DATABASE_URL":           "postgres://app:hunter2@db/app",
		"PLAIN_URL":              "https://example.invalid/path",
		"KEPT_SECRET":            "x",
		"MY_CUSTOM_THING":        "x",
		"TERM":                   "xterm-256color",
		"PAGER":                  "less",
	} {
		t.Setenv(name, value)
	}
	cfg := testConfig(t)
	cfg.Env.Passthrough = []string{"KEPT_SECRET"}
	cfg.Env.Scrub = []string{"MY_*"}
	cfg.Env.Set["FROM_SET"] = "set"
	cfg.Env.Set["PAGER"] = "more"
	e := newExecutor(t, cfg)

	spec, _ := e.Resolve(bash.Request{Command: "env", Env: map[string]string{"FROM_SPEC": "spec", "FROM_SET": "spec wins"}})
	r, err := e.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(r.Stdout.Text), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	for _, name := range []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "NPMTOKEN", "INNOCENT_NAME", "DATABASE_URL", "MY_CUSTOM_THING"} {
		if v, ok := got[name]; ok {
			t.Errorf("%s=%s reached the command", name, v)
		}
	}
	want := map[string]string{
		"MONKEY": "banana", "KEYBOARD_LAYOUT": "us", "TOKENIZERS_PARALLELISM": "false",
		"PLAIN_URL": "https://example.invalid/path", "KEPT_SECRET": "x",
		"NO_COLOR": "1", "TERM": "dumb", "PAGER": "more", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0",
		"FROM_SET": "spec wins", "FROM_SPEC": "spec",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if got["PATH"] != os.Getenv("PATH") {
		t.Errorf("PATH changed: %q", got["PATH"])
	}
	// The executor's own environment is untouched.
	if os.Getenv("OPENAI_API_KEY") == "" || os.Getenv("TERM") != "xterm-256color" {
		t.Error("the executor changed its process environment")
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	cwd, _ := os.Getwd()
	cfg := testConfig(t)
	cfg.TimeoutMs, cfg.MaxTimeoutMs = 2000, 5000
	e := newExecutor(t, cfg)
	clamped := newExecutor(t, config.Local{TimeoutMs: 9000, MaxTimeoutMs: 5000})
	for _, tc := range []struct {
		name string
		e    *Executor
		req  bash.Request
		want bash.Spec
		err  string
	}{
		{"defaults", e, bash.Request{Command: "x"}, bash.Spec{Command: "x", TimeoutMs: 2000, Workdir: cwd}, ""},
		{"given", e, bash.Request{Command: "x", TimeoutMs: new(300.0), Workdir: "/tmp"}, bash.Spec{Command: "x", TimeoutMs: 300, Workdir: "/tmp"}, ""},
		{"fraction rounds up", e, bash.Request{TimeoutMs: new(0.1)}, bash.Spec{TimeoutMs: 1, Workdir: cwd}, ""},
		{"1.5 rounds up", e, bash.Request{TimeoutMs: new(1.5)}, bash.Spec{TimeoutMs: 2, Workdir: cwd}, ""},
		{"clamped silently", e, bash.Request{TimeoutMs: new(1e12)}, bash.Spec{TimeoutMs: 5000, Workdir: cwd}, ""},
		{"default clamped", clamped, bash.Request{}, bash.Spec{TimeoutMs: 5000, Workdir: cwd}, ""},
		{"stdin and env kept", e, bash.Request{Stdin: []byte{}, Env: map[string]string{"A": "1"}}, bash.Spec{TimeoutMs: 2000, Workdir: cwd, Stdin: []byte{}, Env: map[string]string{"A": "1"}}, ""},
		{"zero", e, bash.Request{TimeoutMs: new(0.0)}, bash.Spec{}, "bash-local: request.timeoutMs must be a positive finite number"},
		{"negative", e, bash.Request{TimeoutMs: new(-1.0)}, bash.Spec{}, "bash-local: request.timeoutMs must be a positive finite number"},
		{"NaN", e, bash.Request{TimeoutMs: new(math.NaN())}, bash.Spec{}, "bash-local: request.timeoutMs must be a positive finite number"},
		{"Inf", e, bash.Request{TimeoutMs: new(math.Inf(1))}, bash.Spec{}, "bash-local: request.timeoutMs must be a positive finite number"},
		{"-Inf", e, bash.Request{TimeoutMs: new(math.Inf(-1))}, bash.Spec{}, "bash-local: request.timeoutMs must be a positive finite number"},
	} {
		got, err := tc.e.Resolve(tc.req)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: err = %v, want %s", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	// Absent stays absent.
	if s, _ := e.Resolve(bash.Request{}); s.Stdin != nil || s.Env != nil {
		t.Errorf("absent stdin/env became present: %+v", s)
	}
	// A spec that skipped Resolve is refused rather than run with no timeout.
	if _, err := e.Run(context.Background(), bash.Spec{Command: "true"}); err == nil {
		t.Error("Run accepted a spec with no timeout")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  config.Local
		want string
	}{
		{config.Local{GraceMs: -1}, "bash-local: graceMs must be a positive finite number"},
		{config.Local{KeepHeadBytes: new(-1.0)}, "bash-local: keepHeadBytes must be a non-negative finite number"},
		{config.Local{KeepHeadBytes: new(64000.0)}, "bash-local: keepHeadBytes must be smaller than maxOutputBytes"},
		{config.Local{MaxOutputBytes: 10, KeepHeadBytes: new(10.0)}, "bash-local: keepHeadBytes must be smaller than maxOutputBytes"},
	} {
		if _, err := New(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestBackgroundCompletes(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	p := start(t, e, "echo bg-ok")
	if p.Command() != "echo bg-ok" {
		t.Fatalf("command %q", p.Command())
	}
	wait(t, p)
	st := p.State()
	if st.Status != bash.StatusCompleted || st.ExitCode == nil || *st.ExitCode != 0 || st.Signal != "" {
		t.Fatalf("state %+v", st)
	}
	if r := p.Read(); r.Delta != "bg-ok\n" || r.Lossy {
		t.Fatalf("read %+v", r)
	}
	if r := p.Read(); r.Delta != "" {
		t.Fatalf("second read %+v", r)
	}
	if p.Kill() {
		t.Fatal("Kill of a finished process returned true")
	}
	if p.State().Status != bash.StatusCompleted {
		t.Fatal("Kill after the end changed the status")
	}
}

func TestBackgroundNonZeroIsCompleted(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	p := start(t, e, "exit 4")
	wait(t, p)
	if st := p.State(); st.Status != bash.StatusCompleted || *st.ExitCode != 4 {
		t.Fatalf("state %+v", st)
	}
}

func TestBackgroundReadDelta(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	for command, want := range map[string]string{
		"echo out; echo err >&2":   "out\n[stderr]\nerr\n",
		"echo err >&2":             "[stderr]\nerr\n",
		"printf out; echo err >&2": "out\n[stderr]\nerr\n",
		"printf out":               "out",
	} {
		p := start(t, e, command)
		wait(t, p)
		if r := p.Read(); r.Delta != want {
			t.Errorf("%q: delta %q, want %q", command, r.Delta, want)
		}
	}
}

func TestBackgroundIncrementalReads(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	ready, reached := readyFifo(t)
	gate, open := gateFifo(t)
	p := start(t, e, "echo one; echo > "+ready+"; read x < "+gate+"; echo two")
	reached()
	readUntil(t, p, "one\n")
	if st := p.State(); st.Status != bash.StatusRunning {
		t.Fatalf("state %+v", st)
	}
	open()
	wait(t, p)
	if r := p.Read(); r.Delta != "two\n" {
		t.Fatalf("second read %q", r.Delta)
	}
}

func TestBackgroundLossyRead(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes = 100
	e := newExecutor(t, cfg)
	p := start(t, e, "seq 1 1000")
	wait(t, p)
	r := p.Read()
	if !r.Lossy || !strings.HasSuffix(r.Delta, "\n1000\n") || len(r.Delta) > 100 || r.StdoutSpill == "" || r.StderrSpill != "" {
		t.Fatalf("read %+v", r)
	}
	if data, _ := os.ReadFile(r.StdoutSpill); !strings.HasPrefix(string(data), "1\n2\n") {
		t.Fatalf("spill starts %.10q", data)
	}
	if r := p.Read(); r.Lossy || r.Delta != "" || r.StdoutSpill == "" {
		t.Fatalf("read after the last %+v", r)
	}
}

func TestBackgroundKill(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	p := start(t, e, "sleep 60")
	if !p.Kill() {
		t.Fatal("first Kill returned false")
	}
	if st := p.State(); st.Status != bash.StatusKilled {
		t.Fatalf("state right after Kill: %+v", st)
	}
	if p.Kill() {
		t.Fatal("second Kill returned true")
	}
	wait(t, p)
	if st := p.State(); st.Status != bash.StatusKilled || st.Signal != "SIGTERM" || st.ExitCode != nil {
		t.Fatalf("state %+v", st)
	}
}

func TestBackgroundKillTrappedTERM(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.GraceMs = 2000
	e := newExecutor(t, cfg)
	ready, reached := readyFifo(t)
	p := start(t, e, "trap '' TERM; echo > "+ready+"; sleep 60")
	reached()
	begin := time.Now()
	p.Kill()
	// A second Kill 1s later must not restart the grace timer: the SIGKILL
	// stays due 2s after the first, not 3s. (A second of margin for a
	// loaded machine.)
	time.Sleep(time.Second)
	p.Kill()
	wait(t, p)
	took := time.Since(begin)
	if st := p.State(); st.Status != bash.StatusKilled || st.Signal != "SIGKILL" {
		t.Fatalf("state %+v", st)
	}
	if took < 2*time.Second || took >= 3*time.Second {
		t.Fatalf("SIGKILL after %v, want the 2s grace from the first Kill", took)
	}
}

func TestBackgroundSelfSignal(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	p := start(t, e, "kill -TERM $$")
	wait(t, p)
	if st := p.State(); st.Status != bash.StatusKilled || st.Signal != "SIGTERM" {
		t.Fatalf("state %+v", st)
	}
}

func TestKillRacingExitEndsKilled(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.GraceMs = 2000
	e := newExecutor(t, cfg)
	// The leader exits once an escaped process that ignores SIGTERM holds
	// stdout, so the run is still collecting (not done) when Kill comes:
	// the executor's own SIGTERM to what the leader left cannot end it
	// before the grace is over. (The leader waits on the FIFO until the
	// holder ignores SIGTERM; without that the SIGTERM can come first.)
	leader, holder := tempFile(t, "leader"), tempFile(t, "holder")
	killOnCleanup(t, holder)
	trapped := tempFile(t, "trapped")
	if err := syscall.Mkfifo(trapped, 0o600); err != nil {
		t.Fatal(err)
	}
	ready, reached := readyFifo(t)
	p := start(t, e, "setsid bash -c \"trap '' TERM; echo > "+trapped+"; exec sleep 60\" & echo $! > "+holder+
		"; read _ < "+trapped+"; echo $$ > "+leader+"; echo > "+ready)
	reached()
	proctest.AwaitGone(t, proctest.ReadPid(t, leader))
	if !p.Kill() {
		t.Fatal("Kill while the output was still being collected returned false")
	}
	wait(t, p)
	if st := p.State(); st.Status != bash.StatusKilled || st.ExitCode == nil || *st.ExitCode != 0 || st.Signal != "" {
		t.Fatalf("an exit raced by Kill ended %+v, want killed with exit code 0", st)
	}
	// And the plain case: Kill after done is refused.
	q := start(t, e, "true")
	wait(t, q)
	if q.Kill() || q.State().Status != bash.StatusCompleted {
		t.Fatalf("Kill after done: %+v", q.State())
	}
}

func TestCloseWaitsForTrappingBackgroundChild(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.GraceMs = 300
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := tempFile(t, "pid")
	killOnCleanup(t, pidFile)
	ready, reached := readyFifo(t)
	p := start(t, e, "trap '' TERM; sleep 60 & echo $! > "+pidFile+"; echo > "+ready+"; wait")
	reached()
	begin := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Fatalf("Close returned after %v, before the grace", took)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Close returned before the process was done")
	}
	if pid := proctest.ReadPid(t, pidFile); !proctest.Gone(pid) {
		t.Fatalf("child %d survived Close", pid)
	}
	if st := p.State(); st.Status != bash.StatusKilled || st.Signal != "SIGKILL" {
		t.Fatalf("state %+v", st)
	}
	spec, _ := e.Resolve(bash.Request{Command: "true"})
	if _, err := e.Run(context.Background(), spec); err == nil {
		t.Fatal("Run after Close succeeded")
	}
	if _, err := e.Start(spec); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

func TestCloseAbortsForegroundRuns(t *testing.T) {
	t.Parallel()
	e, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	ready, reached := readyFifo(t)
	spec, _ := e.Resolve(bash.Request{Command: "echo started; echo > " + ready + "; sleep 60"})
	got := make(chan bash.Result)
	go func() {
		r, _ := e.Run(context.Background(), spec)
		got <- r
	}()
	reached()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if r := <-got; !r.Aborted || r.TimedOut || r.Signal != "SIGTERM" || r.Stdout.Text != "started\n" {
		t.Fatalf("got %+v", r)
	}
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if i%2 == 0 {
				spec, _ := e.Resolve(bash.Request{Command: fmt.Sprintf("echo %d", i)})
				r, err := e.Run(context.Background(), spec)
				if err != nil || r.Stdout.Text != fmt.Sprintf("%d\n", i) {
					t.Errorf("run %d: %q %v", i, r.Stdout.Text, err)
				}
				return
			}
			spec, _ := e.Resolve(bash.Request{Command: fmt.Sprintf("echo %d; sleep 60", i)})
			p, err := e.Start(spec)
			if err != nil {
				t.Error(err)
				return
			}
			p.Kill()
			<-p.Done()
		})
	}
	wg.Wait()
}

const helperEnv = "DSH_LOCAL_TEST_HELPER"

// runHelperProcess is the body of a child test process: it starts a
// background command through an executor, reports the command's pid, and
// waits to be killed.
func runHelperProcess() {
	e, err := New(config.Local{Env: config.Env{Set: map[string]string{"DSH_HELPER": "1"}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fifo := os.Getenv(helperEnv)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	spec, _ := e.Resolve(bash.Request{Command: "echo $$ > " + fifo + "; exec sleep 60"})
	p, err := e.Start(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	pid, err := os.ReadFile(fifo) // returns once the command wrote its pid
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Print(string(pid))
	<-p.Done()
}

func TestParentDeathKillsTheGroupLeader(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+tempFile(t, "pid"), leakMark)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The helper prints the pid once its background command runs.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || proctest.Gone(pid) {
		t.Fatalf("background command %q is not running", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	proctest.AwaitGone(t, pid)
}

func TestBackgroundReadsNeverSplitACharacter(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	ready, reached := readyFifo(t)
	gate, open := gateFifo(t)
	p := start(t, e, `printf 'a\xe2\x82'; echo > `+ready+`; read x < `+gate+`; printf '\xac'`)
	reached()
	readUntil(t, p, "a") // fails at once if a read carries half of "€"
	open()
	wait(t, p)
	if r := p.Read(); r.Delta != "€" {
		t.Fatalf("second read %q", r.Delta)
	}
}

func TestBackgroundSpillPathWithoutLoss(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.MaxOutputBytes = 100
	e := newExecutor(t, cfg)
	ready, reached := readyFifo(t)
	gate, open := gateFifo(t)
	// 60 bytes, read, then 60 more: the stream overflows the 100-byte tail
	// and spills, but nothing unread is ever dropped.
	p := start(t, e, `printf '%060d' 0; echo > `+ready+`; read x < `+gate+`; printf '%060d' 1`)
	reached()
	readUntil(t, p, fmt.Sprintf("%060d", 0))
	open()
	wait(t, p)
	r := p.Read()
	if len(r.Delta) != 60 || r.Lossy || r.StdoutSpill == "" {
		t.Fatalf("second read %+v", r)
	}
	if data, _ := os.ReadFile(r.StdoutSpill); len(data) != 120 {
		t.Fatalf("spill holds %d bytes", len(data))
	}
}

func TestBackgroundIgnoresTimeout(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	ready := tempFile(t, "ready")
	spec, _ := e.Resolve(bash.Request{Command: "sleep 0.5; touch " + ready, TimeoutMs: new(50.0)})
	p, err := e.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, p)
	if st := p.State(); st.Status != bash.StatusCompleted || *st.ExitCode != 0 {
		t.Fatalf("state %+v", st)
	}
	if _, err := os.Stat(ready); err != nil {
		t.Fatal("a background process was stopped by the foreground timeout")
	}
}

func TestLongCommandNeedsNothingOnPath(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	command := strings.Repeat(": padding\n", 7000) + "echo $0; exit 5"
	spec, _ := e.Resolve(bash.Request{Command: command, Env: map[string]string{"PATH": "/nonexistent"}})
	r, err := e.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if exitCode(r) != "5" || r.Stdout.Text != "bash\n" || r.Stderr.Text != "" {
		t.Fatalf("got %+v", r)
	}
}

func TestLeftoversInTheGroupEndWithTheCommand(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.GraceMs = 3000
	e := newExecutor(t, cfg)

	// Foreground: the command exits; its background child, output
	// redirected or not, does not outlive it, and the call does not wait
	// out the grace.
	for _, command := range []string{"sleep 60 >/dev/null 2>&1 & echo $!", "sleep 60 & echo $!"} {
		begin := time.Now()
		r := runCmd(t, e, command, 0)
		if took := time.Since(begin); took > 2*time.Second {
			t.Errorf("%q took %v", command, took)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(r.Stdout.Text))
		if err != nil || exitCode(r) != "0" {
			t.Fatalf("%q: %+v", command, r)
		}
		if !proctest.Gone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%q: child %d outlived the command", command, pid)
		}
	}

	// Background: the task ends when its leader does, and so do its
	// children.
	p := start(t, e, "sleep 60 >/dev/null 2>&1 & echo $!")
	wait(t, p)
	r := p.Read()
	pid, _ := strconv.Atoi(strings.TrimSpace(r.Delta))
	if st := p.State(); st.Status != bash.StatusCompleted || pid == 0 || !proctest.Gone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("state %+v, child %d gone=%v", st, pid, proctest.Gone(pid))
	}
}

func TestTrappedTERMWithEscapedHolderReturnsWithinTimeoutPlusGrace(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.GraceMs = 500
	e := newExecutor(t, cfg)
	pidFile := tempFile(t, "pid")
	killOnCleanup(t, pidFile)
	begin := time.Now()
	r := runCmd(t, e, "trap '' TERM; setsid sleep 60 & echo $! > "+pidFile+"; sleep 60", 300)
	took := time.Since(begin)
	if !r.TimedOut || r.Signal != "SIGKILL" {
		t.Fatalf("got %+v", r)
	}
	// timeout + grace = 800ms; twice the grace would be 1300ms.
	if took > 1200*time.Millisecond {
		t.Fatalf("took %v, more than timeout plus grace", took)
	}
}

func TestFailedSpawnLeavesNothing(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Shell = tempFile(t, "not-a-program")
	if err := os.WriteFile(cfg.Shell, []byte("\x00\x01\x02"), 0o700); err != nil {
		t.Fatal(err)
	}
	e := newExecutor(t, cfg)
	spec, _ := e.Resolve(bash.Request{Command: "true"})
	if _, err := e.Start(spec); err == nil || !strings.Contains(err.Error(), "bash-local: spawn: ") {
		t.Fatalf("err = %v", err)
	}
	if _, err := e.Run(context.Background(), spec); err == nil {
		t.Fatal("Run of a broken shell succeeded")
	}
	e.mu.Lock()
	n := len(e.runs)
	e.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d runs registered after failed spawns", n)
	}
}

func TestSignallingAGoneGroupIsANoOp(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	g := &commandContainer{leader: cmd.Process.Pid, cgFD: -1}
	g.signal(syscall.SIGTERM)
	g.signal(syscall.SIGKILL)
	if g.live() || !g.await(time.Now()) {
		t.Fatal("a gone group reported live members")
	}
	(&commandContainer{leader: 0, cgFD: -1}).signal(syscall.SIGKILL) // never the caller's own group
	(&commandContainer{leader: 1, cgFD: -1}).signal(syscall.SIGKILL) // nor init's
}
