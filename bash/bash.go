// Package bash is the executor seam: the types every executor speaks and the
// [Executor] interface that the local executor (bash/local) and the SSH
// executor (bash/ssh) implement. The sandbox is not another executor: it
// changes how bash/local starts a shell (bash/local/sandbox).
//
// The seam knows nothing of tools, tasks, sessions or models. A caller builds a
// [Request] from what it trusts, turns it into a [Spec] with
// [Executor.Resolve] (pure defaulting and clamping with the executor's config),
// and then either waits for the command with [Run] or starts it in the
// background with [Executor.Start]. Run and Start never re-default: a Spec is
// taken as it is, so what a caller resolved is what runs.
// [Executor.RunOrYield] is Run that can hand the command over to the
// background half way (a call that would outlast its client's timeout,
// docs/spec.md §12): it returns the output so far and the live Process.
// Run is RunOrYield that never yields, so an executor implements one
// foreground path and a wrapper intercepts one method.
//
// Errors are for infrastructure only. A command that exits non-zero, is killed
// by its timeout, is cancelled by its caller or dies by a signal has run: all of
// those are normal [Result]s, and the error return stays nil. Run returns an
// error when the command could not be run at all (a missing working directory,
// no shell, a context that was cancelled before spawn).
//
// Output is bounded. Each stream keeps its tail in memory (a foreground one
// its head too, docs/spec.md §3.4a) and, once it overflows, the whole stream
// from byte 0 in a private spill file whose path is reported only when the
// file was written and closed without error, and [ContextBytes] before the
// tail, which redaction reads it with (Output.Before, StreamRead.Before). See
// package [github.com/dsh-go/dsh/bash/capture] for the collector and
// [github.com/dsh-go/dsh/bash/local] for the local executor.
//
// An executor that deletes its spill files itself implements
// [SpillRemover] as well, so that whoever reported a path deletes the file
// through it: the SSH executor's files are on the remote host, and the
// local executor counts its files against local.maxSpillTotalBytes. An
// executor that can lose a background process without knowing how
// it ended (its connection dropped) says so in [State.Err].
package bash

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Executor runs shell commands. Implementations are safe for concurrent use
// by many sessions and keep no per-session state.
type Executor interface {
	// Resolve applies the executor's defaults and caps to r. It checks
	// values (a given timeout must be positive and finite) but touches
	// nothing on disk: the working directory is checked by Run and Start.
	Resolve(r Request) (Spec, error)

	// RunOrYield runs spec in the foreground and waits for it, its
	// timeout, the cancellation of ctx, or the closing of yield (nil:
	// never), whichever comes first. A timeout or a cancellation kills
	// the command's process group (SIGTERM, then SIGKILL after the
	// executor's grace) and is reported in the Result. The error is
	// non-nil only when nothing could be run.
	//
	// When yield closes, unless the command has already exited, it
	// returns at once with the output so far in the Result (no exit
	// facts: ExitCode nil, Signal empty) and the live Process, which
	// goes on detached from ctx but still bound to spec's timeout,
	// counted from the spawn: when that fires the process is killed and
	// its State says TimedOut. The Process's first Read starts right
	// after the output the Result holds (docs/spec.md §12). A command
	// that ended before the yield returns its Result and a nil Process,
	// as [Run] would.
	RunOrYield(ctx context.Context, spec Spec, yield <-chan struct{}) (Result, Process, error)

	// Start runs spec in the background and returns once it runs. ctx
	// bounds the start only (a dial, a remote start): a ctx that ended
	// before the spawn fails it as Run does ("aborted before spawn: …"),
	// and the process does not see ctx afterwards. No timeout applies;
	// the process ends by itself, by [Process.Kill], or by Close. A spawn
	// failure is returned synchronously and leaves nothing behind.
	Start(ctx context.Context, spec Spec) (Process, error)

	// Close kills every process the executor still runs, waits until each
	// has exited, and releases the executor's files. Run and Start fail
	// after Close.
	Close() error
}

// Run runs spec on e in the foreground and waits for it, its timeout, or
// the cancellation of ctx: [Executor.RunOrYield] without a yield.
func Run(ctx context.Context, e Executor, spec Spec) (Result, error) {
	res, _, err := e.RunOrYield(ctx, spec, nil)
	return res, err
}

// Request is what a caller asks for. Optional fields are pointers or nil
// slices and maps so that absent stays distinguishable from empty.
type Request struct {
	// Command is run by the shell as `bash -c Command`.
	Command string
	// TimeoutMs, when set, overrides the executor's default timeout, in
	// milliseconds. It must be finite and > 0; it is rounded up to a whole
	// millisecond and clamped to the executor's maximum. It stays the
	// number the model sent (JSON), so that the executor judges every
	// value by one rule and answers a bad one with the exact text of
	// docs/spec.md §1.
	TimeoutMs *float64
	// Workdir is the working directory; empty means the executor's default.
	Workdir string
	// Stdin, when non-nil, is written to the command's standard input, which
	// is then closed. When nil the command reads /dev/null.
	Stdin []byte
	// Env, when non-nil, is applied last over the executor's environment.
	// It is meant for trusted callers (hooks), never for model input.
	Env map[string]string
	// Observe, when set, sees the output as it arrives (for progress
	// reports); see Spec.Observe.
	Observe func(stream string, p []byte)
	// Owner is who the command runs for, usually a session: a sandbox
	// keeps some things per owner (docs/spec.md §11). nil: the command
	// is on its own.
	Owner Owner
	// Unsandboxed runs the command outside the executor's sandbox. Set
	// it only with the user's consent (dangerouslyDisableSandbox).
	Unsandboxed bool
	// Net is what a sandbox whose network is decided by name
	// (docs/spec.md §11.1) needs of the command: whom to ask about a host,
	// and where its refused connections are recorded. nil: nobody is
	// asked (askFallback decides), refusals are not reported.
	Net *NetCall
	// TTY, when set, runs the command under a pseudo-terminal of that
	// size (docs/spec.md §4.2a), for [Executor.Start] only: its Process
	// is then a [TerminalProcess]. nil: no terminal, stdin as above.
	TTY *Terminal
}

// Terminal is the size of a command's pseudo-terminal, in cells.
type Terminal struct {
	Cols, Rows int
}

// The bounds of a terminal's size (docs/spec.md §4.2a).
const (
	MinCols, MaxCols = 20, 500
	MinRows, MaxRows = 5, 200
	// DefaultCols and DefaultRows are the size when none is given.
	DefaultCols, DefaultRows = 80, 24
)

// Valid reports whether t is within the bounds.
func (t Terminal) Valid() bool {
	return t.Cols >= MinCols && t.Cols <= MaxCols && t.Rows >= MinRows && t.Rows <= MaxRows
}

// TerminalProcess is the Process of a command started with a TTY. Its
// output, everything the program writes to the terminal, is the stdout
// stream; stderr stays empty.
type TerminalProcess interface {
	Process
	// WriteInput writes p to the terminal as if typed, waiting until
	// deadline at most for a program that does not read; it returns how
	// much was written. An error once the process is done.
	WriteInput(p []byte, deadline time.Time) (int, error)
	// Resize changes the terminal's size; the program learns it by
	// SIGWINCH.
	Resize(t Terminal) error
	// Foreground lists the processes of the terminal's foreground process
	// group, the programs its input goes to now; nil when that cannot be
	// told (the command ended, no /proc).
	Foreground() []Program
}

// Program is a process a terminal's input may go to.
type Program struct {
	// Exe is the path of its executable, "" when unreadable.
	Exe string
	// Args is its argument vector, nil when unreadable.
	Args []string
}

// NetCall is one command's part in the sandbox's network by domain.
type NetCall struct {
	// ID names the call or task in the audit log.
	ID string
	// Ask asks the user whether the command may reach host:port; nil
	// when nobody can be asked.
	Ask func(ctx context.Context, host string, port int) NetAnswer

	mu      sync.Mutex
	refused int      // connections
	hosts   []string // their hosts, each once, in order, at most maxRefusedHosts
}

// maxRefusedHosts bounds what a NetCall keeps of its refusals: a command
// may make refused connections without end.
const maxRefusedHosts = 100

// NetAnswer is the user's answer about a host.
type NetAnswer int

const (
	// NetCannotAsk: nobody could be asked (askFallback decides).
	NetCannotAsk NetAnswer = iota
	// NetDismissed: the question was closed or timed out: refused, not
	// remembered.
	NetDismissed
	NetDeclined
	NetAccepted
)

// Refuse records a connection to host that was refused.
func (n *NetCall) Refuse(host string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refused++
	if len(n.hosts) < maxRefusedHosts && !slices.Contains(n.hosts, host) {
		n.hosts = append(n.hosts, host)
	}
}

// Refused counts the refused connections and lists their hosts, each
// once, in the order first refused (the first 100).
func (n *NetCall) Refused() (count int, hosts []string) {
	if n == nil {
		return 0, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.refused, slices.Clone(n.hosts)
}

// Owner is what an executor knows of who a command runs for: its id, its
// working directory (the workspace a sandbox opens for writing) and a way
// to learn when it ends. [github.com/dsh-go/dsh/session.Session] is one.
type Owner interface {
	ID() string
	// Cwd is the owner's working directory, "" when it has none.
	Cwd() string
	// OnEnd registers fn to run once when the owner ends (at once when it
	// has ended) and returns a func that unregisters it.
	OnEnd(fn func()) (cancel func())
}

// Spec is a resolved Request: every default applied, every cap enforced.
type Spec struct {
	Command string
	// Timeout is the effective foreground timeout, a whole number of
	// milliseconds. Start ignores it.
	Timeout time.Duration
	Workdir string
	Stdin   []byte
	Env     map[string]string
	// Observe, when set, is called with every chunk of output as it is
	// collected ("stdout" or "stderr"), on the collecting goroutine: it
	// must be quick and must not keep p.
	Observe func(stream string, p []byte)
	// Owner, Unsandboxed, Net and TTY are the Request's.
	Owner       Owner
	Unsandboxed bool
	Net         *NetCall
	TTY         *Terminal
}

// Result is the outcome of a foreground run.
type Result struct {
	// ExitCode is nil when the process was killed by a signal.
	ExitCode *int
	// Signal is the name of the signal that ended the process ("SIGTERM"),
	// or empty when it exited.
	Signal string
	// TimedOut reports that the executor's own timer fired and killed the
	// command. Aborted reports that the caller's context was cancelled.
	// They are never both true.
	TimedOut bool
	Aborted  bool
	// Timeout is the effective timeout the run had.
	Timeout time.Duration
	// Duration is the wall time from spawn to the end of output collection.
	Duration time.Duration
	Stdout   Output
	Stderr   Output
}

// Output is what was collected of one stream.
type Output struct {
	// Text is the kept tail, valid UTF-8 (invalid bytes are replaced by
	// U+FFFD). When Truncated, it starts at a character boundary.
	Text string
	// Head is the kept start of a truncated foreground stream, valid
	// UTF-8, ending after a newline or at a character boundary
	// (docs/spec.md §3.4a); empty when the executor keeps no head.
	Head string
	// Before is what came just before Text in a truncated stream, up to
	// ContextBytes, valid UTF-8: never shown (its bytes are omitted), it
	// lets redaction find a secret that the tail's cut splits
	// (docs/spec.md §14).
	Before string
	// OmittedBytes counts the bytes of a truncated stream in neither Head
	// nor Text, as the process wrote them (before U+FFFD replacement):
	// raw head + OmittedBytes + raw tail = TotalBytes.
	OmittedBytes int64
	// Truncated reports that bytes were dropped from Text.
	Truncated bool
	// SpillPath names a file holding the stream from byte 0. It is set
	// only when the file was created safely, written and closed without
	// error.
	SpillPath string
	// SpillCapped reports that the spill file stopped growing at the
	// executor's spill limit; SpillBytes is then its size.
	SpillCapped bool
	SpillBytes  int64
	// TotalBytes counts every byte the process wrote to the stream.
	TotalBytes int64
}

// Status is the life cycle of a background process: StatusRunning, then
// exactly one of StatusCompleted or StatusKilled.
type Status string

const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusKilled    Status = "killed"
)

// State is a snapshot of a background process.
type State struct {
	Status Status
	// ExitCode is set once the process exited by itself (also when a Kill
	// raced its exit); nil while running or when a signal ended it.
	ExitCode *int
	// Signal names the signal that ended the process, if one did.
	Signal string
	// Err, when set, says the executor lost the process before it could
	// learn how it ended ("ssh: connection to build1 lost"): Status is
	// then StatusKilled, and ExitCode and Signal are unset.
	Err error
	// TimedOut says the spec's timeout killed a process that a
	// foreground run yielded (RunOrYield); Status is then StatusKilled.
	TimedOut bool
	// StdoutBytes and StderrBytes count what each stream wrote so far, as
	// the process wrote it (the audit log and metrics, docs/spec.md §15).
	StdoutBytes, StderrBytes int64
}

// Process is the handle of a background command.
type Process interface {
	// Command is the command line the process runs.
	Command() string
	// State reports the current status. After Kill it is StatusKilled at
	// once, even while the process is still terminating.
	State() State
	// Done is closed once the process has exited and its output has been
	// collected. It always closes.
	Done() <-chan struct{}
	// Kill starts the kill sequence. It returns true only for the first
	// call made while the process runs; later calls do nothing (and do not
	// restart the grace timer).
	Kill() bool
	// Read consumes the output written since the previous Read. It stays
	// valid after exit; the read after the last one returns an empty delta.
	Read() ReadResult
	// SpillPaths names the spill files of the streams that have one, without
	// consuming anything (for cleanup of output nobody read).
	SpillPaths() (stdout, stderr string)
}

// SpillRemover is implemented by an executor that deletes its spill files
// itself: the SSH executor writes them on the remote host, the local one
// counts them against local.maxSpillTotalBytes. Whoever reported spill
// paths deletes them through it; without it, a spill path is a local file.
type SpillRemover interface {
	// RemoveSpills deletes spill files the executor reported, best effort:
	// a file already gone, or one that cannot be reached, is logged, not
	// returned.
	RemoveSpills(paths ...string)
}

// ReadResult is one consuming read of a background process.
type ReadResult struct {
	// Delta is the new stdout, then the new stderr after a "[stderr]"
	// line, joined by [JoinStreams]: each stream's Text, without its Head.
	Delta string
	// Lossy reports that unread bytes were dropped from memory since the
	// previous read; the spill files still hold them (up to their cap).
	Lossy bool
	// Stdout and Stderr are the read of each stream, which Delta joins.
	Stdout, Stderr StreamRead
	// StdoutSpill and StderrSpill name the spill files of streams that have
	// one, lossy or not.
	StdoutSpill string
	StderrSpill string
}

// StreamRead is one consuming read of one stream.
type StreamRead struct {
	// Text is the stream's new output, valid UTF-8.
	Text string
	// Lossy: bytes before Text were dropped from memory unread; Before is
	// then what came just before Text, up to ContextBytes, as
	// Output.Before.
	Lossy  bool
	Before string
	// Head is, for a lossy read that began inside the stream's kept head
	// (keepHeadBytes), the part of that head it had not read, cut as
	// Output.Head; OmittedBytes then counts the raw bytes between Head and
	// Text. A background read keeps the start and the end of what it
	// missed, as a foreground result does (docs/spec.md §3.5).
	Head         string
	OmittedBytes int64
}

// ContextBytes is what an executor keeps of a stream before the kept
// tail (Output.Before, StreamRead.Before), besides maxOutputBytes: the
// longest secret redaction finds (redact.Window), so that it finds one
// that a cut splits.
const ContextBytes = 16 << 10

// StderrHeader introduces the stderr part of a combined output (exact).
const StderrHeader = "[stderr]\n"

// JoinStreams combines a stdout and a stderr text the way every output the
// model reads does: stdout, then, if stderr is non-empty, "[stderr]\n" and
// stderr, with a "\n" before the header only when stdout is non-empty and
// does not end in one.
func JoinStreams(stdout, stderr string) string {
	if stderr == "" {
		return stdout
	}
	var b strings.Builder
	b.Grow(len(stdout) + 1 + len(StderrHeader) + len(stderr))
	b.WriteString(stdout)
	if stdout != "" && !strings.HasSuffix(stdout, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(StderrHeader)
	b.WriteString(stderr)
	return b.String()
}
