// Command dsh is the shell for LLM agents: an MCP server whose `bash` tool
// reports honestly what a command did, and a CLI to try that tool by hand.
//
//	dsh mcp   [--config FILE] [--workdir DIR] [--log-level L]  MCP over stdio
//	dsh serve --addr HOST:PORT|unix:PATH [--config FILE] [--workdir DIR]
//	          [--token-file F] [--no-auth] [--idle-timeout D]
//	          [--log-level L]                                  MCP streamable HTTP at /mcp
//	dsh run   [--config FILE] [--workdir DIR] [--timeout D] [--background] -- COMMAND...
//	dsh tools [--config FILE]                                  tool schemas and the prompt
//	dsh version | dsh --version                                version, commit and date
//	dsh doctor [--config FILE]                                 the executor (shell and containment, or the SSH host), rule sources
//	dsh policy check [--config FILE] [--workdir DIR] [--json] -- COMMAND
//	                                                           what the command policy decides, part by part
//	dsh clean [--config FILE]                                  remove dsh run's kept spill files
//	dsh completion bash|zsh|fish                               a shell completion script
//
// Every command's --help gives examples, its exit statuses, the config
// keys it reads and its --workdir fallbacks (help.go, golden-tested in
// testdata/help). A mistyped command or long flag gets "; did you mean
// X?" after the error when a name is within an edit distance of 2 or
// starts with what was typed. --log-level (error, warn, info, debug;
// default info) sets what dsh mcp and dsh serve log on stderr.
//
// Every front end runs calls through the same pipeline: the tool registry
// (validation, waterfalls), the bash tool, the executor (local, or SSH with
// `executor: ssh`), and the task runtime for background runs (docs/spec.md
// §6.1, §13).
//
// # Config file
//
// The config file is --config, else $DSH_CONFIG (a file it names must
// exist), else $XDG_CONFIG_HOME/dsh/config.yaml (~/.config/dsh/config.yaml)
// when it exists; without one the defaults apply. Never a file of the
// working directory: a cloned repository must not configure dsh. dsh
// doctor names the file and where its name came from (config.go). Every
// key is optional, and an unknown key is refused by name
// (docs/examples/config.yaml has every section):
//
//	executor: local          # the executor to load: local, or ssh (an ssh: section, docs/config.md)
//	local:                   # the local executor (docs/spec.md §2.1)
//	  cwd: /srv/project
//	  timeoutMs: 120000
//	  maxTimeoutMs: 600000
//	  maxOutputBytes: 64000
//	  maxSpillBytes: 67108864
//	  maxSpillTotalBytes: 1073741824
//	  graceMs: 3000
//	  spillDir: /var/tmp
//	  shell: /bin/bash
//	  env: {passthrough: [], scrub: [], set: {}}
//	  keepDetached: false    # keep what a foreground command leaves running
//	  containment: auto      # auto | cgroup | marker
//	tools: [bash, tasks]     # tools to load, default both; [] loads none
//	bash:
//	  enableRunInBackground: true
//	  maxForegroundPerSession: 16 # foreground commands of one session at once
//	  maxForeground: 128     # of all sessions
//	tasks:                   # the task runtime and task_output/task_list/task_kill
//	  maxRunningPerSession: 64
//	  maxRunning: 256        # of all sessions
//	  waitTimeoutMs: 30000
//	  maxWaitTimeoutMs: 600000
//	serve:                   # dsh serve only
//	  maxSessions: 64        # MCP sessions open at once
//	  maxRequestBytes: 8388608
//	  idleSessionMs: 300000  # a session that never called ends after it
//	redact: known            # secrets in output become [REDACTED:<rule>]; off: none
//
// config.Parse reads it (docs/config.md lists every key); its errors name
// the key's path and line, after the file's name: `dsh: config file
// dsh.yaml: local.timeoutMsec: unknown key (line 3); did you mean
// local.timeoutMs?`. An explicit 0 is refused (leave a key out to get its
// default), and so are a value of the wrong type and a duplicate key.
// Without "tasks" in tools there is no task runtime, and
// enableRunInBackground defaults to false; asking for it explicitly then is
// an error, since the model could start tasks it could neither read nor
// stop. host.Standard builds the stack from the file.
//
// # dsh's own secrets
//
// Before anything else, main hands the process to package guard: dsh
// makes itself not dumpable and, when its environment holds credentials,
// executes itself again without them, holding them in memory only, so
// its commands (unless root) can read neither its environment nor its
// memory and cannot take or write to its descriptors (docs/spec.md §2.4).
// dsh serve's token is read from there. Running as root with the local
// executor and no sandbox, dsh mcp and dsh serve log a warning at start:
// root's commands can read any process's memory.
//
// # Exit status and errors
//
// Bad flags, a missing or malformed config file, an unknown config key, an
// unusable --workdir or a local.spillDir another user could write: one
// line on stderr ("dsh: …"), exit status 2. Other
// failures to start: one line, exit status 1. Logs go to stderr only, as
// log/slog text.
//
// # dsh run
//
// Runs one `bash` call (description "dsh run") through the full pipeline,
// in a session whose cwd is --workdir, else the config's local.cwd, else the
// process cwd. The arguments after the flags are joined with spaces into the
// command; `--` ends the flags, and flags are not looked for after the first
// argument. --timeout is a Go duration (100ms, 2m), sent as timeoutMs, and
// capped by the executor's maxTimeoutMs like any other call.
//
// stdout gets exactly the text the model would read, nothing added
// (`echo hello` prints "hello\n"; `exit 3` prints "(no output)\n[exit code:
// 3]" with no final newline, as the model reads it). With --background, a
// newline separates each printed result from the next. The exit
// status is the command's: its exit code; 124 when the timeout fired (even if
// the command then exited 0); 128+n when a signal killed it; 1 for an error
// result (validation, spawn failure), whose "Error: …" text is printed on
// stdout as the model would see it.
//
// With --background the call starts a task: the start line is printed, then
// dsh waits with task_output (wait: true, maxWaitTimeoutMs at a time) until
// the task ends, printing each task_output text, and exits with the task's
// status: the exit code of a completed task, 128+n for one killed by a signal,
// 1 otherwise.
//
// SIGINT or SIGTERM cancels the call: a foreground command is killed at once
// ("Error: command aborted"); a background task is killed with task_kill
// (its text printed) and awaited, its last output printed. Either way dsh
// exits 128+n for the signal it received (130 for Ctrl-C), like a shell.
//
// A "full output" path dsh run prints is still there after dsh exits:
// with the local executor, dsh run spills into its own base,
// "dsh-run-<uid>" (mode 0700, refused when it is not a real directory of
// this user's that no one else can enter) under local.spillDir (default:
// the OS temp dir), apart from the base of dsh mcp and dsh serve, whose
// start-up sweep removes the directories of every executor that exited.
// Neither the session's end nor the executor's close removes them there
// (host.WithKeptSpills); each dsh run removes the spill directories in it
// last modified more than 24 hours ago; dsh clean removes them at once
// (but a running dsh run's), saying how many files and bytes it removed.
// A sandboxed run spills into a
// "kept" directory of its private one, which outlives the session's
// sandbox scope. With executor ssh the files are the remote host's and go
// when dsh exits, as before.
//
// On a terminal, dsh run ends its output with a newline when the model's
// text does not end in one, so that the shell's prompt starts on a line
// of its own; into a pipe or a file it prints the model's text exactly.
//
// # dsh tools
//
// Prints a JSON array of the tools a model is shown, each
// {name, description, inputSchema, outputSchema, annotations} with the MCP
// annotation hints, indented; then a blank line and the assembled prompt.
//
// # dsh version
//
// dsh version and dsh --version print one line: "dsh <version> (commit
// <12 hex>[+dirty], <commit date>) <go version> <os>/<arch>". The version is
// the release's (scripts/release.sh sets it), else the main module's from
// the build info: the tag for `go install …@vX.Y.Z`, a pseudo-version for a
// build in a git checkout, "(devel)" when Go recorded none. The commit, its
// date and "+dirty" (uncommitted changes) come from the build info's
// vcs.revision, vcs.time and vcs.modified; without them (-buildvcs=false,
// a build outside a git checkout or in a git worktree, whose .git Go does
// not recognise) the line says "commit unknown: built without version
// control information". The date is the commit's, not the build's, so the
// same commit builds the same binary.
//
// # dsh doctor
//
// Prints the version, the shell's path, the containment the executor uses
// here ("cgroup v2, one cgroup per command under …", or "marker: …" with
// the reason no cgroup could be made), the sandbox ("sandbox: off", or
// "sandbox:" and one indented line per fact: backend and version, mode,
// network, what it does differently, docs/spec.md §11), whether
// commands can reach dsh's own memory ("self:", docs/spec.md §2.4), and
// where the command policy's rules come from (docs/spec.md §9.6). Making the executor
// also runs its start-up sweep of processes left by a dsh that died. A
// configured sandbox that cannot be enforced here is exit 2.
//
// With executor ssh it connects as a command would and prints, after the
// version: the executor, host and port, user, login key (type,
// fingerprint, identity file or agent), the host key, the remote bash's
// version, the remote programs dsh runs (sh, bash, setsid; cat, mkdir, rm,
// ls, id for spill files), the round trips of a keep-alive and of `true`
// through the wrapper, and the spill directory base. A host it cannot
// reach or log in to, one that lacks a program, or one whose spill base
// another user could change exits 1; a known_hosts file that cannot be
// read is a usage error.
//
// # dsh policy check
//
// Prints what the command policy decides for COMMAND in a session whose cwd
// is --workdir (else local.cwd, else dsh's cwd), without running it or
// asking anyone: the decision alone on the first line, then one line per
// part with its decision and what decided it; --json prints one object.
//
// # dsh mcp, dsh serve
//
// Both serve the tools through package mcpserver: every MCP session is one
// owner whose cwd is --workdir, else the client's first file:// root, else
// dsh's cwd; the prompt is the server's instructions. With executor ssh the
// roots and dsh's cwd name nothing on the remote host: the cwd is
// --workdir (a remote path, taken as given), else ssh.cwd, else the remote
// user's home.
//
// dsh mcp serves one session on stdin/stdout until stdin reaches EOF or dsh
// gets SIGINT/SIGTERM; either way the session ends (its tasks are killed and
// awaited), the app closes, and dsh exits 0. At EOF every request read is
// answered first, so `dsh mcp < session.jsonl` gets every answer
// (mcpserver's line transport holds the end of input back). Started with
// stdin on a terminal, it first says on stderr, in one line, that it speaks
// MCP to a client and how to try it (mcpTerminalHint), then serves as usual.
//
// dsh serve listens on --addr and serves MCP at /mcp. Every request must
// carry the bearer token, read from --token-file (surrounding whitespace
// trimmed; one line), else from the DSH_TOKEN environment variable; the flag
// wins when both are set, since it is the explicit choice. A token must have
// at least 16 characters, and a token file must be private to its owner
// (no access for group or others, as ssh asks of a key). Without a token
// dsh refuses to start unless --no-auth is given and the --addr host is
// loopback (127.0.0.0/8, ::1 or localhost); --no-auth together with a token
// is refused too, since it is unclear which the user meant. --addr
// unix:PATH serves a Unix socket of mode 0600 instead, which needs no
// token: only processes of dsh's own user may connect (their peer
// credentials are checked too). --no-auth on a TCP address prints a
// one-line warning that every local user can use it. Those refusals,
// an unreadable or empty token file and a missing --addr are usage errors
// (exit 2); an address that cannot be bound is exit 1. A session that makes
// no request for --idle-timeout (default 30m; 0: never) is ended, and one
// that made no tool call serve.idleSessionMs (5m) after its initialize. On SIGINT
// or SIGTERM the HTTP server shuts down (open streams get 5 s to finish, then
// their connections are closed), every session ends, the app closes, and dsh
// exits 0. DSH_TOKEN never reaches a command: the executor's credential
// scrub drops it by name. Both listeners (--addr, --metrics-addr) bound
// the connections that never authenticated, and neither accepts a
// connection into the last file descriptors, which are kept for commands
// (fds.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/bash/ssh"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/guard"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// Exit statuses of dsh itself (dsh run also exits with the command's).
const (
	exitFailure = 1
	exitUsage   = 2
)

// exitError ends dsh with code, printing msg as one line on stderr when it
// is not empty. Every error a command returns is one; any other error comes
// from cobra (an unknown flag or command) and is a usage error.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// stackError is the exit for a stack that could not be built: 2, as for a
// usage error, when the configured sandbox cannot be enforced here
// ("dsh: sandbox: bubblewrap not found … and Landlock is not available:
// kernel ABI 0"): dsh never runs commands unsandboxed instead. Else 1.
func stackError(err error) error {
	if errors.Is(err, sandbox.ErrUnavailable) {
		return usageError("%s", strings.TrimPrefix(err.Error(), local.Name+": "))
	}
	return failure("%v", err)
}

func failure(format string, args ...any) error {
	return &exitError{code: exitFailure, msg: fmt.Sprintf(format, args...)}
}

// exitCode ends dsh with code and nothing on stderr.
func exitCode(code int) error { return &exitError{code: code} }

// extraCommands are added by the files that build them (serve.go).
var extraCommands []func(streams) *cobra.Command

// streams are the command's stdout and stderr.
type streams struct {
	out, err io.Writer
}

func main() {
	// Started as the landlock helper (local.sandbox.helper: this
	// binary), it confines itself and becomes the shell; else it returns.
	sandbox.HelperMain()
	// Before anything else: the credentials out of the process image,
	// the process out of its commands' reach (package guard).
	guard.Main(local.Secret)
	closeInheritedOnExec()
	os.Exit(execute(os.Args[1:], streams{out: os.Stdout, err: os.Stderr}))
}

// closeInheritedOnExec marks every descriptor dsh inherited beyond 0-2
// close-on-exec: os/exec passes a command every descriptor without that
// flag, so a socket or a file open in dsh's parent would otherwise reach
// every command the model runs. (dsh's own descriptors have the flag.)
func closeInheritedOnExec() {
	entries, err := os.ReadDir(ownFDs)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// execute runs dsh with args and returns its exit status.
func execute(args []string, s streams) int {
	root := newRoot(s)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		ee = &exitError{code: exitUsage, msg: err.Error()}
	}
	if ee.msg != "" {
		fmt.Fprintf(s.err, "dsh: %s\n", oneLine(ee.msg))
	}
	return ee.code
}

func newRoot(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "dsh",
		Short:         "dsh: the shell for LLM agents (an MCP server and a CLI)",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Without a subcommand, a command is missing: a usage error; an
		// argument is a mistyped one.
		Args: subcommandArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("missing command: try dsh --help")
		},
		// Every command with --config finds its file the same way.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return resolveConfigFlag(cmd)
		},
		SuggestionsMinimumDistance: 2,
	}
	// dsh --version prints what dsh version does.
	root.Version = readBuildFacts().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		hint := flagSuggestion(c, err)
		if c.HasParent() {
			return usageError("%s: %v%s", c.Name(), err, hint)
		}
		return usageError("%v%s", err, hint)
	})
	root.AddCommand(newRunCmd(s), newToolsCmd(s), newVersionCmd(s), newDoctorCmd(s), newPolicyCmd(s))
	for _, mk := range extraCommands {
		root.AddCommand(mk(s))
	}
	// Made now rather than when the command runs, so that describe and
	// the help tests see them: help, and completion bash|zsh|fish.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	limitCompletion(root)
	describe(root)
	return root
}

// completionShells are the shells dsh completion writes a script for, in
// the order its error names them. Cobra's powershell is left out while dsh
// does not build on Windows.
var completionShells = []string{"bash", "zsh", "fish"}

// limitCompletion keeps cobra's completion subcommands for
// completionShells only, and makes any other argument a usage error
// (cobra would print the help and exit 0).
func limitCompletion(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, sub := range c.Commands() {
			if !slices.Contains(completionShells, sub.Name()) {
				c.RemoveCommand(sub)
			}
		}
		c.Use, c.DisableFlagsInUseLine = "completion "+strings.Join(completionShells, "|"), true
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageError("%s", unsupportedShell(args[0]))
		}
	}
}

// unsupportedShell is the error for dsh completion SHELL of another shell
// (exact, docs/spec.md §8): `completion: unsupported shell "tcsh"
// (supported: bash, zsh, fish)`.
func unsupportedShell(shell string) string {
	return "completion: unsupported shell " + strconv.Quote(shell) + " (supported: " + strings.Join(completionShells, ", ") + ")"
}

// newLogger is dsh's logger: text on stderr at INFO and above, also the
// default for the packages that log through slog's default.
func newLogger(w io.Writer) *slog.Logger { return newLevelLogger(w, slog.LevelInfo) }

// newLevelLogger is newLogger at level.
func newLevelLogger(w io.Writer, level slog.Level) *slog.Logger {
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	return log
}

// logLevels are the values of --log-level, least verbose first.
var logLevels = []string{"error", "warn", "info", "debug"}

// addLogLevel adds --log-level to cmd, with completion of its values, and
// returns the function that parses it (a usage error for another value).
func addLogLevel(cmd *cobra.Command) func() (slog.Level, error) {
	var v string
	cmd.Flags().StringVar(&v, "log-level", "info", "what dsh logs on stderr: "+strings.Join(logLevels, ", ")+" (each includes the ones before it)")
	_ = cmd.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions(logLevels, cobra.ShellCompDirectiveNoFileComp))
	return func() (slog.Level, error) {
		var l slog.Level
		if !slices.Contains(logLevels, v) || l.UnmarshalText([]byte(v)) != nil {
			return 0, usageError("%s: --log-level %q: want one of %s", cmd.Name(), v, strings.Join(logLevels, ", "))
		}
		return l, nil
	}
}

// closeStack ends the stack, logging what it could not clean up (a spill
// directory it could not remove).
func closeStack(st *host.Stack, log *slog.Logger) {
	if err := st.Close(); err != nil {
		log.Warn("closing the executor", "err", err)
	}
}

// setup loads the config and resolves --workdir (made absolute; it must be
// an existing directory). With executor ssh --workdir names a directory of
// the remote host and is taken as given. Its errors are usage errors.
func setup(configPath, workdir string) (config.File, string, error) {
	cfg, err := loadConfig(configPath)
	if err != nil {
		return config.File{}, "", usageError("%v", err)
	}
	if cfg.Executor == config.ExecutorSSH {
		// What the executor checks when it is made (known_hosts, the
		// host's form) is a usage error too. Directories are the remote
		// host's: the executor checks them there, per command.
		e, err := ssh.New(cfg.SSH, ssh.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			return config.File{}, "", usageError("%v", err)
		}
		_ = e.Close()
		return cfg, workdir, nil
	}
	// What the executor would only find out at the first command.
	if cfg.Local.Cwd != "" {
		if _, err := checkDir("local.cwd", cfg.Local.Cwd); err != nil {
			return config.File{}, "", err
		}
	}
	var unsafe *capture.UnsafeBaseError
	if _, err := capture.CheckBase(cfg.Local.SpillDir); errors.As(err, &unsafe) {
		return config.File{}, "", usageError("local.spillDir: %v", err)
	}
	shell := cfg.Local.Shell
	if shell == "" {
		shell = "bash"
	}
	if _, err := exec.LookPath(shell); err != nil {
		return config.File{}, "", usageError("local.shell %s: not found or not executable", shell)
	}
	if workdir == "" {
		return cfg, "", nil
	}
	abs, err := checkDir("--workdir", workdir)
	if err != nil {
		return config.File{}, "", err
	}
	return cfg, abs, nil
}

// defaultCwd is the cwd of a session without --workdir: the executor's
// configured cwd (local.cwd or ssh.cwd), or "" for its own default.
func defaultCwd(cfg config.File) string {
	if cfg.Executor == config.ExecutorSSH {
		return cfg.SSH.Cwd
	}
	return cfg.Local.Cwd
}

// checkDir returns dir made absolute, or a usage error naming what when it
// is not a directory.
func checkDir(what, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageError("%s %s: %v", what, dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", usageError("%s %s: %v", what, dir, pathErr(err))
	case !fi.IsDir():
		return "", usageError("%s %s: not a directory", what, dir)
	}
	return abs, nil
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM,
// a func that returns that signal (nil before), and a stop func that
// releases the signals and the watching goroutine. Later signals are
// swallowed until stop.
func signalContext(parent context.Context) (ctx context.Context, received func() os.Signal, stop func()) {
	return drainSignals(parent, nil)
}

// drainSignals is signalContext, except that with drain set the first
// SIGTERM closes drain instead (dsh serve drains: docs/spec.md §15.3);
// SIGINT, or another SIGTERM, then cancels the context.
func drainSignals(parent context.Context, drain chan struct{}) (ctx context.Context, received func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	var (
		mu  sync.Mutex
		got os.Signal
	)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case sig := <-ch:
				mu.Lock()
				got = sig
				mu.Unlock()
				if sig == syscall.SIGTERM && drain != nil {
					close(drain)
					drain = nil // the next one stops at once
					continue
				}
				cancel(fmt.Errorf("received %v", sig))
				return
			case <-quit:
				return
			}
		}
	})
	received = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(ch)
			close(quit)
			wg.Wait()
			cancel(nil)
		})
	}
	return ctx, received, stop
}

// signalStatus is the exit status for a death by sig: 128+n.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitFailure
}
