// Package ssh is the SSH executor: it runs `bash -c` on a remote host over
// SSH (golang.org/x/crypto/ssh), implementing [bash.Executor] with the same
// contract and result texts as the local executor (docs/spec.md §13).
//
// # Connections
//
// A pool holds up to maxConnections connections to the host, dialled
// lazily by the first command that needs one. Each command gets a session
// channel of its own; when the server refuses a channel (sshd's
// MaxSessions, 10 by default) the pool learns that connection's limit and
// uses another one, or dials one more, or waits for a channel to free up.
// The host key must be in the known_hosts file (read afresh at every
// dial); an unknown or changed key is refused with a message naming the
// host, the key and the file, and only the algorithms of the host's known
// keys are offered. The login is the identity file, else the SSH agent at
// SSH_AUTH_SOCK (as dsh started).
//
// Every keepaliveMs a connection sends a keep-alive; one unanswered for 3
// intervals, or a transport that ends (a reset, a killed sshd), makes the
// connection lost: the commands it carried fail with
// "ssh: connection to HOST lost", and the next command dials anew.
//
// # The remote side
//
// sshd runs, through the user's login shell, `exec /bin/sh -c PRELUDE
// dsh-ssh WRAPPER ARGS…`, every word POSIX-quoted. The prelude checks for
// bash and setsid and execs bash with the wrapper, which:
//
//   - changes to the working directory, or reports in a frame that it does
//     not exist, is not a directory, or is not usable and why;
//   - reads the payloads from stdin, each ending in a NUL: the script when
//     the command is over 64 KiB or the quoted command line would be over
//     128 KiB, and the spec's stdin bytes (escaped for printf %b, so that
//     they hold no NUL);
//   - starts the watchdog, a bash in a session of its own (setsid) that
//     reads the channel's stdin;
//   - writes the start frame, "\n<nonce> started <pgid>\n", on stdout,
//     where the nonce is 16 random hex digits the command cannot know;
//   - exports NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat
//     GIT_TERMINAL_PROMPT=0, env.set and the spec's env, which come on its
//     command line, and execs `bash --noprofile --norc -c COMMAND` with
//     stdin /dev/null (or the stdin payload).
//
// sshd's session child leads a new session and process group (OpenSSH
// calls setsid for it), so the command's bash, which the wrapper became,
// leads its process group, has no controlling terminal, and is sshd's
// own child: sshd reports its raw wait status as exit-status or
// exit-signal, so markers match local ones.
//
// The watchdog owns the killing. On the line "k" from dsh, when 3
// heartbeats (a line "h" every keepaliveMs) are missed, or when its stdin
// ends (sshd closes it when the command exits, so what the command left in
// its group dies with it, and when the connection goes), it sends SIGTERM
// to the command's process group, then SIGKILL after graceMs unless the
// group is empty (a zombie counts as gone). It kills by the group only
// while the group is alive, and stops at once when it is empty, so no
// remote process outlives a lost connection by more than 3 × keepaliveMs
// + graceMs. It holds the channel's stderr, writing nothing to it, so the
// channel ends only once the watchdog does: a command is over when what it
// left in its group is gone too, as for the local executor.
//
// # Frames
//
// dsh → wrapper, on the channel's stdin after the payloads: "h\n" (a
// heartbeat) and "k\n" (kill). Wrapper → dsh: the start frame, or a frame
// saying why the command did not start, on stdout before anything of the
// command; everything before it on stdout (what the remote user's rc files
// print) is dropped. How the command ended comes from sshd itself
// (exit-status, exit-signal), not from a trailer on the command's
// streams: a trailer in a stream the command also writes could be
// imitated by it, or held back by a process it left holding the stream,
// and a shell's own wait folds a death by a signal into 128+n, which
// `exit 143` also gives.
//
// # Output
//
// The collectors (package capture) run here: same tails, heads, markers
// and UTF-8 rules as the local executor. A stream that overflows is
// written back to a spill file on the remote host, in a private directory
// (mode 0700, files 0600, created exclusively) under ssh.spillDir, and the
// model is told that remote path. The base is checked first with the local
// executor's rules and words (capture.CheckBaseDir): it and every
// directory above it must be the remote user's or root's, and writable by
// no other user unless sticky; the private directory must then be the
// remote user's, mode 0700. Once the exit status has arrived, the
// output is drained until EOF or, for a process that holds it open, graceMs
// after the exit (or after the kill's SIGKILL, if later) plus a margin for
// the network.
//
// Decisions where the spec is silent:
//
//   - The exit status comes from sshd and the start frame precedes the
//     command's output, instead of a trailer frame: see Frames. The
//     watchdog is in a session of its own (setsid), not in the command's
//     group, so that a command's `kill 0` cannot reach it and an empty
//     group means the command is gone.
//   - The working directory defaults to ssh.cwd, else the remote user's
//     home, where sshd starts commands; it is checked on the remote host.
//   - The exec request's line is one argument of the login shell, which
//     Linux caps at 128 KiB; a command whose quoted line (each ' is 4
//     bytes) would reach that comes on stdin even when under 64 KiB.
//   - Env names must be shell variable names: the wrapper exports them.
//     BASH and names starting __dsh_ are refused, from env.set and from
//     the request: the wrapper exports the env in its own shell, just
//     before it starts the watchdog (with setsid and bash by the paths in
//     __dsh_setsid and BASH) and execs the command (in __dsh_cmd), so one
//     of those would change what runs.
//     A command or env value holding a NUL is refused before anything runs.
//   - The remote environment is sshd's, after the user's login shell ran
//     its rc files (as for any ssh command); nothing is scrubbed, and
//     nothing of dsh's environment is forwarded. The user's login shell
//     must parse POSIX single quotes (sh, bash, dash, ksh, zsh); csh and
//     fish are not supported.
//   - A spill file needs a channel of its own; it does not wait for one
//     (its collector holds a command's output meanwhile). Without one the
//     spill fails and the path is withheld, as for a full disk.
//   - An unsafe remote spill base cannot stop the executor from starting,
//     as the local one does: nothing is known of the remote host until the
//     first command. It refuses each spill instead (the path is withheld,
//     the reason logged) and is checked again at the next; dsh doctor
//     reports it. The checks run as POSIX tools (id -u, pwd -P, ls -ldn),
//     judged here.
//   - Remote spill directories are named dsh-out-ssh-<random>; Close
//     removes the executor's own. One left by a dsh that died is never
//     swept (whether its owner runs cannot be told from the remote host).
//   - A background process whose connection drops ends with State.Err set
//     (a failed task), not as killed.
//   - The wait for the start frame is bounded by the call's timeout (from
//     the exec request), its context and Close: a remote login held up
//     before the wrapper (rc files that block) sends none. Then the kill
//     is requested and the frame awaited graceMs more; without one, sshd
//     is asked to SIGKILL the session's process group (the "signal"
//     request) and the channel is closed graceMs later at most. The call
//     ends timed out or aborted; Start fails as the executor is closed,
//     or as aborted before spawn when its context ended (Start's context
//     bounds the dial and this wait, never the process). The command's
//     own timeout starts at the start frame, as before.
//   - RunOrYield looks at the yield once the command started (its start
//     frame came), and its timeout counts from there, as Run's does; a
//     yielded command is then a background one, with the collectors (and
//     their head) it had.
//   - Errors start with "ssh: ".
package ssh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-go/dsh/internal/num"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/bash/internal/execcore"
	"github.com/dsh-go/dsh/config"
)

// Name prefixes the executor's errors.
const Name = "ssh"

// Executor is the SSH executor. Make one with New; it is safe for
// concurrent use.
type Executor struct {
	target         *target
	cwd            string
	timeoutMs      int64
	maxTimeoutMs   int64
	maxOutputBytes int64
	keepHeadBytes  int64 // of maxOutputBytes
	maxSpillBytes  int64
	grace          time.Duration
	keepalive      time.Duration
	env            []string // NAME=VALUE: the fixed variables, then env.set
	pool           *pool
	spill          *remoteSpill
	log            *slog.Logger

	mu     sync.Mutex
	closed bool
	runs   map[*run]struct{}
	// wg counts runs until done, spawns in flight, and the goroutines
	// that read a channel's requests until the channel is closed.
	wg sync.WaitGroup
}

var (
	_ bash.Executor     = (*Executor)(nil)
	_ bash.SpillRemover = (*Executor)(nil)
)

// Option configures an executor beyond its config.
type Option func(*options)

type options struct {
	log *slog.Logger
}

// WithLogger sends what the executor logs (connections lost, spill files
// withheld or not removed) to l. Without it, or with nil, the executor
// logs to slog.Default() as it is when New is called.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// fixedEnv is what every command gets over the remote environment
// (docs/spec.md §2.4, layer 2), before env.set and the spec's env.
var fixedEnv = []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

// New validates cfg, applies its defaults and returns an executor. It
// checks that the known_hosts file can be read; it connects to nothing:
// the first command dials.
func New(cfg config.SSH, opts ...Option) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if cfg.Host == "" {
		return nil, fmt.Errorf("%s: host must be set", Name)
	}
	cfg = cfg.WithDefaults()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	log := o.log
	if log == nil {
		log = slog.Default()
	}
	keepalive := cfg.Keepalive
	t, err := newTarget(cfg, keepalive)
	if err != nil {
		return nil, err
	}
	e := &Executor{
		target:         t,
		cwd:            cfg.Cwd,
		timeoutMs:      num.CeilMillis(cfg.Timeout),
		maxTimeoutMs:   num.CeilMillis(cfg.MaxTimeout),
		maxOutputBytes: cfg.MaxOutputBytes,
		keepHeadBytes:  *cfg.KeepHeadBytes,
		maxSpillBytes:  cfg.MaxSpillBytes,
		grace:          cfg.Grace,
		keepalive:      keepalive,
		env:            append(slices.Clone(fixedEnv), assignments(cfg.Env.Set)...),
		pool:           newPool(t, cfg.MaxConnections, keepalive, log),
		log:            log,
		runs:           make(map[*run]struct{}),
	}
	e.spill = &remoteSpill{e: e, base: cfg.SpillDir}
	return e, nil
}

// assignments is env as NAME=VALUE, sorted by name.
func assignments(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// Host is the host the executor runs commands on, as dsh names it in its
// messages.
func (e *Executor) Host() string { return e.target.host }

// Resolve applies the executor's defaults and caps to r. The working
// directory is r's, else ssh.cwd, else empty: the remote user's home,
// where sshd starts a command.
func (e *Executor) Resolve(r bash.Request) (bash.Spec, error) {
	return execcore.Resolve(Name, r, e.cwd, e.timeoutMs, e.maxTimeoutMs)
}

// RunOrYield runs spec in the foreground until yield closes. See
// [bash.Executor]. A connection lost before the command's exit status
// arrived is an error ("ssh: connection to HOST lost"), with no Result.
// The yield is looked at once the command started (its start frame
// came); its timeout counts from there.
func (e *Executor) RunOrYield(ctx context.Context, spec bash.Spec, yield <-chan struct{}) (bash.Result, bash.Process, error) {
	if spec.TTY != nil {
		return bash.Result{}, nil, errNoTerminal
	}
	if err := execcore.CheckForeground(Name, ctx, spec); err != nil {
		return bash.Result{}, nil, err
	}
	r, why, err := e.spawn(ctx, spec, spec.Timeout)
	if err != nil {
		return bash.Result{}, nil, err
	}
	if why == notCut {
		return r.Foreground(ctx, spec.Timeout, yield)
	}
	// Cut before its start: the run is being killed, or is done.
	res, err := r.Result(spec.Timeout, why == cutTimeout, why == cutAborted)
	return res, nil, err
}

// errNoTerminal refuses a spec with a TTY, before anything is dialed: the
// channel's stdin and stdout carry the remote wrapper's frames (its start,
// the heartbeats, the kill), so a terminal would need a protocol of its
// own (typed keys, window changes, a remote pty), which the wrapper does
// not speak.
var errNoTerminal = errors.New(Name + ": interactive terminals are not supported by the SSH executor")

// Start runs spec in the background. See [bash.Executor]. It dials (when
// no connection is free) and waits for the remote wrapper's report that
// the command started, or why it could not, under ctx: a spawn failure is
// an error here, and so are ctx's end ("aborted before spawn: …") and
// Close meanwhile, which kill what was started.
func (e *Executor) Start(ctx context.Context, spec bash.Spec) (bash.Process, error) {
	if spec.TTY != nil {
		return nil, errNoTerminal
	}
	if ctx.Err() != nil {
		return nil, execcore.AbortedBeforeSpawn(ctx)
	}
	r, why, err := e.spawn(ctx, spec, 0)
	switch {
	case err != nil:
		return nil, err
	case why != notCut && ctx.Err() != nil:
		return nil, execcore.AbortedBeforeSpawn(ctx)
	case why != notCut: // Close: the run is being killed, or is done
		return nil, errClosed
	}
	return r.Process(), nil
}

// Close kills every live command, waits until each is done, removes the
// remote spill directory and closes the connections. A command whose
// connection is gone is done once the loss is noticed (at most 3
// keepalive intervals); its remote wrapper kills it by itself.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	for r := range e.runs {
		r.Kill()
	}
	e.mu.Unlock()
	e.wg.Wait()
	err := e.spill.remove()
	e.pool.close()
	e.wg.Wait() // the requests readers of the removal's channel
	return err
}

var errClosed = errors.New(Name + ": executor closed")

// cut says why a run was ended before its start frame came.
type cut int

const (
	notCut     cut = iota
	cutTimeout     // the run's timeout
	cutAborted     // the caller's context, or Close
)

// spawn opens a channel, runs the command's wrapper on it and waits for
// the wrapper's start frame. A wrapper that says the command cannot start
// (a workdir, a missing program) is waited for until its channel is done,
// so a failed spawn leaves nothing behind. ctx (the caller's, for Run)
// bounds the wait for a channel; once the command is asked for, ctx,
// timeout (0 for none) and Close bound the wait for the start frame (see
// awaitStart), and spawn says which of them cut it: the run is then being
// killed, or, when no frame came, abandoned and done.
func (e *Executor) spawn(ctx context.Context, spec bash.Spec, timeout time.Duration) (*run, cut, error) {
	if err := checkSpec(spec); err != nil {
		return nil, notCut, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, notCut, errClosed
	}
	e.wg.Add(1)
	e.mu.Unlock()
	s, err := e.pool.acquire(ctx, true)
	if err != nil {
		e.wg.Done()
		if ctx.Err() != nil {
			return nil, notCut, execcore.AbortedBeforeSpawn(ctx)
		}
		return nil, notCut, err
	}
	r := e.newRun(spec, timeout > 0, s)
	e.wg.Add(1)
	go r.requests()
	if err := execRequest(s.ch, r.inv.line); err != nil {
		_ = s.ch.Close()
		e.wg.Done()
		return nil, notCut, e.lostOr(s.c, fmt.Errorf("%s: run a command on %s: %w", Name, e.target.host, err))
	}
	e.track(r)
	r.startIO()
	go e.forget(r)
	fr, why, framed := r.awaitStart(ctx, timeout)
	switch {
	case !framed:
		r.abandon()
		<-r.Done
		if err := r.failure(); err != nil {
			return nil, notCut, err
		}
		return r, why, nil
	case fr.err == nil && fr.f.problem == "":
		r.mu.Lock()
		r.pgid = fr.f.pgid
		r.mu.Unlock()
		return r, why, nil
	}
	<-r.Done
	return nil, notCut, e.startError(spec, r, fr)
}

// awaitStart waits for the run's start frame until ctx ends, timeout
// (counted from the exec request; 0 for none) passes, or the run is
// killed (by Close). A remote login held up before the wrapper (rc files
// that block) would never send the frame. When one of them cuts the wait,
// the kill is requested, which the watchdog carries out once the command
// started, and the frame is awaited for graceMs more, since a command
// that just started may have its frame on the way; framed says whether
// it came, and why which of them cut the wait.
func (r *run) awaitStart(ctx context.Context, timeout time.Duration) (fr frameResult, why cut, framed bool) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(time.Until(r.Started.Add(timeout)))
		defer t.Stop()
		expired = t.C
	}
	why = cutAborted
	select {
	case fr := <-r.frame:
		return fr, notCut, true
	case <-expired:
		why = cutTimeout
	case <-ctx.Done():
	case <-r.Killing():
	}
	r.Kill()
	t := time.NewTimer(r.e.grace)
	defer t.Stop()
	select {
	case fr := <-r.frame:
		return fr, why, true
	case <-t.C:
		return frameResult{}, why, false
	}
}

// track registers a run for Close; one that comes while Close runs is
// killed like every other.
func (e *Executor) track(r *run) {
	e.mu.Lock()
	e.runs[r] = struct{}{}
	closed := e.closed
	e.mu.Unlock()
	if closed {
		r.Kill()
	}
}

// forget drops a run from the live set once it is done.
func (e *Executor) forget(r *run) {
	<-r.Done
	e.mu.Lock()
	delete(e.runs, r)
	e.mu.Unlock()
	e.wg.Done()
}

// newRun is the run of spec on s, not started.
func (e *Executor) newRun(spec bash.Spec, foreground bool, s *session) *run {
	env := append(slices.Clone(e.env), assignments(spec.Env)...)
	r := &run{
		e:        e,
		s:        s,
		inv:      invocationFor(newNonce(), spec.Command, spec.Workdir, spec.Stdin, env, e.keepalive, e.grace),
		frame:    make(chan frameResult, 1),
		stopFeed: make(chan struct{}),
	}
	stdout, stderr := e.collectors(spec, foreground)
	r.Run = execcore.NewRun(spec.Command, time.Now(), stdout, stderr, r)
	return r
}

// newNonce is a frame nonce: a command's output cannot guess it, and the
// output of the remote user's rc files cannot hold it by chance.
func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "dsh-" + hex.EncodeToString(b[:])
}

// collectors are the collectors of a run of spec; they spill to the
// remote host.
func (e *Executor) collectors(spec bash.Spec, foreground bool) (stdout, stderr *capture.Collector) {
	return execcore.Collectors(capture.Options{
		MaxBytes:      e.maxOutputBytes,
		MaxSpillBytes: e.maxSpillBytes,
		Spill:         e.spill,
	}, foreground, e.keepHeadBytes, spec.Observe)
}

// checkSpec refuses what cannot reach a remote shell: a NUL in the
// command, an env name a shell cannot export or that the wrapper keeps
// for itself, a NUL in a value.
func checkSpec(spec bash.Spec) error {
	if strings.IndexByte(spec.Command, 0) >= 0 {
		return fmt.Errorf("%s: the command holds a NUL byte, which no shell can run", Name)
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		if !config.ShellName(k) {
			return fmt.Errorf("%s: request env name %q is not a valid variable name", Name, k)
		}
		if config.ReservedName(k) {
			return fmt.Errorf("%s: request env name %q is reserved: the remote wrapper uses it", Name, k)
		}
		if strings.IndexByte(spec.Env[k], 0) >= 0 {
			return fmt.Errorf("%s: request env value of %q holds a NUL byte", Name, k)
		}
	}
	return nil
}

// startError is why a command did not start, from its frame or, without
// one, from its stderr.
func (e *Executor) startError(spec bash.Spec, r *run, fr frameResult) error {
	_, errRes := r.Collected()
	r.mu.Lock()
	err, st, stderr := r.err, r.status, errRes.Text
	r.mu.Unlock()
	if err != nil {
		return err // the connection was lost
	}
	host := e.target.host
	problem, detail, _ := strings.Cut(fr.f.problem, " ")
	switch {
	case problem == "workdir" && detail == "missing":
		return fmt.Errorf("%s: workdir %q does not exist on %s", Name, spec.Workdir, host)
	case problem == "workdir" && detail == "notdir":
		return fmt.Errorf("%s: workdir %q is not a directory on %s", Name, spec.Workdir, host)
	case problem == "workdir":
		why := strings.TrimPrefix(detail, "unusable ")
		return fmt.Errorf("%s: workdir %q is not usable on %s: %s", Name, spec.Workdir, host, strings.ToLower(why))
	case problem == "missing":
		return fmt.Errorf("%s: %s has no %s on PATH: dsh needs sh, bash and setsid there", Name, host, detail)
	case problem == "payload":
		return fmt.Errorf("%s: the command's script did not reach %s whole", Name, host)
	}
	why := firstLine(stderr)
	if why == "" {
		code, sig := st.exitInfo()
		switch {
		case sig != "":
			why = "killed by " + sig
		case code != nil:
			why = fmt.Sprintf("exit code %d", *code)
		default:
			why = "no exit status"
		}
	}
	return fmt.Errorf("%s: the remote wrapper did not start on %s: %s", Name, host, why)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}

// lostError is the error of a call its connection dropped (exact,
// docs/spec.md §13).
func lostError(c *conn) error {
	return fmt.Errorf("%s: connection to %s lost", Name, c.p.t.host)
}

// errNoStatus is the error of a command whose channel ended without an
// exit status.
func errNoStatus(host string) error {
	return fmt.Errorf("%s: the command on %s ended without an exit status", Name, host)
}

// lostOr is lostError when c is lost, else err.
func (e *Executor) lostOr(c *conn, err error) error {
	if c.isLost() {
		return lostError(c)
	}
	return err
}
