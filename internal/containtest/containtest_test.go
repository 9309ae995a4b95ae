package containtest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/internal/stacktest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

var soakCalls = flag.Int("soak.calls", 300, "mixed calls TestSoak makes per containment mode (the issue's soak is 5000)")

func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }

const graceMs = 200

var modes = []string{config.ContainCgroup, config.ContainMarker, config.ContainGroup}

// groupBlind says why group mode cannot see escape e in scenario sc, by
// design: it finds what stays in the command's process group, and what
// left it through the parent chain from a member it found while that
// member ran. A process that left the group and whose parent had exited
// before the first look (the kill, or the shell's exit) is in neither.
// Empty where group mode must catch e.
func groupBlind(e escape, sc scenario) string {
	switch {
	case e.name == "daemon":
		return "the daemon's intermediate subshell exits at once, so the setsid'd sleep is orphaned out of the group before any look"
	case e.name == "setsid" && sc.name == "foreground":
		return "the shell exits by itself: its setsid'd child is orphaned out of the group before the first look, made after the exit"
	}
	return ""
}

// stack is the composed stack: the local executor behind host, with the
// bash and task tools in a registry.
type stack struct {
	mode  string
	reg   *tool.Registry
	exec  *local.Executor
	calls atomic.Int64 // registry calls made
}

// newStack composes the stack with containment mode; the error is
// local.New's, so that a caller can tell an unavailable cgroup.
func newStack(t testing.TB, mode string) (*stack, error) {
	st, err := stacktest.New(t, config.Local{Grace: graceMs * time.Millisecond, Containment: mode})
	if err != nil {
		return nil, err
	}
	return &stack{mode: mode, reg: st.Tools, exec: st.Local}, nil
}

// stackFor is newStack for a test: it skips the cgroup mode where the
// executor cannot make a cgroup, and checks the mode is the one asked for.
func stackFor(t *testing.T, mode string) *stack {
	t.Helper()
	s, err := newStack(t, mode)
	if err != nil {
		if mode == config.ContainCgroup {
			t.Skipf("cgroup containment unavailable: %v", err)
		}
		t.Fatal(err)
	}
	got := s.exec.Containment()
	if !strings.HasPrefix(got, mode) {
		t.Fatalf("asked for containment %q, the executor uses %q", mode, got)
	}
	t.Logf("containment: %s", got)
	return s
}

// call runs one call through the registry; an error result is an error.
func (s *stack) call(sess *session.Session, name string, args map[string]any) (tool.Result, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return tool.Result{}, err
	}
	s.calls.Add(1)
	res := s.reg.Execute(context.Background(), tool.Call{Name: name, Args: raw, Session: sess})
	if res.IsError {
		return res, fmt.Errorf("%s %s: error result %s: %s", name, raw, res.Code, text(res))
	}
	return res, nil
}

// run is a foreground bash call; it returns the text and the structured
// result.
func (s *stack) run(sess *session.Session, command string, timeoutMs int) (string, bashtool.Structured, error) {
	res, err := s.call(sess, bashtool.Name, map[string]any{
		"command":     command,
		"description": "containment test",
		"timeoutMs":   timeoutMs,
	})
	if err != nil {
		return "", bashtool.Structured{}, err
	}
	st, ok := res.Structured.(bashtool.Structured)
	if !ok {
		return "", st, fmt.Errorf("bash %q: structured result is %T", command, res.Structured)
	}
	return text(res), st, nil
}

// start starts command as a background task and returns its id.
func (s *stack) start(sess *session.Session, command string) (string, error) {
	res, err := s.call(sess, bashtool.Name, map[string]any{
		"command":           command,
		"description":       "containment test",
		"run_in_background": true,
	})
	if err != nil {
		return "", err
	}
	st, ok := res.Structured.(bashtool.Structured)
	if !ok || st.TaskID == "" {
		return "", fmt.Errorf("bash %q in the background: no task id in %q", command, text(res))
	}
	return st.TaskID, nil
}

// kill is task_kill.
func (s *stack) kill(sess *session.Session, id string) error {
	res, err := s.call(sess, "task_kill", map[string]any{"task_id": id})
	if err != nil {
		return err
	}
	if want := "requested cancellation of task " + id; text(res) != want {
		return fmt.Errorf("task_kill %s: %q, want %q", id, text(res), want)
	}
	return nil
}

// await reads the task with task_output wait: true until its status is
// no longer running nor stopping; it returns the last snapshot and all the
// text read.
func (s *stack) await(sess *session.Session, id string) (tasks.Snapshot, string, error) {
	var all strings.Builder
	deadline := time.Now().Add(proctest.Scale(30 * time.Second))
	for {
		res, err := s.call(sess, "task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": 10000})
		if err != nil {
			return tasks.Snapshot{}, all.String(), err
		}
		all.WriteString(text(res))
		snap, ok := res.Structured.(tasks.Snapshot)
		if !ok {
			return snap, all.String(), fmt.Errorf("task_output %s: structured result is %T", id, res.Structured)
		}
		if snap.Status.Terminal() {
			return snap, all.String(), nil
		}
		if time.Now().After(deadline) {
			return snap, all.String(), fmt.Errorf("task %s still %s", id, snap.Status)
		}
	}
}

func text(res tool.Result) string {
	parts := make([]string, len(res.Content))
	for i, c := range res.Content {
		parts[i] = c.Text
	}
	return strings.Join(parts, "\n")
}

// --- processes ---

// describe is what /proc says of pid, for failure messages.
func describe(pid int) string {
	st, ok := procfs.ReadStat(pid)
	if !ok {
		return fmt.Sprintf("pid %d: no such process", pid)
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	run, _ := procfs.Getenv(pid, local.RunIDEnv)
	return fmt.Sprintf("pid %d (%s): state %c, ppid %d, pgrp %d, %s=%q, cgroups %q",
		pid, strings.TrimSpace(string(comm)), st.State, st.PPid, st.Pgrp, local.RunIDEnv, run, strings.TrimSpace(string(cg)))
}

// q quotes s for the shell.
func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// script joins shell commands, one a line (a command may end in &).
func script(lines ...string) string { return strings.Join(lines, "\n") }

// shellAwaitFile is shell that waits until path is not empty.
func shellAwaitFile(path string) string {
	return fmt.Sprintf("until [ -s %s ]; do sleep 0.01; done", q(path))
}

// --- what an escaped process looks like ---

// check tells whether the live process pid, started by the command whose
// shell (leader of the command's process group) is shell, is as a pattern
// says; it returns what it found when not.
type check func(pid, shell int) error

func all(checks ...check) check {
	return func(pid, shell int) error {
		for _, c := range checks {
			if err := c(pid, shell); err != nil {
				return err
			}
		}
		return nil
	}
}

func isSleep(pid, _ int) error {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return err
	}
	if c := strings.TrimSpace(string(comm)); c != "sleep" {
		return fmt.Errorf("pid %d is %q, not the sleep", pid, c)
	}
	return nil
}

func stat(pid int) (procfs.Stat, error) {
	st, ok := procfs.ReadStat(pid)
	if !ok || st.Dead() {
		return st, fmt.Errorf("pid %d does not run", pid)
	}
	return st, nil
}

func leftGroup(pid, shell int) error {
	st, err := stat(pid)
	if err != nil {
		return err
	}
	if st.Pgrp == shell {
		return fmt.Errorf("pid %d is still in the command's process group %d", pid, shell)
	}
	return nil
}

// orphaned: the parent is no longer the command's shell nor anything in
// its group (it exited, and the process was reparented).
func orphaned(pid, shell int) error {
	st, err := stat(pid)
	if err != nil {
		return err
	}
	if st.PPid == shell {
		return fmt.Errorf("pid %d is still the shell's child", pid)
	}
	if pst, ok := procfs.ReadStat(st.PPid); ok && pst.Pgrp == shell {
		return fmt.Errorf("the parent %d of pid %d is still in the command's group", st.PPid, pid)
	}
	return nil
}

func ignoresHUP(pid, _ int) error {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return err
			}
			if mask&(1<<(syscall.SIGHUP-1)) == 0 {
				return fmt.Errorf("pid %d does not ignore SIGHUP (SigIgn %s)", pid, strings.TrimSpace(v))
			}
			return nil
		}
	}
	return fmt.Errorf("no SigIgn for pid %d", pid)
}

func closedFds(pid, _ int) error {
	for fd := range 3 {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd)); err == nil {
			return fmt.Errorf("pid %d still has fd %d open (%s)", pid, fd, target)
		}
	}
	return nil
}

func noMarker(pid, _ int) error {
	if v, ok := procfs.Getenv(pid, local.RunIDEnv); ok {
		return fmt.Errorf("pid %d still carries %s=%s", pid, local.RunIDEnv, v)
	}
	return nil
}

// escape is a way for a command to start a process that outlives the
// command's process group: start is shell that starts it and writes its
// pid to pidFile (the pid of the long-lived sleep itself: setsid and nohup
// exec, and sh execs the sleep after writing $$); escaped checks the live
// process.
type escape struct {
	name    string
	start   func(pidFile string) string
	escaped check
}

var escapes = []escape{
	{
		// Not a group leader, setsid calls setsid(2) and execs: $! is the
		// sleep.
		name:    "setsid",
		start:   func(f string) string { return "setsid sleep 300 & echo $! > " + q(f) },
		escaped: all(isSleep, leftGroup),
	},
	{
		name:    "nohup",
		start:   func(f string) string { return "nohup sleep 300 >/dev/null 2>&1 & echo $! > " + q(f) },
		escaped: all(isSleep, ignoresHUP),
	},
	{
		// The subshell exits at once: the sleep is reparented.
		name:    "double-fork",
		start:   func(f string) string { return "( sleep 300 & echo $! > " + q(f) + " ) &" },
		escaped: all(isSleep, orphaned),
	},
	{
		// The classic daemon: double fork, cd /, a new session, no
		// stdin/stdout/stderr; the pid file path comes as $0.
		name: "daemon",
		start: func(f string) string {
			return `( cd /; setsid sh -c 'exec 0<&- 1>&- 2>&-; echo $$ > "$0"; exec sleep 300' ` + q(f) + " & ) &"
		},
		escaped: all(isSleep, leftGroup, orphaned, closedFds),
	},
}

// envClearedOrphan is the marker's known gap: env -i drops the marker,
// the subshell's exit takes the sleep out of the parent chain, setsid out
// of the group. The command waits for the subshell and for the sleep to
// run, so there is no moment left where the marker could still see it.
var envClearedOrphan = escape{
	name: "env-cleared-orphan",
	start: func(f string) string {
		return "( env -i setsid sleep 300 & echo $! > " + q(f) + " ) &\nwait $!\n" +
			`until [ "$(cat /proc/$(cat ` + q(f) + `)/comm 2>/dev/null)" = sleep ]; do sleep 0.01; done`
	},
	escaped: all(isSleep, leftGroup, orphaned, noMarker),
}

// files are a subtest's pid files: the escapee's and the shell's.
type files struct{ dir, pid, shell string }

func newFiles(t *testing.T) files {
	dir := t.TempDir()
	return files{dir: dir, pid: filepath.Join(dir, "escapee.pid"), shell: filepath.Join(dir, "shell.pid")}
}

// killLeft kills, when a test failed half-way, an escapee it recorded and
// that still runs with this test run's mark.
func killLeft(path string) {
	if pid, err := proctest.PidInFile(path); err == nil {
		killMarked(pid)
	}
}

// killMarked kills pid if it runs with this test run's mark.
func killMarked(pid int) {
	if proctest.Gone(pid) {
		return
	}
	if v, ok := procfs.Getenv(pid, proctest.Name); ok && v == proctest.Value {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// --- scenarios ---

type scenario struct {
	name string
	// run starts the escape through the registry and ends the command as
	// the scenario says.
	run func(t *testing.T, s *stack, sess *session.Session, e escape, f files)
}

var scenarios = []scenario{
	{"foreground", func(t *testing.T, s *stack, sess *session.Session, e escape, f files) {
		out, st, err := s.run(sess, script(e.start(f.pid), shellAwaitFile(f.pid), "echo started"), 30000)
		if err != nil {
			t.Fatal(err)
		}
		if st.TimedOut || st.ExitCode == nil || *st.ExitCode != 0 || !strings.Contains(out, "started") {
			t.Fatalf("the command did not end normally: %q", out)
		}
	}},
	{"timeout", func(t *testing.T, s *stack, sess *session.Session, e escape, f files) {
		// The script waits for the escape; the timeout only has to be
		// long enough for a slow machine to get there.
		out, st, err := s.run(sess, script(e.start(f.pid), shellAwaitFile(f.pid), "sleep 60"), 3000)
		if err != nil {
			t.Fatal(err)
		}
		if !st.TimedOut {
			t.Fatalf("the command did not time out: %q", out)
		}
	}},
	{"task-kill", func(t *testing.T, s *stack, sess *session.Session, e escape, f files) {
		id := startEscaped(t, s, sess, e, f)
		if err := s.kill(sess, id); err != nil {
			t.Fatal(err)
		}
		snap, out, err := s.await(sess, id)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Status != tasks.Killed {
			t.Fatalf("task %s ended %s, want killed: %q", id, snap.Status, out)
		}
	}},
	{"session-end", func(t *testing.T, s *stack, sess *session.Session, e escape, f files) {
		startEscaped(t, s, sess, e, f)
		sess.End()
	}},
}

// startEscaped starts the escape in a background task, waits for the
// escapee and checks, while it runs, that it escaped as its pattern says.
func startEscaped(t *testing.T, s *stack, sess *session.Session, e escape, f files) string {
	t.Helper()
	id, err := s.start(sess, script("echo $$ > "+q(f.shell), e.start(f.pid), shellAwaitFile(f.pid), "sleep 300"))
	if err != nil {
		t.Fatal(err)
	}
	pid, shell := proctest.ReadPid(t, f.pid), proctest.ReadPid(t, f.shell)
	var why error
	if !proctest.Within(proctest.Wait, func() bool { why = e.escaped(pid, shell); return why == nil }) {
		t.Fatalf("%s did not escape as it should: %v; %s", e.name, why, describe(pid))
	}
	return id
}

func TestEscapesDieThroughTheRegistry(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := stackFor(t, mode)
			for _, e := range escapes {
				for _, sc := range scenarios {
					t.Run(e.name+"/"+sc.name, func(t *testing.T) {
						if why := groupBlind(e, sc); mode == config.ContainGroup && why != "" {
							t.Skip("SKIP-REASON: group mode cannot see this escape by design: " + why)
						}
						t.Parallel()
						f := newFiles(t)
						sess := session.New(t.Name(), f.dir)
						t.Cleanup(sess.End)
						t.Cleanup(func() { killLeft(f.pid) })
						sc.run(t, s, sess, e, f)
						pid := proctest.ReadPid(t, f.pid)
						if len(proctest.Survivors(proctest.Wait, pid)) > 0 {
							t.Fatalf("the escapee outlived the command: %s", describe(pid))
						}
					})
				}
			}
			// The control: an escapee the marker cannot see. It survives in
			// marker and group modes (their documented gap, which also
			// shows this test can fail) and dies in cgroup mode.
			t.Run("control/"+envClearedOrphan.name, func(t *testing.T) {
				t.Parallel()
				f := newFiles(t)
				sess := session.New(t.Name(), f.dir)
				t.Cleanup(sess.End)
				out, st, err := s.run(sess, script("echo $$ > "+q(f.shell), envClearedOrphan.start(f.pid), "echo started"), 30000)
				if err != nil {
					t.Fatal(err)
				}
				pid := proctest.ReadPid(t, f.pid)
				if start := procfs.Start(pid); start != 0 {
					// No mark on it: killLeft would not find it.
					t.Cleanup(func() {
						if procfs.Alive(pid, start) {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					})
				}
				if st.TimedOut || st.ExitCode == nil || *st.ExitCode != 0 || !strings.Contains(out, "started") {
					t.Fatalf("the command did not end normally: %q", out)
				}
				if mode == config.ContainCgroup {
					if len(proctest.Survivors(proctest.Wait, pid)) > 0 {
						t.Fatalf("cgroup containment missed the escapee: %s", describe(pid))
					}
					return
				}
				// The run is over, kill sequence included; give it the
				// grace twice more, then the escapee must still run.
				time.Sleep(2 * graceMs * time.Millisecond)
				if err := envClearedOrphan.escaped(pid, proctest.ReadPid(t, f.shell)); err != nil {
					t.Fatalf("%s mode: the escapee should survive, unseen, as documented: %v; %s", mode, err, describe(pid))
				}
				t.Logf("%s mode, as documented, did not catch %s", mode, describe(pid))
			})
		})
	}
}

// --- soak ---

const (
	soakWorkers = 3
	soakWarmup  = 24 // four rounds of the six kinds of call
	rotateEvery = 25 // calls of a worker's session before it ends
	fdSlack     = 2
	goSlack     = 2
	// maxSoakFailures stops a soak that fails over and over.
	maxSoakFailures = 10
)

// soaker makes mixed calls in its own session, ending it with a task
// still running every rotateEvery calls and starting a new one.
type soaker struct {
	s    *stack
	id   int
	dir  string
	sess *session.Session
	gen  int
	n    int
}

func (w *soaker) session() *session.Session {
	if w.sess == nil {
		w.gen++
		w.sess = session.New(fmt.Sprintf("soak-%d-%d", w.id, w.gen), w.dir)
	}
	return w.sess
}

func (w *soaker) do(i int) error {
	if err := mixed(w.s, w.session(), i); err != nil {
		return fmt.Errorf("call %d (kind %d): %w", i, i%6, err)
	}
	w.n++
	if w.n%rotateEvery == 0 {
		if _, err := w.s.start(w.sess, "sleep 300"); err != nil {
			return err
		}
		w.end()
	}
	return nil
}

func (w *soaker) end() {
	if w.sess != nil {
		w.sess.End()
		w.sess = nil
	}
}

// mixed makes the i-th call of the soak, of kind i%6.
func mixed(s *stack, sess *session.Session, i int) error {
	switch i % 6 {
	case 0:
		want := fmt.Sprintf("soak-%d", i)
		out, _, err := s.run(sess, "echo "+want, 30000)
		if err == nil && strings.TrimSpace(out) != want {
			err = fmt.Errorf("echo: %q, want %q", out, want)
		}
		return err
	case 1:
		out, st, err := s.run(sess, "echo out; echo err >&2; exit 3", 30000)
		if err == nil && (st.ExitCode == nil || *st.ExitCode != 3) {
			err = fmt.Errorf("exit 3: %q", out)
		}
		return err
	case 2:
		out, st, err := s.run(sess, "sleep 5", 50)
		if err == nil && !st.TimedOut {
			err = fmt.Errorf("sleep 5 with timeoutMs 50 did not time out: %q", out)
		}
		return err
	case 3:
		pid, err := setsidEscapee(s, sess)
		if err != nil {
			return err
		}
		if len(proctest.Survivors(proctest.Wait, pid)) > 0 {
			err := fmt.Errorf("the escapee outlived the command: %s", describe(pid))
			killMarked(pid)
			return err
		}
		return nil
	case 4:
		id, err := s.start(sess, "sleep 300")
		if err != nil {
			return err
		}
		if err := s.kill(sess, id); err != nil {
			return err
		}
		snap, out, err := s.await(sess, id)
		if err == nil && snap.Status != tasks.Killed {
			err = fmt.Errorf("killed task %s ended %s: %q", id, snap.Status, out)
		}
		return err
	default:
		want := fmt.Sprintf("bg-%d", i)
		id, err := s.start(sess, "echo "+want)
		if err != nil {
			return err
		}
		snap, out, err := s.await(sess, id)
		if err == nil && (snap.Status != tasks.Completed || !strings.Contains(out, want)) {
			err = fmt.Errorf("task %s ended %s: %q, want %q", id, snap.Status, out, want)
		}
		return err
	}
}

// setsidEscapee makes a process that left the command's group and returns
// its pid once the command has ended: in the foreground, except in group
// mode, which cannot see it there (groupBlind); a killed background task
// there.
func setsidEscapee(s *stack, sess *session.Session) (int, error) {
	if s.mode != config.ContainGroup {
		out, _, err := s.run(sess, "setsid sleep 300 & echo $!", 30000)
		if err != nil {
			return 0, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			return 0, fmt.Errorf("escapee pid: %q", out)
		}
		return pid, nil
	}
	f, err := os.CreateTemp("", "dsh-soak-*.pid")
	if err != nil {
		return 0, err
	}
	_ = f.Close()
	defer os.Remove(f.Name())
	id, err := s.start(sess, "setsid sleep 300 & echo $! > "+q(f.Name())+"; sleep 300")
	if err != nil {
		return 0, err
	}
	var pid int
	if !proctest.Within(proctest.Wait, func() bool { pid, err = proctest.PidInFile(f.Name()); return err == nil }) {
		return 0, fmt.Errorf("escapee pid: %v", err)
	}
	if err := s.kill(sess, id); err != nil {
		return pid, err
	}
	_, _, err = s.await(sess, id)
	return pid, err
}

func openFds(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// commandCgroups counts the per-command cgroups under the cgroups of this
// process's executors ("dsh-<pidns>-<pid>-…" beside each other under the cgroup
// the executor names), in cgroup mode; -1 in marker mode.
func commandCgroups(s *stack) int {
	_, where, ok := strings.Cut(s.exec.Containment(), " under ")
	if !ok {
		return -1
	}
	prefix := fmt.Sprintf("dsh-%d-%d-", procfs.PidNamespace(), os.Getpid())
	if strings.HasPrefix(filepath.Base(where), prefix) {
		where = filepath.Dir(where)
	}
	bases, _ := filepath.Glob(filepath.Join(where, prefix+"*"))
	n := 0
	for _, base := range bases {
		entries, _ := os.ReadDir(base)
		for _, e := range entries {
			if e.IsDir() {
				n++
			}
		}
	}
	return n
}

// TestCommandCgroupsCounts: the soak's cgroup count sees a running
// command's cgroup (it once looked for a name the executor never made, and
// so always counted 0).
func TestCommandCgroupsCounts(t *testing.T) {
	s := stackFor(t, config.ContainCgroup)
	before := commandCgroups(s)
	spec, err := s.exec.Resolve(bash.Request{Command: "sleep 300"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.exec.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	during := commandCgroups(s)
	p.Kill()
	<-p.Done()
	if during != before+1 || commandCgroups(s) != before {
		t.Fatalf("per-command cgroups: %d before, %d while a command runs, %d after", before, during, commandCgroups(s))
	}
}

func TestSoak(t *testing.T) {
	calls := *soakCalls
	if calls < soakWarmup {
		t.Fatalf("-soak.calls=%d: at least %d needed for the warm-up", calls, soakWarmup)
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			s := stackFor(t, mode)
			dir := t.TempDir()

			warm := &soaker{s: s, id: 0, dir: dir}
			for i := range soakWarmup {
				if err := warm.do(i); err != nil {
					t.Fatal(err)
				}
			}
			warm.end()
			fds0, gor0, kids0, cgs0 := openFds(t), runtime.NumGoroutine(), len(proctest.Left()), commandCgroups(s)

			began := time.Now()
			var next atomic.Int64
			next.Store(soakWarmup)
			var wg sync.WaitGroup
			// A failed call is reported and the soak goes on, so that a
			// run says how often something fails, up to maxSoakFailures.
			var failures, done atomic.Int64
			for id := 1; id <= soakWorkers; id++ {
				wg.Go(func() {
					w := &soaker{s: s, id: id, dir: dir}
					defer w.end()
					for failures.Load() < maxSoakFailures {
						i := int(next.Add(1) - 1)
						if i >= calls {
							return
						}
						err := w.do(i)
						done.Add(1)
						if err != nil {
							failures.Add(1)
							t.Errorf("%s soak: %v", mode, err)
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(began)
			if n := failures.Load(); n > 0 {
				t.Errorf("%s soak: %d calls failed (the soak stops at %d)", mode, n, maxSoakFailures)
			}

			// Goroutines of calls that just ended may take a moment to
			// return; so may a process killed a moment ago.
			gor1 := runtime.NumGoroutine()
			proctest.Within(proctest.Scale(2*time.Second), func() bool { gor1 = runtime.NumGoroutine(); return gor1 <= gor0+goSlack })
			left := proctest.Left()
			proctest.Within(proctest.Scale(2*time.Second), func() bool { left = proctest.Left(); return len(left) == 0 })
			cgs1 := commandCgroups(s)
			proctest.Within(proctest.Scale(2*time.Second), func() bool { cgs1 = commandCgroups(s); return cgs1 <= cgs0 })
			fds1 := openFds(t)
			measured := int(done.Load())
			t.Logf("%s: %d mixed calls (%d registry calls in all) by %d workers; the %d after the warm-up took %v, %.0f calls/s",
				mode, soakWarmup+measured, s.calls.Load(), soakWorkers, measured, elapsed.Round(time.Millisecond), float64(measured)/elapsed.Seconds())
			t.Logf("%s: open fds %d → %d, goroutines %d → %d, child processes %d → %d, per-command cgroups %d → %d (-1: no cgroups)",
				mode, fds0, fds1, gor0, gor1, kids0, len(left), cgs0, cgs1)
			if fds1 > fds0+fdSlack {
				t.Errorf("open fds grew from %d to %d", fds0, fds1)
			}
			if gor1 > gor0+goSlack {
				buf := make([]byte, 1<<20)
				t.Errorf("goroutines grew from %d to %d:\n%s", gor0, gor1, buf[:runtime.Stack(buf, true)])
			}
			if len(left) > 0 {
				var d []string
				for _, pid := range left {
					d = append(d, describe(pid))
				}
				t.Errorf("processes left: %s", strings.Join(d, "; "))
			}
			if cgs1 > cgs0 {
				t.Errorf("per-command cgroups grew from %d to %d", cgs0, cgs1)
			}
		})
	}
}
