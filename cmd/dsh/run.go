package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/num"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// Exit statuses of dsh run beyond the command's own.
const (
	exitTimedOut = 124 // as timeout(1)
	runSessionID = "cli-run"
	runDesc      = "dsh run"
	// runSpillAge is how long dsh run's spill files are kept: a later
	// dsh run removes older ones.
	runSpillAge = 24 * time.Hour
)

type runFlags struct {
	config, workdir string
	timeout         time.Duration
	background      bool
}

func newRunCmd(s streams) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND...",
		Short: "Run one command through the bash tool and print what the model would read",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usageError("run: no command given (dsh run [flags] -- COMMAND...)")
			}
			if cmd.Flags().Changed("timeout") && f.timeout <= 0 {
				return usageError("run: --timeout must be positive, got %v", f.timeout)
			}
			return runCommand(f, strings.Join(args, " "), s)
		},
	}
	fl := cmd.Flags()
	// Everything after the first argument is the command's, flags included.
	fl.SetInterspersed(false)
	fl.StringVar(&f.config, "config", "", configFlagHelp)
	fl.StringVar(&f.workdir, "workdir", "", "working directory of the command (default: the config's local.cwd, else the current directory; with executor ssh: ssh.cwd, else the remote home)")
	fl.DurationVar(&f.timeout, "timeout", 0, "timeout of the command, a Go duration such as 100ms or 2m (default: the config's local.timeoutMs)")
	fl.BoolVar(&f.background, "background", false, "start the command as a background task and wait for it with task_output")
	return cmd
}

func runCommand(f runFlags, command string, s streams) error {
	cfg, workdir, err := setup(f.config, f.workdir)
	if err != nil {
		return err
	}
	if !cfg.Has(config.ToolBash) {
		return usageError("run: the config loads no bash tool (tools: %v)", cfg.Tools)
	}
	if workdir == "" {
		workdir = defaultCwd(cfg)
	}
	if workdir == "" && cfg.Executor != config.ExecutorSSH {
		// Over SSH no cwd is the remote user's home, the executor's
		// default; here it is dsh's own.
		if workdir, err = os.Getwd(); err != nil {
			return failure("run: %v", err)
		}
	}
	log := newLogger(s.err)
	var opts []host.Option
	if cfg.Executor != config.ExecutorSSH {
		if cfg.Local.SpillDir, err = runSpillBase(cfg.Local.SpillDir, log); err != nil {
			return err
		}
		opts = append(opts, host.WithKeptSpills())
	}
	// Signals are caught until everything is closed: a Ctrl-C while the
	// tasks are being awaited must not leave them to the kernel.
	ctx, received, stop := signalContext(context.Background())
	defer stop()
	st, err := host.Standard(cfg, append(opts, host.WithConfigFile(f.config), host.WithLogger(log), host.WithVersion(buildVersion))...)
	if err != nil {
		return stackError(err)
	}
	defer closeStack(st, log)
	sess := session.New(runSessionID, workdir, session.WithLogger(log))
	defer sess.End()

	args := map[string]any{"command": command, "description": runDesc}
	if f.timeout > 0 {
		args["timeoutMs"] = float64(f.timeout) / float64(time.Millisecond)
	}
	if f.background {
		args["run_in_background"] = true
	}
	r := &runner{tools: st.Tools, sess: sess, out: s.out, asker: terminalAsker(s.err, st.Started)}
	defer r.finish()
	res := r.call(ctx, bashtool.Name, args)
	r.print(res)
	if res.IsError {
		if sig := received(); sig != nil {
			return exitCode(signalStatus(sig))
		}
		return exitCode(exitFailure)
	}
	if !f.background {
		return exitCode(foregroundStatus(res))
	}
	started, _ := res.Structured.(bashtool.Structured)
	if started.TaskID == "" {
		return failure("run: the bash tool returned no task id")
	}
	waitMs := num.CeilMillis(cfg.Tasks.MaxWaitTimeout)
	return exitCode(r.await(ctx, received, started.TaskID, waitMs))
}

// runner makes the calls of one dsh run and prints their texts.
type runner struct {
	tools *tool.Registry
	sess  *session.Session
	out   io.Writer
	asker tool.Asker // nil: nobody can be asked

	printed bool // a result was printed
	last    byte // the last byte printed
}

// finish ends the output with a newline when it goes to a terminal and
// does not end in one, so that the shell's prompt starts on a line of its
// own; a pipe or file gets exactly the model's text.
func (r *runner) finish() {
	f, ok := r.out.(*os.File)
	if ok && r.printed && r.last != '\n' && isTerminal(f) {
		io.WriteString(r.out, "\n")
	}
}

// runSpillBase makes (or checks) dsh run's own spill base,
// "dsh-run-<uid>" under base (the OS temp dir when empty), and removes
// the spill directories in it older than runSpillAge. dsh run's spill
// files outlive it there, since it printed their paths; they are apart
// from the other front ends' base, whose sweep removes the directories of
// every executor that exited. The directory must be a real one of this
// user's that no one else can enter.
func runSpillBase(base string, log *slog.Logger) (string, error) {
	dir := runSpillDir(base)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", failure("run: spill directory %s: %v", dir, pathErr(err))
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", failure("run: spill directory %s: %v", dir, pathErr(err))
	}
	if !privateDir(fi) {
		return "", failure("run: spill directory %s: %s", dir, notPrivateDir)
	}
	removed, err := capture.SweepOlder(dir, time.Now().Add(-runSpillAge))
	if err != nil {
		log.Warn("run: removing old spill files", "err", err)
	}
	if len(removed) > 0 {
		log.Info("run: removed spill directories older than 24h", "dirs", removed)
	}
	return dir, nil
}

// runSpillDir is dsh run's spill base under base (the OS temp dir when
// empty): "dsh-run-<uid>".
func runSpillDir(base string) string {
	if base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, fmt.Sprintf("dsh-run-%d", os.Getuid()))
}

// notPrivateDir says why dsh run's spill base is refused.
const notPrivateDir = "not a directory of this user's with mode 0700"

// privateDir reports whether fi (of Lstat) is a real directory of this
// user's that no one else can enter: the only dsh-run-<uid> dsh writes
// into or removes from.
func privateDir(fi os.FileInfo) bool {
	st, _ := fi.Sys().(*syscall.Stat_t)
	return fi.IsDir() && st != nil && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 == 0
}

func (r *runner) call(ctx context.Context, name string, args map[string]any) tool.Result {
	raw, err := json.Marshal(args)
	if err != nil {
		return tool.ErrorResult(tool.CodeFailed, err.Error())
	}
	return r.tools.Execute(ctx, tool.Call{Name: name, Args: raw, Session: r.sess, Asker: r.asker})
}

// print writes the result's blocks exactly as the model reads them, joined
// by newlines; a newline also separates one printed result from the next.
func (r *runner) print(res tool.Result) {
	texts := make([]string, 0, len(res.Content)+len(res.Notes))
	for _, c := range res.Content {
		texts = append(texts, c.Text)
	}
	texts = append(texts, res.Notes...)
	if r.printed {
		io.WriteString(r.out, "\n")
	}
	r.printed = true
	text := strings.Join(texts, "\n")
	if text != "" {
		r.last = text[len(text)-1]
	}
	io.WriteString(r.out, text)
}

// await waits for the background task id with task_output until it ends,
// printing every read, and returns the exit status. A signal kills the
// task (task_kill), which is then awaited like any other end.
func (r *runner) await(ctx context.Context, received func() os.Signal, id string, waitMs int64) int {
	killed := false
	for {
		res := r.call(ctx, "task_output", map[string]any{"task_id": id, "wait": true, "timeout_ms": waitMs})
		if sig := received(); sig != nil && !killed {
			// The wait was aborted, or raced the signal: stop the task
			// and wait for its end without a context to cancel.
			killed = true
			ctx = context.Background()
			if !res.IsError {
				r.print(res)
			}
			r.print(r.call(ctx, "task_kill", map[string]any{"task_id": id}))
			continue
		}
		r.print(res)
		if res.IsError {
			return exitFailure
		}
		snap, ok := res.Structured.(tasks.Snapshot)
		if !ok {
			fmt.Fprintf(r.out, "run: task_output returned no task snapshot\n")
			return exitFailure
		}
		if !snap.Status.Terminal() {
			continue
		}
		if killed {
			return signalStatus(received())
		}
		return taskStatus(snap)
	}
}

// foregroundStatus is the exit status of a foreground bash result: 124 on
// timeout, 128+n for a signal, else the exit code.
func foregroundStatus(res tool.Result) int {
	st, ok := res.Structured.(bashtool.Structured)
	switch {
	case !ok:
		return exitFailure
	case st.TimedOut:
		return exitTimedOut
	case st.Signal != "":
		return signalNameStatus(st.Signal)
	case st.ExitCode != nil:
		return *st.ExitCode
	}
	return exitFailure
}

// taskStatus is the exit status of a finished background task, from its
// exit facts (the data behind its detail, docs/spec.md §3.5): an exit code N →
// N, a signal → 128+n, no facts (killed before exit, failed) → 1.
func taskStatus(snap tasks.Snapshot) int {
	switch {
	case snap.Exit.Signal != "":
		return signalNameStatus(snap.Exit.Signal)
	case snap.Exit.Code != nil:
		return *snap.Exit.Code
	}
	return exitFailure
}

// signalNameStatus is 128+n for a signal name such as SIGTERM; 1 for a name
// this system does not know.
func signalNameStatus(name string) int {
	if n := unix.SignalNum(name); n != 0 {
		return 128 + int(n)
	}
	return exitFailure
}
