package bashtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// stack is the whole composition, built as host.Standard builds it: the
// bash tool over a local executor and the task tools over a task runtime,
// in one registry.
type stack struct {
	reg *tool.Registry
	rt  *tasks.Service

	mu       sync.Mutex
	finished map[string]chan struct{} // closed when the task's listeners ran
}

// finishedCh returns the channel closed once id's finish listeners (the
// notice listener included: it was registered first) have run.
func (s *stack) finishedCh(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.finished[id]
	if !ok {
		ch = make(chan struct{})
		s.finished[id] = ch
	}
	return ch
}

// awaitFinish waits until id has finished and its notice (if any) is queued,
// without reading or waiting on it (which would mark it reported).
func (s *stack) awaitFinish(t testing.TB, id string) {
	t.Helper()
	select {
	case <-s.finishedCh(id):
	case <-time.After(proctest.Scale(10 * time.Second)):
		t.Fatalf("task %s did not finish", id)
	}
}

func newStack(t *testing.T, tune func(*config.Local)) *stack {
	t.Helper()
	return newStackWith(t, tune, tasks.Config{})
}

// newStackWith is newStack with a task runtime config, for tests and
// benchmarks alike.
func newStackWith(t testing.TB, tune func(*config.Local), tc tasks.Config) *stack {
	t.Helper()
	return newStackBash(t, tune, tc, config.Bash{})
}

// newStackBash is newStackWith with the bash tool's section.
func newStackBash(t testing.TB, tune func(*config.Local), tc tasks.Config, bc config.Bash) *stack {
	t.Helper()
	lc := config.Local{Grace: 300 * time.Millisecond, SpillDir: t.TempDir()}
	if tune != nil {
		tune(&lc)
	}
	e, err := local.New(lc)
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{reg: tool.NewRegistry(), rt: tasks.New(tc), finished: map[string]chan struct{}{}}
	defs := append([]tool.Definition{bashtool.New(e, s.rt, bc).Definition()}, tasktool.Definitions(s.rt, config.Tasks{})...)
	for _, def := range defs {
		if err := s.reg.Register(def); err != nil {
			t.Fatal(err)
		}
	}
	stop := tasktool.Start(s.rt)
	s.rt.OnFinish(func(snap tasks.Snapshot, _ *session.Session) { close(s.finishedCh(snap.ID)) })
	t.Cleanup(func() {
		stop()
		s.rt.Close()
		_ = e.Close()
	})
	return s
}

func (s *stack) call(t *testing.T, sess *session.Session, name string, args any) tool.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	return s.reg.Execute(context.Background(), tool.Call{Name: name, Args: b, Session: sess})
}

func (s *stack) start(t *testing.T, sess *session.Session, command string) string {
	t.Helper()
	id, err := s.tryStart(t, sess, command)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// tryStart is start for goroutines other than the test's.
func (s *stack) tryStart(t *testing.T, sess *session.Session, command string) (string, error) {
	res := s.call(t, sess, "bash", map[string]any{"command": command, "description": "run in the background", "run_in_background": true})
	id, ok := strings.CutPrefix(res.Text(), "started background task ")
	if !ok || res.IsError {
		return "", fmt.Errorf("start %q: %q", command, res.Text())
	}
	return id, nil
}

func (s *stack) output(t *testing.T, sess *session.Session, id string) string {
	t.Helper()
	return s.call(t, sess, "task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": 10000}).Text()
}

func TestBackgroundExamples(t *testing.T) {
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()

	res := s.call(t, a, "bash", map[string]any{"command": "echo bg-ok", "description": "say ok", "run_in_background": true})
	if res.Text() != "started background task bash-1" || res.IsError {
		t.Fatalf("start: %q", res.Text())
	}
	if got := s.output(t, a, "bash-1"); got != "bg-ok\n[status: completed, exit code: 0]" {
		t.Fatalf("output: %q", got)
	}

	id := s.start(t, a, "sleep 60")
	if id != "bash-2" {
		t.Fatalf("second id %q", id)
	}
	if got := s.call(t, a, "task_kill", map[string]any{"task_id": id}).Text(); got != "requested cancellation of task bash-2" {
		t.Fatalf("kill: %q", got)
	}
	if got := s.output(t, a, id); got != "(no new output)\n[status: killed, signal: SIGTERM]" {
		t.Fatalf("killed output: %q", got)
	}
	if got := s.call(t, a, "task_kill", map[string]any{"task_id": id}).Text(); got != "task bash-2 had already finished [status: killed, signal: SIGTERM]" {
		t.Fatalf("second kill: %q", got)
	}
	s.wantExit(t, a, id, tasks.Exit{Signal: "SIGTERM"})

	id = s.start(t, a, "exit 3")
	if got := s.output(t, a, id); got != "(no new output)\n[status: completed, exit code: 3]" {
		t.Fatalf("non-zero exit: %q", got)
	}
	three := 3
	s.wantExit(t, a, id, tasks.Exit{Code: &three})
}

// wantExit checks the exit facts of the finished task id: the data a
// program reads instead of parsing the detail.
func (s *stack) wantExit(t *testing.T, sess *session.Session, id string, want tasks.Exit) {
	t.Helper()
	snap, err := s.rt.Get(sess, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, snap.Exit); diff != "" {
		t.Errorf("%s: exit facts (-want +got):\n%s", id, diff)
	}
}

func TestBackgroundTrappingTERMEndsBySIGKILL(t *testing.T) {
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()
	ready := readyFifo(t)
	id := s.start(t, a, "trap '' TERM; echo > "+ready.path+"; sleep 60")
	ready.wait(t)
	s.call(t, a, "task_kill", map[string]any{"task_id": id})
	if got := s.output(t, a, id); got != "(no new output)\n[status: killed, signal: SIGKILL]" {
		t.Fatalf("got %q", got)
	}
}

func TestBackgroundLossyRead(t *testing.T) {
	s := newStack(t, func(c *config.Local) { c.MaxOutputBytes = 20 })
	a := session.New("a", "")
	defer a.End()
	id := s.start(t, a, "seq 1 1000")
	got := s.output(t, a, id)
	prefix := "998\n999\n1000\n[some output was dropped from memory; full output: "
	if !strings.Contains(got, prefix) || !strings.HasSuffix(got, "-stdout.log]\n[status: completed, exit code: 0]") {
		t.Fatalf("got %q", got)
	}
}

func TestSessionsAreFenced(t *testing.T) {
	s := newStack(t, nil)
	a, b := session.New("a", ""), session.New("b", "")
	defer a.End()
	defer b.End()
	id := s.start(t, a, "sleep 60")
	if got := s.call(t, b, "task_list", map[string]any{}).Text(); got != "(no background tasks)" {
		t.Errorf("B lists %q", got)
	}
	if got := s.call(t, a, "task_list", map[string]any{}).Text(); got != id+" [bash] running — sleep 60" {
		t.Errorf("A lists %q", got)
	}
	want := "Error: task " + id + " belongs to another session"
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"task_output", map[string]any{"task_id": id}},
		{"task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": 50}},
		{"task_kill", map[string]any{"task_id": id}},
	} {
		if res := s.call(t, b, c.name, c.args); res.Text() != want || !res.IsError {
			t.Errorf("B %s %v: %q", c.name, c.args, res.Text())
		}
	}
	if got := s.call(t, a, "task_output", map[string]any{"task_id": id}).Text(); got != "(no new output)\n[status: running]" {
		t.Errorf("A reads %q", got)
	}
}

func TestSessionEndKillsTasksAndDropsEverything(t *testing.T) {
	s := newStack(t, func(c *config.Local) { c.MaxOutputBytes = 20 })
	a := session.New("a", "")
	pidFile := t.TempDir() + "/pid"
	t.Cleanup(func() {
		if pid, err := proctest.PidInFile(pidFile); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ready := readyFifo(t)
	id := s.start(t, a, "seq 1 1000; echo $$ > "+pidFile+"; trap '' TERM; echo > "+ready.path+"; sleep 60")
	ready.wait(t)
	// A read reports the spill file to the session. The output reaches
	// the collector through a goroutine, so read until it is there.
	var first string
	proctest.Eventually(t, proctest.Wait, func() error {
		if first = s.call(t, a, "task_output", map[string]any{"task_id": id}).Text(); !strings.Contains(first, "full output: ") {
			return fmt.Errorf("no spill path in %q", first)
		}
		return nil
	})
	i := strings.Index(first, "full output: ")
	spill := strings.SplitN(first[i+len("full output: "):], "]", 2)[0]
	pid := proctest.ReadPid(t, pidFile)
	// A second task spills too, but nobody ever reads it.
	unread := s.start(t, a, "seq 1 1000")
	s.awaitFinish(t, unread)

	begin := time.Now()
	a.End() // kills the TERM-trapping task (SIGKILL after the grace) and waits
	if took := time.Since(begin); took < 300*time.Millisecond {
		t.Fatalf("End returned after %v, before the grace: it did not wait", took)
	}
	if state, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(state), ") Z ") {
		t.Fatalf("task process %d survived the session", pid)
	}
	if _, err := os.Stat(spill); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("spill file %s survived the session", spill)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(spill), "*.log")); len(left) != 0 {
		t.Fatalf("spill files survived the session: %v", left)
	}
	if res := s.call(t, nil, "task_output", map[string]any{"task_id": id}); res.Text() != "Error: unknown task "+id {
		t.Fatalf("record kept: %q", res.Text())
	}
}

func TestFinishNotices(t *testing.T) {
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()

	// Killed with task_kill: no notice.
	killed := s.start(t, a, "sleep 60")
	s.call(t, a, "task_kill", map[string]any{"task_id": killed})
	// Seen finishing by a wait: no notice.
	waited := s.start(t, a, "sleep 0.2")
	s.output(t, a, waited)
	// Read after it finished (its notice was queued, then withdrawn): none.
	read := s.start(t, a, "true")
	s.awaitFinish(t, read)
	s.call(t, a, "task_output", map[string]any{"task_id": read})
	// Finishes and is never looked at: exactly one notice.
	unread := s.start(t, a, "echo done")
	for _, id := range []string{killed, waited, read, unread} {
		s.awaitFinish(t, id)
	}
	want := []string{"background task " + unread + " (bash: echo done) finished [status: completed, exit code: 0]. Read its output with task_output."}
	if got := a.TakeNotices(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notices %q, want %q", got, want)
	}
}

func TestKilledBeforeExit(t *testing.T) {
	s := newStack(t, func(c *config.Local) { c.Grace = 1500 * time.Millisecond })
	a := session.New("a", "")
	defer a.End()
	// The leader exits at once, but an escaped process holds stdout, so
	// the task is still collecting output when the kill comes: killed,
	// with no signal of its own. The holder ignores SIGTERM, or the
	// executor's SIGTERM to what the leader left would end it (and the
	// task) before the kill; the leader waits on the FIFO until it does.
	dir := t.TempDir()
	leader, holder, trapped := dir+"/leader", dir+"/holder", dir+"/trapped"
	if err := syscall.Mkfifo(trapped, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pid, err := proctest.PidInFile(holder); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ready := readyFifo(t)
	id := s.start(t, a, "setsid bash -c \"trap '' TERM; echo > "+trapped+"; exec sleep 60\" & echo $! > "+holder+
		"; read _ < "+trapped+"; echo $$ > "+leader+"; echo > "+ready.path)
	ready.wait(t)
	proctest.AwaitGone(t, proctest.ReadPid(t, leader)) // the leader exits
	if got := s.call(t, a, "task_kill", map[string]any{"task_id": id}).Text(); got != "requested cancellation of task "+id {
		t.Fatalf("kill: %q", got)
	}
	if got := s.output(t, a, id); got != "(no new output)\n[status: killed, killed before exit]" {
		t.Fatalf("got %q", got)
	}
	s.wantExit(t, a, id, tasks.Exit{})
}

type fifo struct{ path string }

// readyFifo makes a FIFO a command writes to (`echo > fifo`) when it
// reaches a point; wait blocks until it did.
func readyFifo(t *testing.T) fifo {
	t.Helper()
	path := t.TempDir() + "/ready"
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo{path}
}

func (f fifo) wait(t *testing.T) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		data, err := os.ReadFile(f.path)
		_ = data
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(proctest.Scale(10 * time.Second)):
		if w, err := os.OpenFile(f.path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-got
		t.Fatalf("the command never reached %s", f.path)
	}
}

// TestHundredTasksStartedAndKilledConcurrently runs real processes: 100
// background tasks started and killed from many goroutines at once, some
// racing their own exit. Every one ends, killed or (if it won the race)
// completed, and the notices match: none for the killed ones.
func TestHundredTasksStartedAndKilledConcurrently(t *testing.T) {
	s := newStack(t, nil)
	owners := []*session.Session{session.New("a", ""), session.New("b", "")}
	defer owners[0].End()
	defer owners[1].End()
	var wg sync.WaitGroup
	ids := make([]string, 100)
	for i := range ids {
		wg.Go(func() {
			o := owners[i%2]
			command := "sleep 60"
			if i%4 == 0 {
				command = "true" // races the kill
			}
			id, err := s.tryStart(t, o, command)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = id
			res := s.call(t, o, "task_kill", map[string]any{"task_id": ids[i]})
			if res.IsError {
				t.Errorf("kill %s: %q", ids[i], res.Text())
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[string]bool{}
	for i, id := range ids {
		if seen[id] {
			t.Fatalf("id %s used twice", id)
		}
		seen[id] = true
		got := s.output(t, owners[i%2], id)
		if !strings.Contains(got, "[status: killed, signal: SIGTERM]") &&
			!strings.Contains(got, "[status: killed, killed before exit]") &&
			!(i%4 == 0 && strings.HasSuffix(got, "[status: completed, exit code: 0]")) {
			t.Errorf("%s: %q", id, got)
		}
	}
	for _, id := range ids {
		s.awaitFinish(t, id) // every listener ran: a wrong notice would be queued
	}
	for _, o := range owners {
		if n := o.TakeNotices(); len(n) != 0 {
			t.Errorf("notices for killed tasks: %q", n)
		}
	}
}

// TestServerWideTaskLimit: with tasks.maxRunning 2, two sessions' running
// commands fill the server: the next background call of either session, or
// of a third, is refused with the exact text and runs nothing; once a task
// ends, another starts. Every process is gone at the end.
func TestServerWideTaskLimit(t *testing.T) {
	s := newStackWith(t, nil, tasks.Config{MaxRunning: 2})
	a, b, c := session.New("a", ""), session.New("b", ""), session.New("c", "")
	defer c.End()
	dir := t.TempDir()
	pids := make([]int, 2)
	ids := make([]string, 2)
	for i, sess := range []*session.Session{a, b} {
		pidFile := fmt.Sprintf("%s/pid%d", dir, i)
		ids[i] = s.start(t, sess, "echo $$ > "+pidFile+"; exec sleep 60")
		pids[i] = proctest.ReadPid(t, pidFile)
	}
	want := "Error: too many background tasks: 2 are running on this server; stop one with task_kill or try again later"
	marker := dir + "/ran"
	for _, sess := range []*session.Session{a, b, c} {
		res := s.call(t, sess, "bash", map[string]any{"command": "touch " + marker, "description": "one too many", "run_in_background": true})
		if res.Text() != want || !res.IsError {
			t.Errorf("session %s over the server's limit: %q, want %q", sess.ID(), res.Text(), want)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused start ran its command: %v", err)
	}
	s.call(t, a, "task_kill", map[string]any{"task_id": ids[0]})
	s.output(t, a, ids[0])
	proctest.AwaitGone(t, pids[0])
	s.output(t, c, s.start(t, c, "touch "+marker))
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("a start after a task ended: %v", err)
	}
	a.End()
	b.End()
	proctest.AwaitGone(t, pids...)
}

// TestSpillTotalReleasesReadFilesThenCuts: with local.maxSpillTotalBytes
// 5000, a command that needs room first takes it from the files of
// finished and read streams, the oldest first (two tasks whose lossy reads
// named their files, and a foreground command), never from a finished task
// nobody read; when none is left its file stops and its output is cut with
// the usual notice. Every process is gone at the end.
func TestSpillTotalReleasesReadFilesThenCuts(t *testing.T) {
	base := t.TempDir()
	s := newStack(t, func(c *config.Local) {
		c.MaxOutputBytes, c.MaxSpillTotalBytes, c.SpillDir = 100, 5000, base
	})
	a := session.New("a", "")
	defer a.End()
	fill := func(n int, c string) string { return fmt.Sprintf("head -c %d /dev/zero | tr '\\0' %s", n, c) }

	// Two tasks, finished and read: a lossy read named each one's file.
	read := make([]string, 2)
	for i, c := range []string{"a", "b"} {
		ready := readyFifo(t)
		pidFile := t.TempDir() + "/pid"
		id := s.start(t, a, fill(1000, c)+"; echo $$ > "+pidFile+"; echo > "+ready.path+"; exec sleep 60")
		ready.wait(t)
		proctest.Eventually(t, proctest.Wait, func() error {
			text := s.call(t, a, "task_output", map[string]any{"task_id": id}).Text()
			if read[i] = spillPath(text, "full output: "); read[i] == "" {
				return fmt.Errorf("no spill path in %q", text)
			}
			return nil
		})
		s.call(t, a, "task_kill", map[string]any{"task_id": id})
		s.output(t, a, id)
		proctest.AwaitGone(t, proctest.ReadPid(t, pidFile))
	}
	// A task that finished and that nobody read.
	unread := s.start(t, a, fill(1500, "c"))
	s.awaitFinish(t, unread)
	wantFile(t, read[0], 1000)
	wantFile(t, read[1], 1000)

	// 3500 of 5000 are taken: 2000 more release the oldest read file.
	fg := s.call(t, a, "bash", map[string]any{"command": fill(2000, "d"), "description": "d"}).Text()
	fgPath := spillPath(fg, "[output truncated; full output: ")
	wantFile(t, fgPath, 2000)
	wantFile(t, read[0], -1)
	wantFile(t, read[1], 1000)

	// 4500 taken, all but the unread task's releasable: 4000 more release
	// them and get the 3500 left.
	cut := s.call(t, a, "bash", map[string]any{"command": fill(4000, "e"), "description": "e"}).Text()
	cutPath := spillPath(cut, "[output truncated; first 3500 bytes saved: ")
	if !strings.HasSuffix(cut, "\n[output truncated; first 3500 bytes saved: "+cutPath+"]") {
		t.Errorf("the cut command reads %q, want the notice of 3500 bytes saved", cut)
	}
	wantFile(t, cutPath, 3500)
	wantFile(t, read[1], -1)
	wantFile(t, fgPath, -1)
	// The unread task kept its whole file.
	wantFile(t, spillPath(s.output(t, a, unread), "full output: "), 1500)
}

// spillPath is the path after prefix in text, up to the next "]"; "" when
// text does not hold prefix.
func spillPath(text, prefix string) string {
	_, rest, ok := strings.Cut(text, prefix)
	if !ok {
		return ""
	}
	path, _, _ := strings.Cut(rest, "]")
	return path
}

// wantFile checks that path holds size bytes, or is gone for size -1.
func wantFile(t *testing.T, path string, size int64) {
	t.Helper()
	fi, err := os.Stat(path)
	switch {
	case size < 0 && !errors.Is(err, os.ErrNotExist):
		t.Errorf("%s is still there (%v), want it released", path, err)
	case size >= 0 && (err != nil || fi.Size() != size):
		t.Errorf("%s: %v, size %v; want %d bytes", path, err, fi, size)
	}
}

// A background task's read that missed output keeps the start of what it
// missed and its end, with the omitted line between them, exactly as the
// same command's foreground result shows them: an early error is not only
// in the spill file.
func TestBackgroundReadKeepsHeadAndTail(t *testing.T) {
	s := newStack(t, nil)
	a := session.New("a", "")
	defer a.End()
	const command = "echo 'error: early failure'; seq 1 30000; echo 'last line'"
	fg := s.call(t, a, "bash", map[string]any{"command": command, "description": "print a lot"}).Text()
	fgKept, _, ok := strings.Cut(fg, "\n\n[output truncated; full output: ")
	if !ok || !strings.HasPrefix(fgKept, "error: early failure\n1\n") || !strings.Contains(fgKept, " bytes omitted …]\n") {
		t.Fatalf("foreground: %q", fg)
	}
	id := s.start(t, a, command)
	bg := s.output(t, a, id)
	bgKept, rest, ok := strings.Cut(bg, "\n[some output was dropped from memory; full output: ")
	if !ok || !strings.HasSuffix(rest, "-stdout.log]\n[status: completed, exit code: 0]") {
		t.Fatalf("background: %q", bg)
	}
	if bgKept != fgKept {
		i := 0
		for i < min(len(bgKept), len(fgKept)) && bgKept[i] == fgKept[i] {
			i++
		}
		t.Errorf("background read and foreground differ at byte %d:\n%.200q\n%.200q", i, bgKept[max(0, i-50):], fgKept[max(0, i-50):])
	}
	if !strings.HasSuffix(bgKept, "29999\n30000\nlast line") {
		t.Errorf("background read ends %q", bgKept[len(bgKept)-40:])
	}
}
