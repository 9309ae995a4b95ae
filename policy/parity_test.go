package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The differential test against real bash (docs/spec.md §9.3 "Parity with
// bash"): a command runs under bash 5.2 in a bubblewrap jail with every
// execve recorded by strace, and every program bash executed must be one
// the policy saw, with the words it saw, unless the policy found an opaque
// part (then it asks, whatever runs). A policy that misses a program, or
// reads its words otherwise than bash, fails here, whichever construct
// hid it.

// parityPolicy is the configuration of the review that found the
// bypasses (issue 25): rules of every kind, default ask.
func parityPolicy(t testing.TB) *Policy {
	return pol(t, Config{Default: Ask, ReadOnly: true, Home: jailHome},
		"allow:npm test", "allow:go test *",
		"deny:rm -rf *", "deny:rm *", "deny:curl *", "deny:git push *", "deny:sudo *")
}

// jailHome is HOME in the jail, and the policy's home.
const jailHome = "/home/u"

// execCall is one execve that succeeded.
type execCall struct {
	path string
	argv []string
}

// event is an execve that succeeded or a fork, in the order strace saw
// them begin.
type event struct {
	pid   int
	exec  *execCall // nil for a fork
	child int       // a fork's new process
}

// jailTimeout bounds one command's run: a command that loops is stopped,
// and what it executed until then is still checked. Not a timing
// assertion.
const jailTimeout = time.Second

// jailer runs commands in the jail; the zero value is not usable.
type jailer struct {
	bwrap, strace string
}

// theJailer is found once per test binary: bubblewrap and strace, and a
// jail that starts here.
var theJailer = sync.OnceValues(func() (*jailer, error) {
	j := &jailer{}
	var err error
	if j.bwrap, err = exec.LookPath("bwrap"); err != nil {
		return nil, fmt.Errorf("the differential test needs bubblewrap (bwrap): %w", err)
	}
	if j.strace, err = exec.LookPath("strace"); err != nil {
		return nil, fmt.Errorf("the differential test needs strace: %w", err)
	}
	evs, err := j.run(context.Background(), "/bin/true")
	if err != nil || len(evs) != 1 || evs[0].exec == nil {
		return nil, fmt.Errorf("a bubblewrap jail with strace does not run here: %v (%d events)", err, len(evs))
	}
	return j, nil
})

// newJailer returns the jailer, or skips the test saying why there is none.
func newJailer(t testing.TB) *jailer {
	t.Helper()
	j, err := theJailer()
	if err != nil {
		t.Skip("SKIP-REASON: " + err.Error())
	}
	return j
}

// run runs cmd with bash -c in a new throwaway directory holding a few
// files, in a jail: the root read-only, tmpfs on /tmp, /home, /root and
// /run, no network, its own pid namespace. It returns the programs
// executed after bash itself. strace writes to a pipe the command cannot
// reach: sh closes the descriptor before it runs bash.
func (j *jailer) run(ctx context.Context, cmd string) ([]event, error) {
	// A loaded machine may not even start bash within the timeout: then
	// the run is tried again with twice the time, not judged.
	var err error
	for timeout := jailTimeout; timeout <= 16*jailTimeout; timeout *= 2 {
		var evs []event
		if evs, err = j.runFor(ctx, cmd, timeout); !errors.Is(err, errNoBash) {
			return evs, err
		}
	}
	return nil, err
}

// errNoBash: the trace does not show bash starting.
var errNoBash = errors.New("the trace does not show bash starting")

// runFor is run with a timeout.
func (j *jailer) runFor(ctx context.Context, cmd string, timeout time.Duration) ([]event, error) {
	dir, err := os.MkdirTemp("", "dsh-parity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, f := range []string{"v", "f.txt", "x"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("a\nb\n"), 0o644); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	c := exec.CommandContext(ctx, j.bwrap,
		"--ro-bind", "/", "/", "--tmpfs", "/tmp", "--tmpfs", "/home", "--tmpfs", "/root", "--tmpfs", "/run",
		"--dev", "/dev", "--proc", "/proc", "--dir", jailHome, "--bind", dir, "/tmp/w", "--chdir", "/tmp/w",
		"--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session",
		"--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", jailHome,
		"--setenv", "SHELL", "/bin/sh", "--setenv", "LANG", "C.UTF-8",
		"--", j.strace, "-f", "--seccomp-bpf", "-qq", "-v", "-e", "abbrev=none", "-xx", "-s", "1048576",
		"-e", "trace=execve,execveat,clone,clone3,fork,vfork", "-o", "/dev/fd/3",
		"--", "/bin/sh", "-c", `exec 3>&-; exec bash -c "$1"`, "sh", cmd)
	c.ExtraFiles = []*os.File{w}
	c.WaitDelay = time.Second
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := out.ReadFrom(r)
		done <- err
	}()
	err = c.Start()
	w.Close()
	if err != nil {
		return nil, err
	}
	_ = c.Wait() // the command's own status does not matter
	if err := <-done; err != nil {
		return nil, err
	}
	return afterBash(parseTrace(out.String()), cmd)
}

// afterBash drops the events up to bash itself, which the jail made.
func afterBash(evs []event, cmd string) ([]event, error) {
	for i, e := range evs {
		if c := e.exec; c != nil && len(c.argv) == 3 && c.argv[0] == "bash" && c.argv[1] == "-c" && c.argv[2] == cmd {
			return evs[i+1:], nil
		}
	}
	return nil, errNoBash
}

// The lines of strace's trace (-xx: every string in hex, so no quote or
// comma inside one). With -f a call may be split in two lines, `…
// <unfinished ...>` and `<... NAME resumed>… = RESULT`; it counts where it
// began.
var (
	traceExec   = regexp.MustCompile(`^(\d+)\s+execve(?:at)?\((?:\d+, )?"((?:\\x[0-9a-f]{2})*)", \[((?:"(?:\\x[0-9a-f]{2})*"(?:, )?)*)\]`)
	traceFork   = regexp.MustCompile(`^(\d+)\s+(?:clone3?|v?fork)\(`)
	traceResume = regexp.MustCompile(`^(\d+)\s+<\.\.\. \w+ resumed>`)
	traceResult = regexp.MustCompile(`\) += (-?\d+)(?: \w+ \(.*\))?$`)
	traceHex    = regexp.MustCompile(`"((?:\\x[0-9a-f]{2})*)"`)
)

// parseTrace returns the trace's successful execs and forks.
func parseTrace(s string) []event {
	var out []event
	pending := map[string]int{} // pid → index in out of its unfinished call
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\n")
		if m := traceResume.FindStringSubmatch(line); m != nil {
			if i, ok := pending[m[1]]; ok {
				finish(&out[i], line)
				delete(pending, m[1])
			}
			continue
		}
		e, ok := traceEvent(line)
		if !ok {
			continue
		}
		out = append(out, e)
		if strings.HasSuffix(line, "<unfinished ...>") {
			pending[strconv.Itoa(-e.pid)] = len(out) - 1
		} else {
			finish(&out[len(out)-1], line)
		}
	}
	kept := out[:0]
	for _, e := range out {
		if e.pid > 0 {
			kept = append(kept, e)
		}
	}
	return kept
}

// traceEvent reads the beginning of an execve or a fork.
func traceEvent(line string) (event, bool) {
	if m := traceExec.FindStringSubmatch(line); m != nil {
		pid, _ := strconv.Atoi(m[1])
		c := &execCall{path: unhex(m[2])}
		for _, a := range traceHex.FindAllStringSubmatch(m[3], -1) {
			c.argv = append(c.argv, unhex(a[1]))
		}
		return event{pid: -pid, exec: c}, true
	}
	if m := traceFork.FindStringSubmatch(line); m != nil {
		pid, _ := strconv.Atoi(m[1])
		return event{pid: -pid}, true
	}
	return event{}, false
}

// finish reads a call's result: an exec that failed, or a fork that made
// no process, stays marked (pid < 0) and is dropped.
func finish(e *event, line string) {
	m := traceResult.FindStringSubmatch(line)
	if m == nil {
		return
	}
	r, _ := strconv.Atoi(m[1])
	switch {
	case e.exec != nil && r == 0:
		e.pid = -e.pid
	case e.exec == nil && r > 0:
		e.pid, e.child = -e.pid, r
	}
}

// unhex decodes strace's \xNN string.
func unhex(s string) string {
	b := make([]byte, 0, len(s)/4)
	for i := 0; i+4 <= len(s); i += 4 {
		v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
		b = append(b, byte(v))
	}
	return string(b)
}

// parity reports the programs bash executed for cmd that the policy did
// not see, nil when it saw them all or found an opaque part. A program the
// policy saw as an ordinary command (not a wrapper or a shell given a
// script) may run what it likes, in its process and in those it forks:
// a script file, npm's node, egrep's grep are their own business. A
// program whose job is to run another (runners) never is.
func parity(p *Policy, cmd string, evs []event) error {
	tr := &trace{}
	r := p.check(cmd, tr)
	return judge(r, tr, evs)
}

// judge is parity's verdict on what the policy decided and saw.
func judge(r Result, tr *trace, evs []event) error {
	for _, pt := range r.Parts {
		if pt.Opaque != "" {
			return nil
		}
	}
	var missed []string
	a := ancestry{forks: map[int][2]int{}}
	last := map[int][]string{} // each process's last program's arguments
	for i, e := range evs {
		switch {
		case e.exec == nil:
			a.forks[e.child] = [2]int{e.pid, i}
		case a.exempt(e.pid, i):
			a.set(e.pid, i, true)
		case reexec(last[e.pid], e.exec.argv):
			// A program running its real binary with the same arguments
			// (valgrind's script runs valgrind.bin): as it was.
		default:
			seen, ordinary := tr.covers(*e.exec)
			if !seen {
				missed = append(missed, fmt.Sprintf("%q", e.exec.argv))
			}
			a.set(e.pid, i, ordinary && !isRunner(e.exec.path))
		}
		if e.exec != nil {
			last[e.pid] = e.exec.argv
		}
	}
	if len(missed) == 0 {
		return nil
	}
	return fmt.Errorf("bash ran %s, which the policy did not see (decision %s)\n%s",
		strings.Join(missed, ", "), r.Decision, dump(r))
}

// reexec reports whether argv repeats the arguments of the process's
// previous program.
func reexec(prev, argv []string) bool {
	return len(prev) > 1 && len(argv) == len(prev) && slices.Equal(prev[1:], argv[1:])
}

// runners are programs whose documented job is to run another: what they
// run must be a part the policy saw, even before the policy knows them.
var runners = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`time timeout nice nohup stdbuf env setsid ionice taskset chrt flock
		sudo doas su runuser chroot unshare nsenter script watch xargs find busybox toybox
		setarch linux32 linux64 i386 x86_64 uname26 prlimit unbuffer sg newgrp systemd-run
		parallel sem setpriv capsh strace ltrace choom ld.so valgrind gdb lldb perf tmux screen firejail
		bwrap eatmydata catchsegv nocache xvfb-run dbus-run-session ssh-agent trickle torsocks
		proxychains proxychains4 softlimit cgexec numactl fakeroot pkexec sshpass setuidgid envdir`) {
		runners[n] = true
	}
}

// isRunner reports whether the program at path runs another for a job.
func isRunner(path string) bool {
	b := base(path)
	return runners[b] || (strings.HasPrefix(b, "ld-") && strings.Contains(b, ".so"))
}

// ancestry knows, at each event, whether a process runs a program whose
// children are its own business (exempt).
type ancestry struct {
	forks   map[int][2]int          // child → parent and the event that made it
	changes map[int][]ancestryState // pid → exempt from each exec on
}

type ancestryState struct {
	at     int
	exempt bool
}

func (a *ancestry) set(pid, at int, exempt bool) {
	if a.changes == nil {
		a.changes = map[int][]ancestryState{}
	}
	a.changes[pid] = append(a.changes[pid], ancestryState{at, exempt})
}

// exempt reports whether pid runs an exempt program at event at: its own
// last exec before, else its parent's when it forked.
func (a *ancestry) exempt(pid, at int) bool {
	for depth := 0; depth < 1000; depth++ {
		ch := a.changes[pid]
		for k := len(ch) - 1; k >= 0; k-- {
			if ch[k].at < at {
				return ch[k].exempt
			}
		}
		f, ok := a.forks[pid]
		if !ok {
			return false
		}
		pid, at = f[0], f[1]
	}
	return false
}

// covers reports whether the policy saw the program c, and whether as an
// ordinary command: a command of some level with these words (a dynamic
// word stands for one word, or for any number when it may be several), or
// a shell running a script it read.
func (tr *trace) covers(c execCall) (seen, ordinary bool) {
	for _, lv := range tr.levels {
		if argvMatches(lv.args, c) {
			seen = true
			ordinary = ordinary || lv.ordinary
		}
	}
	if seen || len(c.argv) < 3 || !isBashLike(base(c.path)) {
		return seen, ordinary
	}
	for i, a := range c.argv[1 : len(c.argv)-1] {
		if strings.HasPrefix(a, "-") && strings.Contains(a, "c") && slices.Contains(tr.scripts, c.argv[i+2]) {
			return true, false
		}
	}
	return false, false
}

// argvMatches matches a level's words with an exec: the name by basename
// (bash passes the word as written, exec -a another), the rest word by
// word.
func argvMatches(args []arg, c execCall) bool {
	if len(args) == 0 || len(c.argv) == 0 {
		return false
	}
	if !args[0].dyn && base(args[0].text) != base(c.path) && args[0].text != c.argv[0] {
		return false
	}
	return wordsMatch(args[1:], c.argv[1:])
}

func wordsMatch(args []arg, argv []string) bool {
	seen := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i == len(args) {
			return j == len(argv)
		}
		k := [2]int{i, j}
		if v, ok := seen[k]; ok {
			return v
		}
		seen[k] = false
		a := args[i]
		ok := false
		switch {
		case a.multi:
			for n := j; n <= len(argv) && !ok; n++ {
				ok = match(i+1, n)
			}
		case a.dyn:
			ok = j < len(argv) && match(i+1, j+1)
		default:
			ok = j < len(argv) && argv[j] == a.text && match(i+1, j+1)
		}
		seen[k] = ok
		return ok
	}
	return match(0, 0)
}

// checkParity runs each command in the jail and checks parity, a few at a
// time; it fails t once per command that breaks it.
func checkParity(t *testing.T, j *jailer, cmds []string) {
	t.Helper()
	p := parityPolicy(t)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	var mu sync.Mutex
	for _, cmd := range cmds {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			evs, err := j.run(t.Context(), cmd)
			if err == nil {
				err = parity(p, cmd, evs)
			}
			if err != nil {
				mu.Lock()
				t.Errorf("parity of %q: %v", cmd, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestParityCatchesAMissedPart is the harness's own test: the policy's
// view of each command is mutated to drop the part that runs rm, as a bug
// of the policy would; the harness must report the rm bash ran anyway,
// and nothing without the mutation.
func TestParityCatchesAMissedPart(t *testing.T) {
	j := newJailer(t)
	p := parityPolicy(t)
	for _, cmd := range []string{
		"ls; rm -f v", "bash -c 'rm -f v'", `find . -name v -exec rm -f {} \;`, "echo $(rm -f v)",
		"f() { rm -f v; }; f", "timeout 5 env rm -f v", "cat <<EOF\n$(rm -f v)\nEOF",
	} {
		evs, err := j.run(t.Context(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		tr := &trace{}
		r := p.check(cmd, tr)
		if err := judge(r, tr, evs); err != nil {
			t.Errorf("%q without a mutation: %v", cmd, err)
		}
		kept := tr.levels[:0]
		for _, lv := range tr.levels {
			if lv.args[0].text != "rm" {
				kept = append(kept, lv)
			}
		}
		tr.levels = kept
		r.Parts = slices.DeleteFunc(r.Parts, func(pt Part) bool { return len(pt.Words) > 0 && pt.Words[0] == "rm" })
		if err := judge(r, tr, evs); err == nil || !strings.Contains(err.Error(), `["rm" "-f"`) {
			t.Errorf("%q: the harness missed the dropped rm: %v", cmd, err)
		}
	}
}
