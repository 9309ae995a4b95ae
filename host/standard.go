package host

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/bash/ssh"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/audit"
	"github.com/dsh-go/dsh/internal/hooks"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/redact"
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
	// Gate applies the command policy and asks about calls that leave the
	// sandbox; nil without a permissions section and without a sandbox.
	Gate *permissions.Gate
	// Hooks run hook commands around calls; nil without hooks configured.
	Hooks *hooks.Hooks
	// Audit is the audit log; nil without one configured.
	Audit *audit.Log

	host      *Host
	hooksExec *local.Executor // the hooks' own executor, with executor ssh
	running   atomic.Int64    // foreground commands running (the metrics)
}

// ForegroundRunning counts the bash tool's foreground commands running
// now, in all sessions.
func (s *Stack) ForegroundRunning() int64 { return s.running.Load() }

// plugins maps the names of the config's tools list to their plugins.
var plugins = map[string]struct {
	name string
	make func(config.File, *redact.Redactor, options, *Stack) Plugin
}{
	config.ToolBash: {bashtool.PluginName, func(f config.File, r *redact.Redactor, o options, s *Stack) Plugin {
		opts := []bashtool.Option{bashtool.WithSandbox(f.Local.Sandbox), bashtool.WithRedactor(r), bashtool.WithRunning(&s.running)}
		if o.keepSpills {
			opts = append(opts, bashtool.WithSpillsKept())
		}
		return BashTool(f.Bash, opts...)
	}},
	config.ToolTasks: {tasktool.PluginName, func(f config.File, _ *redact.Redactor, _ options, _ *Stack) Plugin { return TaskTools(f.Tasks) }},
}

// Standard builds the stack cfg describes (its zero value is the default
// configuration; the defaults are applied here). The tools are registered
// in the order cfg.Tools names them. On error nothing is left running.
func Standard(cfg config.File, opts ...Option) (*Stack, error) {
	o := newOptions(opts)
	if err := cfg.Validate(); err != nil {
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
	s := &Stack{
		Tools:  tool.NewRegistry(tool.WithLogger(o.log)),
		Prompt: prompt.NewRegistry(),
	}
	if err := s.newExecutor(cfg, o); err != nil {
		return nil, err
	}
	s.host = New(opts...)
	if cfg.Has(config.ToolTasks) {
		s.Tasks = tasks.New(tasks.Config{MaxRunningPerSession: cfg.Tasks.MaxRunningPerSession, MaxRunning: cfg.Tasks.MaxRunning, Logger: o.log})
	}
	if err := s.useHooks(cfg, o); err != nil {
		_ = s.Close()
		return nil, err
	}
	s.Gate = newGate(cfg, o)
	if s.Gate != nil {
		s.Tools.UsePre(s.Gate.Middleware())
	}
	red, err := redact.New(cfg.Redact)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	s.useAudit(cfg, red, o)
	if err := s.compose(cfg, red, o); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// useAudit opens the audit log, when cfg names one, and makes it see
// every call that ends and every task that settles (docs/spec.md §15).
func (s *Stack) useAudit(cfg config.File, red *redact.Redactor, o options) {
	if cfg.Audit.Path == "" {
		return
	}
	s.Audit = audit.Open(cfg.Audit.Path, audit.Options{Redactor: red, Logger: o.log})
	s.Tools.Observe(s.Audit.Call)
	if s.Tasks != nil {
		s.Tasks.OnSettled(s.Audit.TaskEnd)
	}
}

// newGate makes the permissions gate: the command policy of a permissions
// section, and with a sandbox on the asking about calls that leave it
// (docs/spec.md §11), which needs the gate even without a section. nil
// when there is neither: nothing to decide, nothing to pay.
func newGate(cfg config.File, o options) *permissions.Gate {
	// Hooks and leaving the sandbox may ask the user even without rules.
	if cfg.Permissions == nil && !cfg.Local.Sandbox.On() && !hooks.Configured(cfg) {
		return nil
	}
	po := o.permissions
	po.Logger, po.DefaultCwd, po.Sandbox = o.log, cfg.Local.Cwd, cfg.Local.Sandbox
	if cfg.Executor == config.ExecutorSSH {
		// A session's cwd is on the remote host: PROJECT comes only
		// from CLAUDE_PROJECT_DIR (docs/spec.md §13).
		po.DefaultCwd, po.RemoteSessions = cfg.SSH.Cwd, true
	}
	if cfg.Permissions == nil {
		return permissions.NewWithoutPolicy(po)
	}
	return permissions.New(*cfg.Permissions, po)
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
	lopts := []local.Option{local.WithLogger(o.log), local.WithHidden(o.hide...)}
	if o.keepSpills {
		lopts = append(lopts, local.WithKeptSpill())
	}
	e, err := local.New(cfg.Local, lopts...)
	if err != nil {
		return err
	}
	s.Local, s.Executor = e, e
	return nil
}

// compose provides the services, then loads the plugins in the order the
// config names them: each applies as it loads.
func (s *Stack) compose(cfg config.File, red *redact.Redactor, o options) error {
	errs := []error{
		Provide(s.host, Tools, s.Tools),
		Provide(s.host, Prompt, s.Prompt),
		Provide(s.host, Executor, s.Executor),
	}
	if s.Tasks != nil {
		errs = append(errs, Provide(s.host, Tasks, s.Tasks))
	}
	for _, name := range cfg.Tools {
		errs = append(errs, s.host.Load(plugins[name].make(cfg, red, o, s)))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// A plugin whose Apply failed stays pending (and its error was
	// returned above); check anyway, so a silently missing tool cannot
	// pass for a working configuration.
	for _, name := range cfg.Tools {
		if p := plugins[name].name; !s.host.Active(p) {
			return fmt.Errorf("tool plugin %s did not load", p)
		}
	}
	return nil
}

// Close ends everything the stack started, in order: the host disposes the
// plugins (the tools stop taking calls that start tasks), the task runtime
// kills and awaits every task, and the executor kills and awaits whatever
// is left and removes its spill directory, and the audit log is closed. Its
// error is the executor's (a spill directory it could not remove) or the
// audit log's.
func (s *Stack) Close() error {
	s.host.Close()
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

// useHooks installs the hooks, when cfg has any, before the command policy
// (they feed it: docs/spec.md §10). Hook commands run on this machine
// through a local executor: the stack's, or one of their own with executor
// ssh.
func (s *Stack) useHooks(cfg config.File, o options) error {
	if !hooks.Configured(cfg) {
		return nil
	}
	exec := s.Local
	if exec == nil {
		e, err := local.New(cfg.Local, local.WithLogger(o.log))
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
	s.Tools.UsePre(h.Pre(s.Tools))
	s.Tools.UsePost(h.Post())
	return nil
}
