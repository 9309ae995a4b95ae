package local

// Commands under a terminal (docs/spec.md §2.7), with real programs under
// a real pty: each check runs unsandboxed here (TestTerminal) and in every
// sandbox backend (TestSandboxTerminal, which TestSandboxAsNonRoot runs
// again as nobody).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/executortest"
	"github.com/dsh-go/dsh/internal/proctest"
)

// ttyPlace is where a terminal check runs: an executor, and the request
// every command starts from (the session's, sandboxed or not).
type ttyPlace struct {
	e       *Executor
	req     bash.Request
	backend string // "" unsandboxed
}

// unsandboxed is an executor without a sandbox.
func unsandboxed(t *testing.T) ttyPlace {
	return ttyPlace{e: newExecutor(t, testConfig(t))}
}

// sandboxed is an executor with backend b's sandbox, its commands the
// session's.
func sandboxed(t *testing.T, b string) ttyPlace {
	s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
	return ttyPlace{e: s.e, req: bash.Request{Owner: s.owner}, backend: b}
}

// ttyChecks hold for a command under a terminal wherever it runs.
var ttyChecks = []struct {
	name string
	fn   func(t *testing.T, pl ttyPlace)
}{
	{"IsTheControllingTerminal", checkControllingTerminal},
	{"DeathBySignalComesThrough", checkSignal},
	{"Input", checkInput},
	{"CtrlCReachesTheForegroundJob", checkCtrlC},
	{"Resize", checkResize},
	{"ProgramClosesIt", checkClosedByProgram},
	{"KillEndsEverything", checkKill},
	{"LeavesNoDescriptor", checkNoDescriptorLeft},
}

func TestTerminal(t *testing.T) {
	for _, c := range ttyChecks {
		t.Run(c.name, func(t *testing.T) { c.fn(t, unsandboxed(t)) })
	}
}

func TestSandboxTerminal(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			for _, c := range ttyChecks {
				t.Run(c.name, func(t *testing.T) { c.fn(t, sandboxed(t, b)) })
			}
		})
	}
}

// TestTerminalKillInEveryContainment: the kill of an interactive shell
// and its jobs, each in a process group of its own, ends them all however
// the executor finds a command's processes.
func TestTerminalKillInEveryContainment(t *testing.T) {
	for _, mode := range []string{config.ContainMarker, config.ContainGroup} {
		t.Run(mode, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Containment = mode
			checkKill(t, ttyPlace{e: newExecutor(t, cfg)})
		})
	}
}

// TestSandboxTerminalWithoutSetsid: where bwrap finds no setsid to give
// the shell its terminal, a command under a terminal is refused, saying
// why; one without a terminal still runs.
func TestSandboxTerminalWithoutSetsid(t *testing.T) {
	bin := outsideDir(t) // the sandbox shows it, unlike /tmp: the shell is found there
	linkPathExcept(t, bin, "setsid")
	t.Setenv("PATH", bin)
	s := newSbx(t, config.BackendBwrap, config.SandboxWorkspaceWrite, nil)
	spec, err := s.e.Resolve(bash.Request{Command: "true", Owner: s.owner, TTY: &defaultSize})
	if err != nil {
		t.Fatal(err)
	}
	const want = "bash-local: spawn: sandbox: a terminal needs util-linux's setsid (apt install util-linux), which is not on PATH"
	if _, err := s.e.Start(t.Context(), spec); err == nil || err.Error() != want {
		t.Errorf("Start: %v, want %q", err, want)
	}
	if r := s.run("echo ok"); r.Stdout.Text != "ok\n" {
		t.Errorf("without a terminal: %+v", r)
	}
}

// tty is a command under a terminal and what it printed, as Observe saw
// it.
type tty struct {
	t    *testing.T
	p    bash.TerminalProcess
	mu   sync.Mutex
	out  []byte
	more chan struct{} // a token once more output came
}

// defaultSize is the size the checks start with: not 80x24, so that a
// size that did not arrive shows.
var defaultSize = bash.Terminal{Cols: 90, Rows: 30}

// startTTY starts command at pl under a terminal of size; it is killed,
// and awaited, when the test ends.
func startTTY(t *testing.T, pl ttyPlace, command string, size bash.Terminal) *tty {
	t.Helper()
	tt := &tty{t: t, more: make(chan struct{}, 1)}
	req := pl.req
	req.Command, req.TTY, req.Observe = command, &size, tt.observe
	tt.p = startTerminal(t, pl.e, req)
	return tt
}

// startTerminal starts req, which asks for a terminal, and checks that its
// Process is a terminal's.
func startTerminal(t testing.TB, e *Executor, req bash.Request) bash.TerminalProcess {
	t.Helper()
	spec, err := e.Resolve(req)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start(%q): %v", req.Command, err)
	}
	t.Cleanup(func() {
		p.Kill()
		select {
		case <-p.Done():
		case <-time.After(proctest.Wait):
			t.Errorf("%q: not done after its kill", req.Command)
		}
	})
	tp, ok := p.(bash.TerminalProcess)
	if !ok {
		t.Fatalf("the Process of a terminal command is a %T", p)
	}
	return tp
}

func (tt *tty) observe(stream string, p []byte) {
	if stream != "stdout" {
		tt.t.Errorf("a terminal's output came on %s: %q", stream, p)
		return
	}
	tt.mu.Lock()
	tt.out = append(tt.out, p...)
	tt.mu.Unlock()
	select {
	case tt.more <- struct{}{}:
	default:
	}
}

func (tt *tty) output() string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return string(tt.out)
}

// await waits until the output holds want n times, and returns it.
func (tt *tty) await(want string, n int) string {
	tt.t.Helper()
	deadline := time.After(proctest.Wait)
	for {
		out := tt.output()
		if strings.Count(out, want) >= n {
			return out
		}
		select {
		case <-tt.more:
		case <-deadline:
			tt.t.Fatalf("no %q (%d times) in the terminal's output after %v:\n%q", want, n, proctest.Wait, out)
		}
	}
}

// awaitLine waits until the output holds line as the program printed it
// (ONLCR: "\r\n" ends it). No check types what it awaits, so the echo of
// what was typed cannot pass for it.
func (tt *tty) awaitLine(line string) string {
	tt.t.Helper()
	return tt.await(line+"\r\n", 1)
}

// typeIn writes s to the terminal, as typed.
func (tt *tty) typeIn(s string) {
	tt.t.Helper()
	n, err := tt.p.WriteInput([]byte(s), time.Now().Add(proctest.Wait))
	if err != nil || n != len(s) {
		tt.t.Fatalf("WriteInput(%q) = %d, %v", s, n, err)
	}
}

// awaitDone waits until the process is done.
func (tt *tty) awaitDone() {
	tt.t.Helper()
	executortest.Wait(tt.t, tt.p)
}

// The output is the stdout stream and only it; the slave is the shell's
// stdin, stdout, stderr and controlling terminal (/dev/tty opens), of the
// size asked for, with TERM for the emulator; its exit status comes
// through (bwrap: through setsid and the starter). Under bwrap the slave
// is not in the sandbox's own /dev/pts: bwrap shows it as /dev/console.
func checkControllingTerminal(t *testing.T, pl ttyPlace) {
	tt := startTTY(t, pl, `test -t 0 && test -t 1 && test -t 2 && tty; stty size; echo "TERM=$TERM NO_COLOR=$NO_COLOR PAGER=$PAGER"; `+
		`exec 3</dev/tty && echo ctty; echo err >&2; exit 5`, defaultSize)
	tt.awaitDone()
	name := `/dev/pts/\d+`
	if pl.backend == config.BackendBwrap {
		name = `/dev/console`
	}
	want := regexp.MustCompile(`^` + name + "\r\n30 90\r\nTERM=xterm-256color NO_COLOR=1 PAGER=cat\r\nctty\r\nerr\r\n$")
	r := tt.p.Read()
	if !want.MatchString(r.Stdout.Text) || r.Stderr.Text != "" || tt.output() != r.Stdout.Text {
		t.Errorf("read %+v, observed %q; want stdout %v", r, tt.output(), want)
	}
	st := tt.p.State()
	if st.Status != bash.StatusCompleted || st.ExitCode == nil || *st.ExitCode != 5 || st.StderrBytes != 0 {
		t.Errorf("state %+v, want completed with exit code 5", st)
	}
}

// A shell that kills itself ends killed by its signal, as without a
// terminal: under bwrap, setsid executed it in place (had it forked, the
// starter would report setsid's exit 0).
func checkSignal(t *testing.T, pl ttyPlace) {
	tt := startTTY(t, pl, `kill -TERM $$`, defaultSize)
	tt.awaitDone()
	if st := tt.p.State(); st.Status != bash.StatusKilled || st.Signal != "SIGTERM" || st.ExitCode != nil {
		t.Errorf("state %+v, want killed by SIGTERM", st)
	}
}

// What is typed reaches the program, as lines (canonical mode, echoed).
func checkInput(t *testing.T, pl ttyPlace) {
	tt := startTTY(t, pl, `read -r x; echo "got $x"; exec cat`, defaultSize)
	tt.typeIn("hello world\r")
	tt.awaitLine("got hello world")
	tt.typeIn("again\r")
	tt.await("again\r\nagain\r\n", 1) // the echo, then cat's copy
	tt.typeIn("\x04")                 // C-d at the start of a line: cat reads EOF
	tt.awaitDone()
	if st := tt.p.State(); st.Status != bash.StatusCompleted || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Errorf("state %+v after C-d", st)
	}
}

// An interactive bash under the terminal has job control: a typed C-c
// is SIGINT to the foreground job (sleep), not to the shell, nor to bwrap,
// which would end the sandbox; the shell goes on.
func checkCtrlC(t *testing.T, pl ttyPlace) {
	tt, mark := startShell(t, pl)
	tt.typeIn("echo ready\r")
	tt.awaitLine("ready")
	checkForegroundIs(t, tt.p, "bash", "/bash")
	tt.typeIn("sleep 100\r")
	awaitForeground(t, mark, "sleep")
	checkForegroundIs(t, tt.p, "sleep", "/sleep")
	tt.typeIn("\x03")
	tt.typeIn("echo alive $?\r")
	tt.awaitLine("alive 130") // 128 + SIGINT
	if st := tt.p.State(); st.Status != bash.StatusRunning {
		t.Fatalf("state %+v after C-c", st)
	}
	tt.typeIn("exit 3\r")
	tt.awaitDone()
	if st := tt.p.State(); st.ExitCode == nil || *st.ExitCode != 3 {
		t.Errorf("state %+v after exit 3", st)
	}
}

// A resize reaches the program as SIGWINCH, and stty reads the new size.
// (bash runs a trap once a blocking read returns: hence read's timeout.)
func checkResize(t *testing.T, pl ttyPlace) {
	tt := startTTY(t, pl, `trap 'echo "winch $(stty size)"' WINCH; echo ready; `+
		`while :; do read -r -t 0.1 l && echo "size $(stty size)"; done`, defaultSize)
	tt.awaitLine("ready")
	if err := tt.p.Resize(bash.Terminal{Cols: 100, Rows: 30}); err != nil {
		t.Fatal(err)
	}
	tt.awaitLine("winch 30 100")
	tt.typeIn("\r")
	tt.awaitLine("size 30 100")
	if err := tt.p.Resize(bash.Terminal{Cols: 10, Rows: 30}); err == nil || !strings.Contains(err.Error(), "columns 20–500") {
		t.Errorf("Resize to 10x30: %v", err)
	}
}

// A program that closes the terminal and goes on, then exits: the run
// does not hang on the master.
func checkClosedByProgram(t *testing.T, pl ttyPlace) {
	tt := startTTY(t, pl, `echo bye; exec 0<&- 1>&- 2>&-; sleep 1`, defaultSize)
	tt.awaitLine("bye")
	select {
	case <-tt.p.Done():
	case <-time.After(time.Second + proctest.Scale(2*time.Second)):
		t.Fatalf("not done after the program exited")
	}
	if st := tt.p.State(); st.Status != bash.StatusCompleted || *st.ExitCode != 0 {
		t.Errorf("state %+v", st)
	}
}

// A kill ends the interactive shell, which ignores SIGTERM, and its jobs:
// one in the background, one in the foreground.
func checkKill(t *testing.T, pl ttyPlace) {
	tt, mark := startShell(t, pl)
	tt.typeIn("sleep 101 &\r")
	tt.typeIn("sleep 100\r")
	awaitForeground(t, mark, "sleep")
	before := carrying(ttyMarkEnv, mark)
	if len(before) < 3 {
		t.Fatalf("processes carrying the mark: %v, want the shell and two sleeps", before)
	}
	if !tt.p.Kill() {
		t.Fatal("Kill returned false")
	}
	tt.awaitDone()
	if left := carrying(ttyMarkEnv, mark); len(left) > 0 {
		t.Errorf("processes left after the kill: %v (of %v)", left, before)
	}
	if st := tt.p.State(); st.Status != bash.StatusKilled {
		t.Errorf("state %+v", st)
	}
}

// Once a run is done, its master and everything else it opened is
// closed: the process has as many descriptors as before.
func checkNoDescriptorLeft(t *testing.T, pl ttyPlace) {
	run := func() {
		tt := startTTY(t, pl, `read -r x; echo "got $x"`, defaultSize)
		tt.typeIn("x\r")
		tt.awaitDone()
		if _, err := tt.p.WriteInput([]byte("late"), time.Now().Add(time.Second)); !errors.Is(err, os.ErrClosed) {
			t.Errorf("WriteInput after the end: %v", err)
		}
	}
	run()          // what the executor keeps (a session's scope, a cgroup) is made
	pl.e.Started() // and what it makes ahead (a session's network)
	before := openFDs(t)
	for range 3 {
		run()
	}
	proctest.Eventually(t, proctest.Scale(2*time.Second), func() error {
		if after := openFDs(t); after != before {
			return fmt.Errorf("%d descriptors open, %d before", after, before)
		}
		return nil
	})
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// ttyMarkEnv names the variable ttyMark's value goes in.
const ttyMarkEnv = "DSH_TTY_MARK"

// ttyMark is a value unique to the test, put in its commands' environment
// so that their processes are found wherever they are (a sandbox's pid
// namespace, a job's own process group).
// startShell starts an interactive bash under a terminal, its processes
// marked for awaitForeground.
func startShell(t *testing.T, pl ttyPlace) (*tty, string) {
	mark := ttyMark(t)
	pl.req.Env = map[string]string{ttyMarkEnv: mark}
	return startTTY(t, pl, `PS1='$ ' exec bash --norc --noprofile -i`, defaultSize), mark
}

func ttyMark(t *testing.T) string {
	return strconv.Itoa(os.Getpid()) + "-" + strings.ReplaceAll(t.Name(), "/", "-")
}

// awaitForeground waits until a process named comm carrying mark is the
// foreground process group of its terminal: a C-c typed then is its.
func awaitForeground(t *testing.T, mark, comm string) {
	t.Helper()
	proctest.Eventually(t, proctest.Wait, func() error {
		for _, pid := range carrying(ttyMarkEnv, mark) {
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			if err != nil {
				continue
			}
			_, rest, _ := strings.Cut(string(stat), " (")
			i := strings.LastIndex(rest, ") ")
			if i < 0 || rest[:i] != comm {
				continue
			}
			// state ppid pgrp session tty_nr tpgid
			f := strings.Fields(rest[i+2:])
			if len(f) > 5 && f[2] == f[5] {
				return nil
			}
		}
		return fmt.Errorf("no %s carrying the mark in the foreground", comm)
	})
}

// Python's own line editing: a C-c at its prompt is KeyboardInterrupt,
// and it goes on.
func TestTerminalPython(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP-REASON: no python3")
	}
	tt := startTTY(t, unsandboxed(t), `exec python3 -q`, defaultSize)
	tt.await(">>> ", 1)
	// CPython's readline loop loses a SIGINT that comes between the
	// prompt and its select (which then waits for a key): a second C-c
	// interrupts the select. So C-c until it shows.
	proctest.Eventually(t, proctest.Wait, func() error {
		tt.typeIn("\x03")
		if !proctest.Within(proctest.Scale(200*time.Millisecond), func() bool {
			return strings.Contains(tt.output(), "KeyboardInterrupt")
		}) {
			return errors.New("no KeyboardInterrupt after C-c")
		}
		return nil
	})
	tt.typeIn("print(6 * 7)\r")
	tt.awaitLine("42")
	if st := tt.p.State(); st.Status != bash.StatusRunning {
		t.Fatalf("state %+v after C-c", st)
	}
}

// 10 MB through the terminal: the collector keeps its tail, the spill
// file has it all, every byte is counted, and the heap stays bounded.
// Not parallel: the heap is the whole process's.
func TestTerminalLargeOutput(t *testing.T) {
	const size = 10_000_000
	e := newExecutor(t, testConfig(t))
	heap := executortest.StartHeapSampler()
	p := startTerminal(t, e, bash.Request{Command: fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", size), TTY: &defaultSize})
	executortest.Wait(t, p)
	peak, live := heap.Stop()
	r := p.Read()
	st := p.State()
	info, err := os.Stat(r.StdoutSpill)
	if st.StdoutBytes != size || err != nil || info.Size() != size || !r.Lossy || len(r.Stdout.Text) > 64000 ||
		strings.Trim(r.Stdout.Text, "x") != "" || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("state %+v, spill %v %v, read lossy %v, %d bytes", st, info, err, r.Lossy, len(r.Stdout.Text))
	}
	// The heap's peak, garbage included: had the run kept the stream,
	// it would be above 10 MB whenever the collector ran.
	t.Logf("peak heap %.1f MiB, live %.1f MiB above the start", float64(peak)/(1<<20), float64(live)/(1<<20))
	if peak > 8<<20 {
		t.Errorf("the heap grew by %.1f MiB", float64(peak)/(1<<20))
	}
}

// A program that never reads: WriteInput returns by its deadline, with
// what the terminal took and a timeout.
func TestTerminalInputToAProgramThatDoesNotRead(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	p := startTerminal(t, e, bash.Request{Command: "exec sleep 100", TTY: &defaultSize})
	in := bytes.Repeat([]byte("y"), 1<<20)
	const wait = 200 * time.Millisecond
	began := time.Now()
	n, err := p.WriteInput(in, began.Add(wait))
	took := time.Since(began)
	if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= len(in) {
		t.Fatalf("WriteInput = %d, %v; want part of %d and a timeout", n, err, len(in))
	}
	if want := fmt.Sprintf("bash-local: terminal input: %d of %d bytes written by the deadline, the program is not reading: i/o timeout", n, len(in)); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if took < wait || took > wait+proctest.Scale(time.Second) {
		t.Errorf("WriteInput took %v, deadline %v", took, wait)
	}
	t.Logf("the terminal took %d bytes", n)
}

// After the end: WriteInput and Resize fail, saying so.
func TestTerminalAfterTheEnd(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	p := startTerminal(t, e, bash.Request{Command: "true", TTY: &defaultSize})
	executortest.Wait(t, p)
	const want = "bash-local: the terminal's command has ended: file already closed"
	if _, err := p.WriteInput([]byte("x\r"), time.Now().Add(time.Second)); err == nil || err.Error() != want || !errors.Is(err, os.ErrClosed) {
		t.Errorf("WriteInput: %v, want %q", err, want)
	}
	if err := p.Resize(bash.Terminal{Cols: 100, Rows: 30}); err == nil || err.Error() != want {
		t.Errorf("Resize: %v, want %q", err, want)
	}
}

// A command over 64 KiB comes on fd 3 under a terminal too.
func TestTerminalLongCommand(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	command := "tty >/dev/null && echo long ok #" + strings.Repeat("x", maxArgCommand)
	p := startTerminal(t, e, bash.Request{Command: command, TTY: &defaultSize})
	executortest.Wait(t, p)
	if r := p.Read(); r.Stdout.Text != "long ok\r\n" {
		t.Errorf("read %+v", r)
	}
}

// What cannot run under a terminal is refused before anything is
// spawned: a foreground run, a size out of bounds, stdin bytes, a write
// without a deadline.
func TestTerminalRefusals(t *testing.T) {
	t.Parallel()
	e := newExecutor(t, testConfig(t))
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	spec, err := e.Resolve(bash.Request{Command: "touch " + ran, TTY: &defaultSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.RunOrYield(t.Context(), spec, nil); err == nil || err.Error() != "bash-local: a terminal needs a background start (Start), not a foreground run" {
		t.Errorf("RunOrYield: %v", err)
	}
	for _, tc := range []struct {
		size  bash.Terminal
		stdin []byte
		want  string
	}{
		{bash.Terminal{Cols: 19, Rows: 24}, nil, "bash-local: terminal size 19x24 is out of bounds: columns 20–500, rows 5–200"},
		{bash.Terminal{Cols: 80, Rows: 201}, nil, "bash-local: terminal size 80x201 is out of bounds: columns 20–500, rows 5–200"},
		{bash.Terminal{}, nil, "bash-local: terminal size 0x0 is out of bounds: columns 20–500, rows 5–200"},
		{defaultSize, []byte("x"), "bash-local: a terminal command takes no stdin bytes: type them with WriteInput"},
	} {
		s := spec
		s.TTY, s.Stdin = &tc.size, tc.stdin
		if _, err := e.Start(t.Context(), s); err == nil || err.Error() != tc.want {
			t.Errorf("Start(%+v, stdin %q): %v, want %q", tc.size, tc.stdin, err, tc.want)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("a refused command ran")
	}
	p := startTerminal(t, e, bash.Request{Command: "exec cat", TTY: &defaultSize})
	if _, err := p.WriteInput([]byte("x"), time.Time{}); err == nil || err.Error() != "bash-local: terminal input needs a deadline" {
		t.Errorf("WriteInput without a deadline: %v", err)
	}
}

// BenchmarkTTYRoundTrip: a key typed into cat under a terminal until its
// echo and cat's copy are back, as Observe sees them.
func BenchmarkTTYRoundTrip(b *testing.B) {
	cfg := testConfig(b)
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.Close() })
	seen := make(chan struct{}, 1)
	var mu sync.Mutex
	var got int
	observe := func(_ string, p []byte) {
		mu.Lock()
		got += bytes.Count(p, []byte("x"))
		mu.Unlock()
		select {
		case seen <- struct{}{}:
		default:
		}
	}
	p := startTerminal(b, e, bash.Request{Command: "exec cat", TTY: &defaultSize, Observe: observe})
	count := func() int { mu.Lock(); defer mu.Unlock(); return got }
	b.ResetTimer()
	for i := range b.N {
		if _, err := p.WriteInput([]byte("x\r"), time.Now().Add(proctest.Wait)); err != nil {
			b.Fatal(err)
		}
		for count() < 2*(i+1) { // the echo and cat's copy
			select {
			case <-seen:
			case <-time.After(proctest.Wait):
				b.Fatalf("round trip %d did not come back", i)
			}
		}
	}
}

// checkForegroundIs: the terminal's foreground group is the one program
// name, its executable read (as non-root and in the sandbox too: the
// permissions gate decides typed input by it).
func checkForegroundIs(t *testing.T, p bash.TerminalProcess, name, exeSuffix string) {
	t.Helper()
	var fg []bash.Program
	if !proctest.Within(proctest.Scale(5*time.Second), func() bool {
		fg = p.Foreground()
		return len(fg) == 1 && len(fg[0].Args) > 0 && fg[0].Args[0] == name
	}) {
		t.Fatalf("foreground %+v, want %s alone", fg, name)
	}
	if !strings.HasSuffix(fg[0].Exe, exeSuffix) {
		t.Errorf("foreground %s's executable is %q", name, fg[0].Exe)
	}
}
