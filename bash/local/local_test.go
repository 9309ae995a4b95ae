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

func TestShellNotFound(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Shell = "dsh-no-such-shell"
	e := newExecutor(t, cfg)
	spec, _ := e.Resolve(bash.Request{Command: "true"})
	if _, err := bash.Run(context.Background(), e, spec); err == nil || !strings.Contains(err.Error(), `shell "dsh-no-such-shell" not found`) {
		t.Fatalf("err = %v", err)
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
	cfg.MaxOutputBytes, cfg.KeepHeadBytes = 10, new(int64(0))
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

// TestStartUpWaits: an executor whose start-up cannot fail begins it
// neither in New nor at once after (dsh mcp's handshake goes first), but
// when something needs it or when its delay has passed; an executor
// closed before either begins and ends it in Close.
func TestStartUpWaits(t *testing.T) {
	t.Parallel()
	isReady := func(e *Executor) bool {
		select {
		case <-e.ready:
			return true
		default:
			return false
		}
	}
	newWith := func(t *testing.T, d time.Duration) *Executor {
		t.Helper()
		e, err := New(testConfig(t), withStartDelay(d))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	t.Run("until a command needs it", func(t *testing.T) {
		t.Parallel()
		e := newWith(t, time.Hour)
		// The start-up takes a few ms: begun in New, or by a goroutine
		// New started, it would be over by now.
		time.Sleep(200 * time.Millisecond)
		if isReady(e) {
			t.Fatal("the start-up ran before anything needed it")
		}
		if r := runCmd(t, e, "echo hi", 0); r.Stdout.Text != "hi\n" || !isReady(e) {
			t.Fatalf("a first command got %q (start-up done: %v)", r.Stdout.Text, isReady(e))
		}
	})
	t.Run("until its delay passed", func(t *testing.T) {
		t.Parallel()
		e := newWith(t, 20*time.Millisecond)
		proctest.Eventually(t, proctest.Scale(10*time.Second), func() error {
			if !isReady(e) {
				return errors.New("the start-up has not run, nothing needing it")
			}
			return nil
		})
	})
	t.Run("until Sandbox is asked", func(t *testing.T) {
		t.Parallel()
		e := newWith(t, time.Hour)
		if sb := e.Sandbox(); sb != nil || !isReady(e) {
			t.Fatalf("Sandbox %v before the start-up set it (done: %v)", sb, isReady(e))
		}
	})
	t.Run("until Close", func(t *testing.T) {
		t.Parallel()
		e := newWith(t, time.Hour)
		if err := e.Close(); err != nil || !isReady(e) {
			t.Fatalf("Close: %v (start-up done: %v)", err, isReady(e))
		}
	})
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
	e.started() // the sweep may end after New returned, before any command
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("stale spill directory of a dead process survived the start-up")
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

	got := commandEnv(t, e, map[string]string{"FROM_SPEC": "spec", "FROM_SET": "spec wins"})
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

// commandEnv is the environment a command of e sees, with env added to
// its request.
func commandEnv(t *testing.T, e *Executor, env map[string]string) map[string]string {
	t.Helper()
	spec, _ := e.Resolve(bash.Request{Command: "env", Env: env})
	r, err := bash.Run(context.Background(), e, spec)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(r.Stdout.Text), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	return got
}

// TestEnvironmentScrubsMoreNames: a command does not see credentials the
// server holds under these names, in values no value rule would catch;
// look-alike names pass.
func TestEnvironmentScrubsMoreNames(t *testing.T) {
	// t.Setenv: not parallel. The executor reads the environment once, in New.
	const value = "opaque-credential-value"
	gone := []string{
		"SMTP_PASS", "GITHUB_PAT", "DB_PW", "DOCKER_AUTH_CONFIG",
		"AZURE_STORAGE_CONNECTION_STRING", "CI_JOB_JWT", "CI_JOB_JWT_V2",
		"SESSION_COOKIE", "CREDS", "GCP_CREDS",
	}
	for _, name := range gone {
		t.Setenv(name, value)
	}
	kept := map[string]string{"PASSAGE": "a", "PATCH_LEVEL": "3", "PATH": os.Getenv("PATH")}
	for name, v := range kept {
		t.Setenv(name, v)
	}
	e := newExecutor(t, testConfig(t))
	got := commandEnv(t, e, nil)
	for _, name := range gone {
		if v, ok := got[name]; ok {
			t.Errorf("%s=%s reached the command", name, v)
		}
	}
	for name, v := range kept {
		if got[name] != v {
			t.Errorf("%s=%q, want %q", name, got[name], v)
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	cwd, _ := os.Getwd()
	cfg := testConfig(t)
	cfg.Timeout, cfg.MaxTimeout = 2*time.Second, 5*time.Second
	e := newExecutor(t, cfg)
	clamped := newExecutor(t, config.Local{Timeout: 9 * time.Second, MaxTimeout: 5 * time.Second})
	for _, tc := range []struct {
		name string
		e    *Executor
		req  bash.Request
		want bash.Spec
		err  string
	}{
		{"defaults", e, bash.Request{Command: "x"}, bash.Spec{Command: "x", Timeout: 2000 * time.Millisecond, Workdir: cwd}, ""},
		{"given", e, bash.Request{Command: "x", TimeoutMs: new(300.0), Workdir: "/tmp"}, bash.Spec{Command: "x", Timeout: 300 * time.Millisecond, Workdir: "/tmp"}, ""},
		{"fraction rounds up", e, bash.Request{TimeoutMs: new(0.1)}, bash.Spec{Timeout: 1 * time.Millisecond, Workdir: cwd}, ""},
		{"1.5 rounds up", e, bash.Request{TimeoutMs: new(1.5)}, bash.Spec{Timeout: 2 * time.Millisecond, Workdir: cwd}, ""},
		{"clamped silently", e, bash.Request{TimeoutMs: new(1e12)}, bash.Spec{Timeout: 5000 * time.Millisecond, Workdir: cwd}, ""},
		{"default clamped", clamped, bash.Request{}, bash.Spec{Timeout: 5000 * time.Millisecond, Workdir: cwd}, ""},
		{"stdin and env kept", e, bash.Request{Stdin: []byte{}, Env: map[string]string{"A": "1"}}, bash.Spec{Timeout: 2000 * time.Millisecond, Workdir: cwd, Stdin: []byte{}, Env: map[string]string{"A": "1"}}, ""},
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
	if _, err := bash.Run(context.Background(), e, bash.Spec{Command: "true"}); err == nil {
		t.Error("Run accepted a spec with no timeout")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  config.Local
		want string
	}{
		{config.Local{Grace: -time.Millisecond}, "bash-local: graceMs must be a positive finite number"},
		{config.Local{KeepHeadBytes: new(int64(-1))}, "bash-local: keepHeadBytes must be a non-negative finite number"},
		{config.Local{KeepHeadBytes: new(int64(64000))}, "bash-local: keepHeadBytes must be smaller than maxOutputBytes"},
		{config.Local{MaxOutputBytes: 10, KeepHeadBytes: new(int64(10))}, "bash-local: keepHeadBytes must be smaller than maxOutputBytes"},
	} {
		if _, err := New(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestNewRefusesASpillBaseOthersCanWrite: another user could move or
// delete what the executor spills there (docs/spec.md §2.5); the attack
// itself is in package capture's tests.
func TestNewRefusesASpillBaseOthersCanWrite(t *testing.T) {
	t.Parallel()
	base := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(base, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := New(config.Local{SpillDir: base})
	if want := "bash-local: spillDir: spill directory base " + base + ": " + base + " is writable by other users and has no sticky bit (mode 0777): make it 0700, or 1777 like /tmp"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
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
	p, err := e.Start(context.Background(), spec)
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

func TestFailedSpawnLeavesNothing(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Shell = tempFile(t, "not-a-program")
	if err := os.WriteFile(cfg.Shell, []byte("\x00\x01\x02"), 0o700); err != nil {
		t.Fatal(err)
	}
	e := newExecutor(t, cfg)
	spec, _ := e.Resolve(bash.Request{Command: "true"})
	if _, err := e.Start(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "bash-local: spawn: ") {
		t.Fatalf("err = %v", err)
	}
	if _, err := bash.Run(context.Background(), e, spec); err == nil {
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
