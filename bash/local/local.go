// Package local is the local executor: it runs `bash -c` on this machine,
// implementing [bash.Executor] as docs/spec.md §2 describes.
//
// Each command leads a new session and process group (setsid): it has no
// controlling terminal, so nothing can prompt on /dev/tty, and the whole
// group can be signalled at once. Its stdin is /dev/null unless the spec
// carries bytes; stdout and stderr are separate pipes, each collected by a
// [capture.Collector] that keeps the tail in memory and spills the stream to
// a private file. The collectors keep the first keepHeadBytes of the
// stream too, out of the same maxOutputBytes (docs/spec.md §3.4a): a
// foreground result shows it, and a background process's read that
// missed output shows what it missed of the head (§3.5). If this process dies, the kernel kills the group leader
// (parent-death signal).
//
// A background command may run under a terminal instead (terminal.go,
// docs/spec.md §2.7): a pty's slave is its stdin, stdout, stderr and
// controlling terminal, the master is read into the stdout collector and
// written by [bash.TerminalProcess.WriteInput], and TERM is
// xterm-256color.
//
// The environment is the server's minus credentials (by name, by value, by
// the configured scrub patterns, unless passed through), then NO_COLOR=1,
// TERM=dumb, PAGER=cat, GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0, then the
// configured env.set, then the spec's env, then DSH_RUN_ID (which nothing
// overrides). Apart from the run id it is computed once, when the
// executor is made: the executor never changes, nor re-reads, its own
// process environment.
//
// Containment (issue 7): a command's processes are its process group plus
// whatever left it. Where a writable cgroup v2 hierarchy exists (found
// from /proc/self/mountinfo, so /sys/fs/cgroup/unified beside v1
// controllers works too), each command starts inside a cgroup of its own
// (clone3 CLONE_INTO_CGROUP: inside before it runs anything), under a
// cgroup "dsh-<pidns>-<pid>-<start>-<random>" the executor makes in its
// own. Else, or with containment: marker, members are found from /proc:
// the group, every process whose environment carries the command's
// DSH_RUN_ID, and their descendants by the parent chain. The fallback
// cannot catch a process that dropped the variable from its environment
// (env -i, a daemon that resets it) once its parent has exited (a double
// fork, or `setsid env -i server &` whose shell then ends), nor one whose
// /proc/<pid>/environ this user cannot read (it changed its uid). A cgroup
// holds a command's processes, and the cgroups it makes below its own,
// unless one with the privilege moves itself out of that subtree.
// With containment: group (and on macOS, where auto means it: no cgroups,
// no way to read another process's environment), members are the group and
// the descendants by the parent chain, from the process table (/proc on
// Linux, which it scans as the marker does but reads no environment;
// kern.proc on macOS). A member once found stays one (pid and start time)
// when its parent dies, and before each signal every member is stopped
// (SIGSTOP until a look finds nothing new) and resumed after it, so none
// forks or orphans an unfound child meanwhile. It cannot catch a process
// that left the group and whose parent exited before a look (at a kill, or
// when the shell exits): `setsid server &` in a command that then ends, or
// a daemon. [Executor.Containment] (and `dsh doctor`) says which is in use.
//
// Platforms: Linux, and macOS (docs/spec.md §8a: no parent-death signal,
// containment group only, no start-up sweep of processes, no sandbox).
//
// Killing is SIGTERM to every member, then SIGKILL after graceMs unless
// none is left (cgroup.kill in a cgroup, so nothing forks in between;
// without one, members that appear while the kill runs get the same
// signal as they are found); the run is done only when no member runs, or
// the SIGKILL's grace ran out, and its cgroups are then removed. A
// command's processes live as long as the command: when the leader exits
// by itself, what it left running (`sleep 60 &`, `setsid server &`, a
// daemon) gets the same kill sequence, for a foreground call and a
// background task alike. With keepDetached, what a foreground command
// leaves when it exits by itself stays until the executor closes (a
// timeout or a kill still ends it). Once the leader has exited, collection
// drains the pipes until EOF or graceMs later (or until a pending SIGKILL,
// if later), so a process that holds a pipe open cannot hold a call open
// beyond timeout plus grace.
//
// If this process dies, the kernel kills each command's shell
// (parent-death signal); what the shells started is killed by the next
// executor's start-up sweep: New kills every process carrying a run id of
// a dsh process that no longer runs (its owner stamp, pid namespace, pid
// and start time, heads the id: see internal/procfs), removes the cgroups
// such processes left next to its own, and logs what it did. What a dsh
// of another pid namespace made is never judged: its pid means nothing
// here.
//
// Sandbox (issue 14, docs/spec.md §11): with local.sandbox on, every
// command is started inside it (package
// [github.com/dsh-go/dsh/bash/local/sandbox]) unless its spec says
// Unsandboxed (the user consented). A session's sandboxed commands share a
// scope (their /tmp, network namespace and spill directory), made at its
// first sandboxed command; when the session (the spec's Owner) ends, its
// runs are killed and awaited and the scope goes. The kill sequence's
// SIGTERM spares bwrap, and reaches the sandbox's processes that appear
// after it was sent; the exit status is the shell's, as the sandbox's
// starter reports it.
//
// Decisions where the spec is silent:
//
//   - A configured spillDir is the base under which the executor makes its
//     private directory ("dsh-out-<pidns>-<pid>-<start>-<random>", mode
//     0700), as the OS temp dir is by default. New refuses a base that
//     another user could write without the sticky bit, or that belongs
//     (or a directory above it does) to another user than this one or
//     root ([capture.CheckBase]). Close removes only that
//     private directory; New sweeps the base for private directories of
//     processes of its pid namespace that no longer run (see
//     [capture.Sweep], which leaves directories named before the pid
//     namespace was in the name). With WithKeptSpill (dsh run) Close leaves
//     the private directory and New does not sweep: the caller sweeps its
//     own base by age.
//   - Close also kills foreground runs still in progress; their Result is
//     marked Aborted.
//   - Every command's spill files share one [capture.Budget] of
//     maxSpillTotalBytes; [Executor.RemoveSpills] deletes a file and gives
//     its bytes back (the bash tool deletes through it).
//   - A spec with a non-positive Timeout (one that did not go through
//     Resolve) is refused by RunOrYield.
//   - The shell is looked up in PATH on every spawn, so a missing shell is
//     an error of that call, not of construction.
//   - Commands longer than 64 KiB are handed to bash on fd 3 and run with
//     eval, because Linux refuses a single argument of 128 KiB.
//   - What keepDetached keeps belongs to the executor, not to a session: it
//     is killed when the executor closes (dsh exits) and, should dsh die,
//     by the next start-up sweep. A service meant to outlive dsh is started
//     outside it (systemd-run, tmux).
//   - The start-up sweep sends SIGKILL at once: the owner of those processes
//     is gone and nobody waits for their clean exit. It begins
//     StartUpDelay after New (or when Started, Swept or Close needs it),
//     and no command waits for it: it kills only what no live dsh owns
//     (issue 31).
//   - As root with containment auto, cloning into a cgroup and a cgroup
//     namespace is assumed, not probed at start: a failed spawn into a
//     cgroup runs the probe and the command is spawned once more
//     (containment.confirm, docs/spec.md §8).
//   - A kept private spill directory (WithKeptSpill) is removed at Close
//     when it holds no spill file: dsh run leaves nothing when it spilled
//     nothing.
//   - containment: cgroup makes New fail where no cgroup can be made;
//     auto falls back to the marker and says why. On macOS cgroup and
//     marker make New fail; auto is group.
//   - Group mode scans /proc on Linux (the parent chain needs the whole
//     table) but reads no environment, so it is the code macOS runs.
//   - RunOrYield (docs/spec.md §12): a yield that meets the command's exit
//     is decided under the run's lock, so the caller gets either the
//     result or a live process, never a process that had already ended
//     unseen. A yielded command is a background one from then on: what it
//     leaves ends with it (keepDetached no longer applies), and Close
//     kills it. Its collectors keep the head they had, so between two
//     reads it keeps a tail of maxOutputBytes − keepHeadBytes per stream.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/internal/num"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/bash/internal/execcore"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/guard"
)

// spillDir is where the collectors' spill files go; *capture.SpillDir in
// production, a failing one in tests.
type spillDir interface {
	capture.Spiller
	Remove() error
}

// Name prefixes the executor's errors.
const Name = "bash-local"

// Executor is the local executor. Make one with New; it is safe for
// concurrent use.
type Executor struct {
	cwd            string
	timeoutMs      int64
	maxTimeoutMs   int64
	maxOutputBytes int64
	keepHeadBytes  int64 // of maxOutputBytes
	maxSpillBytes  int64
	spillBudget    *capture.Budget // maxSpillTotalBytes, over every command's files
	grace          time.Duration
	shell          string
	env            []string
	ttyEnv         []string // env for a command under a terminal: its TERM
	spill          spillDir
	launcher       launcher
	keepDetached   bool
	log            *slog.Logger
	// contain, limits and swept are set by the start-up (the sweep and the
	// cgroup probe), which may finish after New returned: read them after
	// ready, with started.
	contain   *containment
	limits    atomic.Pointer[limits]
	limitsCfg config.Limits
	// What an earlier dsh that died left running is swept once
	// StartUpDelay has passed (or Started, Swept, Close needs it), beside
	// the commands, never before one (a ms or more: every process's
	// environment is read; it kills only what no live dsh owns). Then
	// too the sandbox makes a session's network ahead (Prepare).
	swept      int           // what the sweep killed
	sweptDone  chan struct{} // closed once the sweep is done
	beginSweep func()        // begins the sweep (once)
	idleAt     *time.Timer   // runs idle
	ready      chan struct{}
	startErr   error  // of a start-up after New returned (none is known)
	begin      func() // begins a start-up not begun yet (once)
	beginAt    *time.Timer
	// sandbox confines commands; nil when its mode is off. commonSpill
	// holds the spill files of sandboxed commands that have no owner.
	sandbox     *sandbox.Sandbox
	unavailable error // why mode auto runs commands unsandboxed
	commonSpill spillDir
	// keepSpill: the private spill directory outlives the executor
	// (WithKeptSpill); keptSpill holds the sandboxed commands' files then.
	keepSpill bool
	keptSpill *capture.SpillDir
	noSpare   bool // WithoutSpareNetwork

	mu     sync.Mutex
	closed bool
	runs   map[*run]struct{}
	scopes map[bash.Owner]*scopeEntry
	kept   []container // what foreground commands left running, with keepDetached
	wg     sync.WaitGroup
}

var (
	_ bash.Executor     = (*Executor)(nil)
	_ bash.SpillRemover = (*Executor)(nil)
)

// Option configures an executor beyond its config.
type Option func(*options)

type options struct {
	log        *slog.Logger
	hide       []string
	config     string
	keepSpill  bool
	startDelay time.Duration // StartUpDelay unless a test sets it
	noSpare    bool
	net        NetOptions
}

// NetOptions are what a sandbox whose network is a map (docs/spec.md
// §11.1) needs beyond its config: how long a question about a host
// waits, what decides when nobody can be asked ("allow" or "deny"; the
// permissions section's askTimeoutMs and askFallback), and the audit of
// each connection, with its session's id.
type NetOptions struct {
	AskTimeout  time.Duration
	AskFallback string
	Audit       func(owner string, r gateway.Record)
}

// WithNetwork sets the NetOptions.
func WithNetwork(n NetOptions) Option {
	return func(o *options) { o.net = n }
}

// WithKeptSpill keeps the spill files after the executor closes, for a
// caller that printed their paths and exits (dsh run): Close leaves the
// private spill directory, New does not sweep the base for directories of
// exited executors (the caller sweeps it by age), and sandboxed commands
// spill into a directory of the private one that no session's end
// removes. The base should be the caller's own: another executor's sweep
// of the same base removes the directory once its process is gone.
func WithKeptSpill() Option {
	return func(o *options) { o.keepSpill = true }
}

// WithHidden hides dsh's own files from sandboxed commands besides the
// configured hide entries (dsh serve's token file and Unix socket, the
// audit log): they read as empty.
func WithHidden(paths ...string) Option {
	return func(o *options) { o.hide = append(o.hide, paths...) }
}

// WithConfigFile names dsh's config file: its directory is hidden from
// sandboxed commands, the file itself shown read-only (see
// [sandbox.Options] for when the directory stays visible).
func WithConfigFile(path string) Option {
	return func(o *options) { o.config = path }
}

// WithoutSpareNetwork makes no session network ahead (see
// [sandbox.Sandbox.Prepare]), for an executor that runs one command and
// exits (dsh run), or commands of no session (the hooks'): nobody would
// take it.
func WithoutSpareNetwork() Option {
	return func(o *options) { o.noSpare = true }
}

// withStartDelay sets how long New waits to begin a start-up that cannot
// fail (StartUpDelay), for tests.
func withStartDelay(d time.Duration) Option {
	return func(o *options) { o.startDelay = d }
}

// WithLogger sends what the executor logs (what its start-up sweeps did,
// spill files withheld) to l. Without it, or with nil, the executor logs
// to slog.Default() as it is when New is called.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// New validates cfg, applies its defaults and returns an executor. It also
// kills what dsh processes that died left running, and sweeps the spill
// base directory for private directories left by executors whose process
// no longer runs. With containment auto and no sandbox, where none of
// that can fail, it does so after it returned: once [StartUpDelay] has
// passed, or at once when something needs it (a command, Containment,
// Limits, Swept, Started, Close), which then waits for it. The kill of
// what dead dsh processes left always waits so, and no command waits for
// it (Swept, Started and Close do).
func New(cfg config.Local, opts ...Option) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		// The key relative to the section, after the executor's name
		// (docs/spec.md §2.1): "bash-local: graceMs must be …".
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	cfg = cfg.WithDefaults()
	o := options{startDelay: StartUpDelay}
	for _, opt := range opts {
		opt(&o)
	}
	log := o.log
	if log == nil {
		log = slog.Default()
	}
	// A spill base another user could write is refused before anything
	// is made (docs/spec.md §2.5).
	var unsafe *capture.UnsafeBaseError
	if _, err := capture.CheckBase(cfg.SpillDir); errors.As(err, &unsafe) {
		return nil, fmt.Errorf("%s: spillDir: %w", Name, err)
	}
	e := fromConfig(cfg, log)
	e.keepSpill, e.noSpare = o.keepSpill, o.noSpare
	e.beginSweep = sync.OnceFunc(func() {
		go func() {
			e.swept = sweepLeftovers(e.log)
			close(e.sweptDone)
		}()
	})
	if cfg.Sandbox.On() || (cfg.Containment != "" && cfg.Containment != config.ContainAuto) {
		// Either may fail: New says so. (Ready at once: nothing else
		// has e yet, and a failing startUp may Close it.)
		e.begin = func() {}
		close(e.ready)
		if err := e.startUp(cfg, o); err != nil {
			return nil, err // the sweep has not begun, or Close awaited it
		}
		e.idleAt = time.AfterFunc(o.startDelay, e.idle)
		return e, nil
	}
	// Nothing left can fail: the sweep and the probe wait until the
	// caller's own start is over (dsh mcp's handshake: on two cores, a
	// start-up beside it slows it by a millisecond), or until something
	// needs them.
	e.begin = sync.OnceFunc(func() {
		go func() {
			e.startErr = e.startUp(cfg, o)
			close(e.ready)
		}()
	})
	e.beginAt = time.AfterFunc(o.startDelay, e.begin)
	e.idleAt = time.AfterFunc(o.startDelay, e.idle)
	return e, nil
}

// idle is what waits until StartUpDelay after New: the sweep, and the
// first session's network made ahead.
func (e *Executor) idle() {
	e.beginSweep()
	if e.started(); e.sandbox != nil && !e.noSpare {
		e.sandbox.Prepare()
	}
}

// StartUpDelay is how long after New an executor whose start-up cannot
// fail begins it (the sweep of what dead dsh processes left, the cgroup
// probe: a few ms of work, which must be done before the first command)
// unless something needs it sooner. It covers dsh mcp's handshake on a
// slow machine with room to spare, and is short beside the time a model
// takes to send the first command.
const StartUpDelay = 50 * time.Millisecond

// startUp sweeps what dsh processes that died left, sets the containment
// and the sandbox up, and sweeps the spill base.
func (e *Executor) startUp(cfg config.Local, o options) error {
	contain, err := newContainment(cfg.Containment)
	if err != nil {
		return err
	}
	e.contain, e.limitsCfg = contain, cfg.Limits
	e.limits.Store(newLimits(cfg.Limits, contain.mode, contain.base))
	if !o.keepSpill {
		sweepSpillDirs(e.log, cfg.SpillDir)
	}
	if e.sandbox, err = newSandbox(cfg, e, o); err != nil {
		e.contain.close()
		_ = e.spill.Remove()
		return err
	}
	if e.sandbox != nil {
		e.launcher = sandboxLauncher{e.sandbox}
		e.commonSpill = capture.NewSpillDir(e.sandboxDir())
		if err := e.makeKeptSpill(); err != nil {
			_ = e.Close()
			return err
		}
	}
	return nil
}

// started begins the start-up if it has not begun, and waits until it
// is done.
func (e *Executor) started() {
	e.begin()
	<-e.ready
}

// Started waits until the executor's start-up (the sweep of what dead dsh
// processes left, the containment and the sandbox, a session's network
// made ahead) is done, which may go on after New returned. A command
// waits for all of it but the sweep and the network made ahead. A
// program that writes to a terminal first (a prompt) waits here, so that
// what the start-up logs comes before it.
func (e *Executor) Started() {
	e.idle()
	<-e.sweptDone
	if e.sandbox != nil {
		e.sandbox.Prepared()
	}
}

// keptSpillDirName is the directory of the private spill directory where
// a kept executor's sandboxed commands spill.
const keptSpillDirName = "kept"

// makeKeptSpill makes the directory where a kept executor's sandboxed
// commands spill: a scope's own goes when its session ends.
func (e *Executor) makeKeptSpill() error {
	if !e.keepSpill {
		return nil
	}
	priv, err := ensure(e.spill)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	dir := filepath.Join(priv, keptSpillDirName)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	e.keptSpill = capture.SpillDirAt(dir)
	e.commonSpill = e.keptSpill
	return nil
}

// fromConfig is the executor of cfg, whose defaults are applied.
func fromConfig(cfg config.Local, log *slog.Logger) *Executor {
	shell := cfg.Shell
	if shell == "" {
		shell = "bash"
	}
	environ := guard.Environ()
	return &Executor{
		cwd:            cfg.Cwd,
		timeoutMs:      num.CeilMillis(cfg.Timeout),
		maxTimeoutMs:   num.CeilMillis(cfg.MaxTimeout),
		maxOutputBytes: cfg.MaxOutputBytes,
		keepHeadBytes:  *cfg.KeepHeadBytes,
		maxSpillBytes:  cfg.MaxSpillBytes,
		spillBudget:    capture.NewBudget(cfg.MaxSpillTotalBytes),
		grace:          cfg.Grace,
		shell:          shell,
		env:            baseEnv(environ, cfg.Env),
		ttyEnv:         terminalEnv(environ, cfg.Env),
		spill:          capture.NewSpillDir(cfg.SpillDir),
		launcher:       shellLauncher{},
		keepDetached:   cfg.KeepDetached,
		log:            log,
		runs:           make(map[*run]struct{}),
		scopes:         make(map[bash.Owner]*scopeEntry),
		ready:          make(chan struct{}),
		sweptDone:      make(chan struct{}),
	}
}

// sweepLeftovers kills what dsh processes that died left running, logs
// it, and returns how many processes and cgroups it killed.
func sweepLeftovers(log *slog.Logger) int {
	cgParent, _ := ownCgroup()
	left, err := sweep(cgParent, RunIDEnv)
	if err != nil {
		log.Warn("bash-local: sweeping what exited dsh processes left", "err", err)
	}
	if len(left.Pids) > 0 || len(left.Cgroups) > 0 {
		log.Warn("bash-local: killed processes left by a dsh that no longer runs", "pids", left.Pids, "cgroups", left.Cgroups)
	}
	return len(left.Pids) + len(left.Cgroups)
}

// Swept is how many processes and cgroups that a dsh which no longer runs
// left behind this executor killed when it started (the metrics).
func (e *Executor) Swept() int { e.Started(); return e.swept }

// SpillBytes is the size of the files under this executor's private
// spill directory now (the metrics): the spill files of every command,
// the sandboxed ones' included (their directories are inside it). A walk,
// cheap enough for each scrape: the files are those of live sessions.
func (e *Executor) SpillBytes() int64 {
	d, ok := e.spill.(*capture.SpillDir) // a test's failing one has no files
	if !ok || d.Path() == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(d.Path(), func(_ string, de fs.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			if fi, err := de.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// RemoveSpills deletes spill files the executor reported
// ([bash.SpillRemover]), and stops counting them against
// maxSpillTotalBytes. A file already gone is no error.
func (e *Executor) RemoveSpills(paths ...string) {
	e.spillBudget.Forget(paths...)
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			e.log.Warn("bash-local: removing a spill file", "err", err)
		}
	}
}

// sweepSpillDirs removes the private spill directories that executors
// whose process no longer runs left under base, and logs it.
func sweepSpillDirs(log *slog.Logger, base string) {
	if removed, err := capture.Sweep(base); err != nil {
		log.Warn("bash-local: sweeping old spill directories", "err", err)
	} else if len(removed) > 0 {
		log.Info("bash-local: removed spill directories of exited processes", "dirs", removed)
	}
}

// Resolve applies the executor's defaults and caps to r.
func (e *Executor) Resolve(r bash.Request) (bash.Spec, error) {
	spec, err := execcore.Resolve(Name, r, e.cwd, e.timeoutMs, e.maxTimeoutMs)
	if err != nil {
		return bash.Spec{}, err
	}
	if spec.Workdir == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return bash.Spec{}, fmt.Errorf("%s: process working directory: %w", Name, err)
		}
		spec.Workdir = cwd
	}
	spec.Owner, spec.Unsandboxed, spec.Net = r.Owner, r.Unsandboxed, r.Net
	return spec, nil
}

// RunOrYield runs spec in the foreground until yield closes. See
// [bash.Executor].
func (e *Executor) RunOrYield(ctx context.Context, spec bash.Spec, yield <-chan struct{}) (bash.Result, bash.Process, error) {
	if spec.TTY != nil {
		return bash.Result{}, nil, errTerminalForeground
	}
	if err := execcore.CheckForeground(Name, ctx, spec); err != nil {
		return bash.Result{}, nil, err
	}
	r, err := e.spawn(spec, true)
	if err != nil {
		return bash.Result{}, nil, err
	}
	return r.Foreground(ctx, spec.Timeout, yield)
}

// Start runs spec in the background. See [bash.Executor]. ctx only
// bounds the spawn, which does not wait for anything. A spec with a TTY
// runs under a terminal (terminal.go) and its Process is a
// [bash.TerminalProcess].
func (e *Executor) Start(ctx context.Context, spec bash.Spec) (bash.Process, error) {
	if ctx.Err() != nil {
		return nil, execcore.AbortedBeforeSpawn(ctx)
	}
	if spec.TTY != nil {
		if err := checkTerminal(spec.TTY, spec.Stdin); err != nil {
			return nil, err
		}
	}
	r, err := e.spawn(spec, false)
	if err != nil {
		return nil, err
	}
	if r.term != nil {
		return terminalProcess{r.Process(), r.term}, nil
	}
	return r.Process(), nil
}

// Close kills every live process, kept ones included, waits until each has
// exited and removes the private spill directory and cgroup.
func (e *Executor) Close() error {
	if e.beginAt != nil {
		e.beginAt.Stop()
	}
	if e.idleAt != nil {
		e.idleAt.Stop()
	}
	e.started()
	e.beginSweep() // a close sweeps too, and waits for the sweep
	if <-e.sweptDone; e.contain == nil {
		return e.startErr // the start-up failed: it made nothing
	}
	e.mu.Lock()
	e.closed = true
	for r := range e.runs {
		r.Kill()
	}
	kept := e.kept
	e.kept = nil
	e.mu.Unlock()
	e.wg.Wait()
	var wg sync.WaitGroup
	for _, c := range kept {
		wg.Go(func() { killContainer(c, e.grace) })
	}
	wg.Wait()
	e.closeScopes()
	e.contain.close()
	if e.keepSpill {
		e.dropUnkept()
		return nil
	}
	return e.spill.Remove()
}

// dropUnkept removes, of a kept private spill directory, what holds no
// spill file: the sandbox's own files, and the directories left empty.
// A dsh run whose command spilled nothing leaves nothing behind, so the
// base does not fill with a directory per run for its age sweep to walk.
func (e *Executor) dropUnkept() {
	d, ok := e.spill.(*capture.SpillDir)
	if !ok || d.Path() == "" {
		return
	}
	_ = os.RemoveAll(filepath.Join(d.Path(), sandboxDirName))
	_ = os.Remove(filepath.Join(d.Path(), keptSpillDirName))
	_ = os.Remove(d.Path())
}

// Containment says how the executor finds a command's processes: a cgroup
// per command, or the marker (and why).
// It probes the executor's cgroup first where cgroup mode was assumed
// (see makeCgroupBase), so that it says what was found.
func (e *Executor) Containment() string {
	if e.started(); e.contain == nil {
		return "none: " + e.startErr.Error()
	}
	e.confirmContainment(e.contain.generation())
	return e.contain.describe()
}

// confirmContainment runs the cgroup probe where cgroup mode was only
// assumed (containment.confirm) and a spawn under generation seen failed,
// and sets the limits anew where it turned the containment to the marker.
// It reports whether the spawn should be tried again.
func (e *Executor) confirmContainment(seen uint64) bool {
	return e.contain.confirm(seen, func() {
		e.limits.Store(newLimits(e.limitsCfg, autoFallback, ""))
	})
}

// Limits says which limits keep commands from exhausting what dsh needs
// (docs/spec.md §2.6), for dsh doctor.
func (e *Executor) Limits() string {
	if e.started(); e.contain == nil {
		return "none: " + e.startErr.Error()
	}
	e.confirmContainment(e.contain.generation())
	return e.limits.Load().describe()
}

// keep holds a container whose processes a foreground command left running
// (keepDetached) until Close; containers found empty are released. Called
// by a run's supervise, which Close waits for.
func (e *Executor) keep(c container) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		killContainer(c, e.grace) // Close already took its list
		return
	}
	kept := e.kept
	e.kept = nil
	e.mu.Unlock()
	// Prune outside the lock: live() may scan /proc, release may wait.
	live := []container{c}
	for _, k := range kept {
		if k.live() {
			live = append(live, k)
		} else {
			k.release()
		}
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		for _, k := range live {
			killContainer(k, e.grace)
		}
		return
	}
	e.kept = append(e.kept, live...)
	e.mu.Unlock()
}

// killContainer runs the kill sequence on what a container still holds:
// SIGTERM, grace, SIGKILL, then releases it.
func killContainer(c container, grace time.Duration) {
	if c.live() {
		c.signal(syscall.SIGTERM)
		if !c.await(time.Now().Add(grace)) {
			c.signal(syscall.SIGKILL)
			c.await(time.Now().Add(grace))
		}
	}
	c.release()
}

var errClosed = errors.New(Name + ": executor closed")

// spawn checks the working directory and the shell, then launches the
// command as a run the executor tracks until it is done.
func (e *Executor) spawn(spec bash.Spec, foreground bool) (*run, error) {
	if e.started(); e.startErr != nil {
		return nil, e.startErr
	}
	if err := checkWorkdir(spec.Workdir); err != nil {
		return nil, err
	}
	shell, err := lookShell(e.shell)
	if err != nil {
		return nil, err
	}
	scope, spill, err := e.sandboxFor(spec)
	if err != nil {
		return nil, err
	}

	// Register before spawning, so Close waits for a spawn in flight;
	// spawn itself runs without the lock, so spawns do not queue.
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errClosed
	}
	e.wg.Add(1)
	e.mu.Unlock()
	// The session's new connections are this command's from before it
	// starts until it is gone (network by domain).
	leave := func() {}
	if scope != nil && !spec.Unsandboxed {
		leave = scope.sc.EnterNet(spec.Net)
	}
	r, err := e.launch(spec, shell, foreground, scope, spill)
	if err != nil {
		leave()
		e.wg.Done()
		return nil, err
	}
	e.mu.Lock()
	e.runs[r] = struct{}{}
	closed := e.closed
	if scope != nil {
		scope.runs[r] = struct{}{}
		closed = closed || scope.ended
	}
	e.mu.Unlock()
	go func() { e.forget(r, scope); leave() }()
	if closed {
		// Close, or the end of the run's session, came while this spawn
		// was in flight: the run is killed like every other, and its
		// caller sees that in its result.
		r.Kill()
	}
	return r, nil
}

// launch runs a command (launchOnce). Where cgroup containment was
// assumed rather than probed, a failed spawn is the probe's cue: the
// probe runs, and the command is launched once more, as the containment
// now is (nothing of it ran: the spawn failed).
func (e *Executor) launch(spec bash.Spec, shell string, foreground bool, scope *scopeEntry, spill spillDir) (*run, error) {
	gen := e.contain.generation()
	r, err := e.launchOnce(spec, shell, foreground, scope, spill)
	if errors.As(err, new(cgroupSpawnError)) && e.confirmContainment(gen) {
		r, err = e.launchOnce(spec, shell, foreground, scope, spill)
	}
	return r, err
}

// cgroupSpawnError is the failure of a spawn into a command's cgroup: the
// cue for the probe. It reads as the error it wraps.
type cgroupSpawnError struct{ err error }

func (e cgroupSpawnError) Error() string { return e.err.Error() }
func (e cgroupSpawnError) Unwrap() error { return e.err }

// launchOnce runs a command in phases: open the pipes, make its
// container, spawn the shell (in the sandbox, in scope, unless it runs
// unsandboxed), then start the run's goroutines.
func (e *Executor) launchOnce(spec bash.Spec, shell string, foreground bool, scope *scopeEntry, spill spillDir) (*run, error) {
	var p *pipes
	var err error
	if spec.TTY != nil {
		p, err = openTerminal(spec)
	} else {
		p, err = openPipes(spec)
	}
	if err != nil {
		return nil, err
	}
	cc, err := e.contain.command()
	lim := e.limits.Load() // after command: the limits of its containment
	if err == nil && cc.cg != "" {
		if err = lim.apply(cc.cg); err != nil {
			cc.release()
		}
	}
	if err != nil {
		p.closeAll()
		return nil, err
	}
	ls := e.launchSpec(spec, shell, cc, p, lim)
	if err := e.placeInSandbox(&ls, spec, scope, spill); err != nil {
		p.closeAll()
		cc.release()
		return nil, err
	}
	// A cgroup namespace of its own for an unsandboxed command; the
	// sandbox keeps its commands from the cgroup tree already.
	cc.cgroupNS = cc.cgroupNS && !ls.sandboxed
	ls.cgroupNS, ls.userNS = cc.cgroupNS, cc.cgroupNS && cc.userNS
	started := time.Now()
	l, err := e.launcher.launch(ls)
	closeAll(p.child) // the child has its copies, or there is no child
	if err != nil {
		closeAll(p.parent)
		cc.release()
		if cc.cg != "" {
			err = cgroupSpawnError{err}
		}
		return nil, fmt.Errorf("%s: spawn: %w", Name, err)
	}
	if cc.cg != "" {
		e.contain.spawned(ls.cgroupNS && !ls.userNS) // as assumed
	}
	cc.leaderStarted(l.cmd.Process.Pid)
	cc.spare = l.spare
	r := e.newRun(spec, foreground, started, l, cc, p, spill)
	if p.tty != nil {
		r.term = &terminal{m: p.tty, done: r.Done}
	}
	r.start(cc, p.feeds)
	return r, nil
}

// launchSpec is what the launcher needs to spawn spec's shell in cc with
// the child's ends of p.
func (e *Executor) launchSpec(spec bash.Spec, shell string, cc *commandContainer, p *pipes, lim *limits) launchSpec {
	env := e.env
	if p.tty != nil {
		env = e.ttyEnv
	}
	return launchSpec{
		shell:   shell,
		command: spec.Command,
		dir:     spec.Workdir,
		// The run id last: it wins over a spec's variable of that name.
		env:      append(withEnv(env, spec.Env), cc.env()),
		stdin:    p.stdin,
		stdout:   p.stdout,
		stderr:   p.stderr,
		script:   p.script,
		tty:      p.tty != nil,
		cgroupFD: cc.cgFD,
		prefix:   lim.shellPrefix(shell),
	}
}

// placeInSandbox marks ls sandboxed, in scope, unless spec runs
// unsandboxed or there is no sandbox; its spill directory is made now, so
// the sandbox can show it.
func (e *Executor) placeInSandbox(ls *launchSpec, spec bash.Spec, scope *scopeEntry, spill spillDir) error {
	if e.sandbox == nil || spec.Unsandboxed {
		return nil
	}
	dir, err := ensure(spill)
	if err != nil {
		return fmt.Errorf("%s: spill directory: %w", Name, err)
	}
	ls.sandboxed, ls.spillDir = true, dir
	if scope != nil {
		ls.scope = scope.sc
	}
	return nil
}

// newRun is the run of a command whose shell was just spawned.
func (e *Executor) newRun(spec bash.Spec, foreground bool, started time.Time, l *launched, cc *commandContainer, p *pipes, spill spillDir) *run {
	r := &run{
		grace:    e.grace,
		cmd:      l.cmd,
		status:   l.status,
		reaped:   l.reaped,
		grp:      cc,
		keep:     foreground && e.keepDetached,
		onKept:   e.keep,
		log:      e.log,
		outR:     p.outR,
		errR:     p.errR,
		readDone: make(chan struct{}),
	}
	stdout, stderr := e.collectors(spec, foreground, spill)
	r.Run = execcore.NewRun(spec.Command, started, stdout, stderr, r)
	return r
}

// forget drops a run from the live set, and from its scope's, once it is
// done.
func (e *Executor) forget(r *run, scope *scopeEntry) {
	<-r.Done
	e.mu.Lock()
	delete(e.runs, r)
	if scope != nil {
		delete(scope.runs, r)
	}
	e.mu.Unlock()
	e.wg.Done()
}

// collectors are the collectors of a run of spec, spilling into spill.
func (e *Executor) collectors(spec bash.Spec, foreground bool, spill spillDir) (stdout, stderr *capture.Collector) {
	return execcore.Collectors(capture.Options{
		MaxBytes:      e.maxOutputBytes,
		MaxSpillBytes: e.maxSpillBytes,
		Spill:         spill,
		Budget:        e.spillBudget,
	}, foreground, e.keepHeadBytes, spec.Observe)
}

// checkWorkdir turns an unusable working directory into an error that names
// it, before anything is spawned.
func checkWorkdir(dir string) error {
	if dir == "" {
		return nil
	}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: workdir %q does not exist", Name, dir)
	case err != nil:
		return fmt.Errorf("%s: workdir %q is not usable: %w", Name, dir, err)
	case !info.IsDir():
		return fmt.Errorf("%s: workdir %q is not a directory", Name, dir)
	}
	return nil
}
