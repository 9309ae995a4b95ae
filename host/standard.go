package host

import (
	"errors"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/bash/ssh"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/audit"
	"github.com/dsh-go/dsh/internal/hooks"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/telemetry"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// Stack is dsh assembled from a config file: the executor, the task runtime
// (when the task tools are loaded), the tool registry with the configured
// tools, and the prompt. Front ends use Tools and Prompt; Close ends
// everything.
type Stack struct {
	Tools  *tool.Registry
	Prompt *prompt.Registry
	// Executor runs the commands: Local or SSH, as the config's executor
	// says.
	Executor bash.Executor
	// Local is the local executor; nil with executor ssh.
	Local *local.Executor
	// SSH is the SSH executor; nil with executor local.
	SSH *ssh.Executor
	// Tasks is the task runtime; nil without the task tools.
	Tasks *tasks.Service
	// Gate applies the command policy (without a permissions section,
	// the Bash rules of Claude Code's settings files) and asks about
	// calls that leave the sandbox; [Standard] always makes one.
	Gate *permissions.Gate
	// Hooks run hook commands around calls; nil without hooks configured.
	Hooks *hooks.Hooks
	// Audit is the audit log; nil without one configured.
	Audit *audit.Log
	// Telemetry exports spans, the audit records and the metrics over
	// OTLP; nil when the otel section and the OTEL_* variables name no
	// receiver (docs/spec.md §15.5).
	Telemetry *telemetry.Telemetry
	audit     atomic.Pointer[audit.Log] // Audit, for the gateway's goroutines

	hooksExec *local.Executor // the hooks' own executor, with executor ssh
	running   atomic.Int64    // foreground commands running (the metrics)
	// netAllowed and netDenied count the sandbox's connections by
	// decision (network by domain, the metrics).
	netAllowed, netDenied atomic.Int64
	// stopTools undoes what addTools did, for Close: the registered tools
	// and sections removed, the task tools' attachment and notices
	// stopped.
	stopTools []func()
}

// NetConnections counts the connections of sandboxed commands that the
// network map decided, by decision ("allow" or "deny").
func (s *Stack) NetConnections(decision string) int64 {
	if decision == gateway.Allow {
		return s.netAllowed.Load()
	}
	return s.netDenied.Load()
}

// netRecord counts a connection and writes its audit line.
func (s *Stack) netRecord(owner string, r gateway.Record) {
	if r.Decision == gateway.Allow {
		s.netAllowed.Add(1)
	} else {
		s.netDenied.Add(1)
	}
	if a := s.audit.Load(); a != nil {
		a.Net(owner, r)
	}
	s.Telemetry.Net(owner, r)
}

// ForegroundRunning counts the bash tool's foreground commands running
// now, in all sessions.
func (s *Stack) ForegroundRunning() int64 { return s.running.Load() }

// Standard builds the stack cfg describes (its zero value is the default
// configuration: the local executor, sandboxed where a backend works; the
// defaults are applied here). On error nothing is left running.
//
// The executor and the task runtime come first: everything else is built
// over them. [Stack.wire] then installs on the registry what a call
// meets, in the order it meets it.
func Standard(cfg config.File, opts ...Option) (*Stack, error) {
	o := newOptions(opts)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	red, err := redact.New(cfg.Redact)
	if err != nil {
		return nil, err
	}
	if cfg.Audit.IsFile() {
		// Sandboxed commands neither read nor edit it. Hidden by its
		// absolute path: the sandbox's cwd is the command's, not dsh's.
		if abs, err := filepath.Abs(cfg.Audit.Path); err == nil {
			o.hide = append(o.hide, abs)
		}
	}
	cfg = cfg.WithDefaults()
	tel := telemetry.New(cfg.Otel, telemetry.Options{Logger: o.log, Redactor: red, Version: o.version})
	s := &Stack{
		Tools:     tool.NewRegistry(tool.WithLogger(o.log), tool.WithTracer(tel.Tracer())),
		Prompt:    prompt.NewRegistry(),
		Telemetry: tel,
	}
	if err := s.newExecutor(cfg, o); err != nil {
		_ = tel.Shutdown()
		return nil, err
	}
	// From here on the sandbox is as it applies: mode auto is
	// workspace-write where a backend works here, else off.
	if s.Local != nil {
		cfg.Local.Sandbox = s.Local.Applied(cfg.Local.Sandbox)
	}
	if cfg.Has(config.ToolTasks) {
		s.Tasks = tasks.New(tasks.Config{MaxRunningPerSession: cfg.Tasks.MaxRunningPerSession, MaxRunning: cfg.Tasks.MaxRunning, Logger: o.log})
	}
	if err := s.wire(cfg, red, o); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// newExecutor makes the executor cfg names.
func (s *Stack) newExecutor(cfg config.File, o options) error {
	if cfg.Executor == config.ExecutorSSH {
		e, err := ssh.New(cfg.SSH, ssh.WithLogger(o.log))
		if err != nil {
			return err
		}
		s.SSH, s.Executor = e, e
		return nil
	}
	ask := cfg.Permissions
	if ask == nil {
		ask = &config.Permissions{}
	}
	p := ask.WithDefaults()
	lopts := []local.Option{local.WithLogger(o.log), local.WithHidden(o.hide...), local.WithConfigFile(o.config),
		local.WithNetwork(local.NetOptions{AskTimeout: p.AskTimeout, AskFallback: p.AskFallback, Audit: s.netRecord})}
	if o.keepSpills { // dsh run: one command, then exit
		lopts = append(lopts, local.WithKeptSpill(), local.WithoutSpareNetwork())
	}
	e, err := local.New(cfg.Local, lopts...)
	if err != nil {
		return err
	}
	s.Local, s.Executor = e, e
	return nil
}

// wire installs on the registry what a call meets, in the order it meets
// it: the pre-execute steps, the tools (in the order cfg.Tools names
// them), then what sees the call after it ran: the hooks' post step and
// the audit log.
func (s *Stack) wire(cfg config.File, red *redact.Redactor, o options) error {
	if err := s.usePreSteps(cfg, o); err != nil {
		return err
	}
	if err := s.addTools(cfg, red, o); err != nil {
		return err
	}
	if s.Hooks != nil {
		s.Tools.UsePost(s.Hooks.Post())
	}
	s.useAudit(cfg, red, o)
	if s.Telemetry != nil {
		s.Tools.Observe(s.Telemetry.Call)
		if s.Tasks != nil {
			s.Tasks.OnSettled(s.Telemetry.TaskEnd)
		}
	}
	return nil
}

// usePreSteps installs the pre-execute steps, in the order a call meets
// them (docs/spec.md §5, §10, §11):
//
//  1. The PreToolUse hooks: they may block the call or rewrite its
//     arguments, and their allow or ask is advice (tool.Call.Advice) for
//     the step that decides.
//  2. The gate: the command policy decides a bash call, weighing that
//     advice (a hook's ask is asked; its allow settles only the policy's
//     default ask), and asks the user when it says ask.
//  3. The sandbox escalation ask, inside the gate: a call that asks to
//     leave the sandbox is refused when the config does not allow it,
//     and otherwise asked about even when the policy allows it; the
//     user's yes reaches the bash tool as a consent.
//
// The hooks are installed when there are any; the gate always, since
// Claude Code's settings files may hold rules even without a permissions
// section (a session that finds none parses nothing).
func (s *Stack) usePreSteps(cfg config.File, o options) error {
	if err := s.newHooks(cfg, o); err != nil {
		return err
	}
	if s.Hooks != nil {
		s.Tools.UsePre(s.Hooks.Pre(s.Tools))
	}
	s.Gate = newGate(cfg, o, s.Tasks)
	s.Tools.UsePre(s.Gate.Middleware())
	return nil
}

// newHooks makes the hooks, when cfg has any. Hook commands run on this
// machine through a local executor: the stack's, or one of their own with
// executor ssh.
func (s *Stack) newHooks(cfg config.File, o options) error {
	if !hooks.Configured(cfg) {
		return nil
	}
	exec := s.Local
	if exec == nil {
		e, err := local.New(cfg.Local, local.WithLogger(o.log), local.WithoutSpareNetwork())
		if err != nil {
			return err
		}
		s.hooksExec, exec = e, e
	}
	po := o.permissions
	h, err := hooks.New(cfg, exec, hooks.Options{Home: po.Home, ManagedDir: po.ManagedDir, ProjectDir: po.ProjectDir,
		DefaultCwd: cfg.Local.Cwd, RemoteSessions: cfg.Executor == config.ExecutorSSH, Logger: o.log})
	if err != nil {
		return err
	}
	s.Hooks = h
	return nil
}

// newGate makes the permissions gate: the command policy of the
// permissions section, or without one of Claude Code's settings files
// alone (docs/spec.md §9.1, §9.5), and with a sandbox on the asking about
// calls that leave it (§11).
func newGate(cfg config.File, o options, rt *tasks.Service) *permissions.Gate {
	po := o.permissions
	po.Logger, po.DefaultCwd, po.Sandbox = o.log, cfg.Local.Cwd, cfg.Local.Sandbox
	if rt != nil {
		po.Tasks = typedTasks(rt)
	}
	if cfg.Executor == config.ExecutorSSH {
		// A session's cwd is on the remote host: PROJECT comes only
		// from CLAUDE_PROJECT_DIR (docs/spec.md §13).
		po.DefaultCwd, po.RemoteSessions = cfg.SSH.Cwd, true
	}
	if cfg.Permissions == nil {
		return permissions.NewWithoutSection(po)
	}
	return permissions.New(*cfg.Permissions, po)
}

// addTools registers the tools cfg.Tools names, in its order, with their
// prompt sections: the bash tool over the executor (its background calls
// go to the task runtime, when there is one), the task tools over the
// task runtime.
func (s *Stack) addTools(cfg config.File, red *redact.Redactor, o options) error {
	for _, name := range cfg.Tools {
		var err error
		switch name {
		case config.ToolBash:
			err = s.addBash(cfg, red, o)
		case config.ToolTasks:
			err = s.addTaskTools(cfg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addBash registers the bash tool and its section.
func (s *Stack) addBash(cfg config.File, red *redact.Redactor, o options) error {
	opts := []bashtool.Option{bashtool.WithSandbox(cfg.Local.Sandbox), bashtool.WithRedactor(red), bashtool.WithRunning(&s.running)}
	if s.Local != nil && s.Local.SandboxUnavailable() != nil {
		opts = append(opts, bashtool.WithNoSandboxHere())
	}
	if o.keepSpills {
		opts = append(opts, bashtool.WithSpillsKept())
	}
	if s.Local == nil {
		opts = append(opts, bashtool.WithoutTerminals()) // the SSH executor has none
	}
	t := bashtool.New(s.Executor, s.Tasks, cfg.Bash, opts...)
	return s.add([]tool.Definition{t.Definition()}, bashtool.Section)
}

// addTaskTools registers task_output, task_list and task_kill and their
// section, then attaches them to the task runtime (it accepts tasks from
// then on) and starts the finish notices. cfg was validated already.
func (s *Stack) addTaskTools(cfg config.File) error {
	if err := s.add(tasktool.Definitions(s.Tasks, cfg.Tasks), tasktool.Section()); err != nil {
		return err
	}
	s.stopTools = append(s.stopTools, tasktool.Start(s.Tasks))
	return nil
}

// add registers defs and adds sec, and remembers to remove them on Close.
func (s *Stack) add(defs []tool.Definition, sec prompt.Section) error {
	for _, def := range defs {
		if err := s.Tools.Register(def); err != nil {
			return err
		}
		s.stopTools = append(s.stopTools, func() { s.Tools.Remove(def.Name) })
	}
	if err := s.Prompt.Add(sec); err != nil {
		return err
	}
	s.stopTools = append(s.stopTools, func() { s.Prompt.Remove(sec.Name) })
	return nil
}

// useAudit opens the audit log, when cfg names one, and makes it see
// every call that ends and every task that settles (docs/spec.md §15).
func (s *Stack) useAudit(cfg config.File, red *redact.Redactor, o options) {
	if cfg.Audit.Path == "" {
		return
	}
	s.Audit = audit.Open(cfg.Audit.Path, audit.Options{Redactor: red, Logger: o.log})
	s.audit.Store(s.Audit)
	s.Tools.Observe(s.Audit.Call)
	if s.Tasks != nil {
		s.Tasks.OnSettled(s.Audit.TaskEnd)
	}
}

// Close ends everything the stack started, in order: the tools are
// removed and the task tools stop (no call starts a task any more, and
// none gets a finish notice), the task runtime
// kills and awaits every task, and the executor kills and awaits whatever
// is left and removes its spill directory, and the audit log is closed. Its
// error is the executor's (a spill directory it could not remove) or the
// audit log's.
func (s *Stack) Close() error {
	for _, stop := range slices.Backward(s.stopTools) {
		stop()
	}
	s.stopTools = nil
	if s.Tasks != nil {
		s.Tasks.Close()
	}
	err := s.Executor.Close()
	if s.hooksExec != nil {
		err = errors.Join(err, s.hooksExec.Close())
	}
	if s.Audit != nil {
		// Last: the tasks ended above have written their lines.
		err = errors.Join(err, s.Audit.Close())
	}
	// Likewise: the spans and records of the tasks are flushed. Its
	// failures are the exports', which log themselves.
	_ = s.Telemetry.Shutdown()
	return err
}

// Started waits until the start-up of each local executor of the stack
// is done (see [local.Executor.Started]): the stack's, and the hooks' own
// with executor ssh. A program that asks on a terminal calls it first, so
// that what the start-ups log comes before the question.
func (s *Stack) Started() {
	for _, e := range []*local.Executor{s.Local, s.hooksExec} {
		if e != nil {
			e.Started()
		}
	}
}

// typedTasks is how the gate finds the task a task_input call types into:
// its command, the program in its terminal's foreground, its sandbox.
func typedTasks(rt *tasks.Service) permissions.TaskLookup {
	return func(s *session.Session, id string) (permissions.TypedTask, bool) {
		term, snap, err := rt.Terminal(s, id)
		if err != nil {
			return permissions.TypedTask{}, false
		}
		typed, truncated := term.Typed()
		return permissions.TypedTask{
			Command: snap.Label, Foreground: term.Foreground(), Typed: typed, Truncated: truncated,
			Sandboxed: snap.Sandboxed, Running: snap.Status == tasks.Running,
		}, true
	}
}
