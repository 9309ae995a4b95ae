package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// app is dsh assembled from a config: the executor, the task runtime (when
// the task tools are loaded), the tool registry and the prompt, composed by a
// host with the selected tool plugins. The front ends (MCP, the CLI) use
// Tools and Prompt; Close ends everything in reverse.
type app struct {
	Tools  *tool.Registry
	Prompt *prompt.Registry

	host  *host.Host
	tasks *tasks.Service // nil without the task tools
	exec  *local.Executor
}

// newApp builds the app. On error nothing is left running.
func newApp(cfg configFile) (*app, error) {
	if cfg.Executor != "" && cfg.Executor != executorLocal {
		return nil, fmt.Errorf("unknown executor %q", cfg.Executor)
	}
	exec, err := local.New(cfg.Local)
	if err != nil {
		return nil, err
	}
	a := &app{
		Tools:  tool.NewRegistry(),
		Prompt: prompt.NewRegistry(),
		host:   host.New(),
		exec:   exec,
	}
	if cfg.has(toolTasks) {
		a.tasks = tasks.New(cfg.runtime())
	}
	// The services first, then the plugins in the order the config names
	// them: each applies as it loads, so the tools are listed in that order.
	errs := []error{
		a.host.Provide(host.Tools, a.Tools),
		a.host.Provide(host.Prompt, a.Prompt),
		a.host.Provide(host.Executor, a.exec),
	}
	if a.tasks != nil {
		errs = append(errs, a.host.Provide(host.Tasks, a.tasks))
	}
	for _, name := range cfg.Tools {
		var p host.Plugin
		switch name {
		case toolBash:
			p = host.BashTool(cfg.Bash)
		case toolTasks:
			p = host.TaskTools(cfg.Tasks.Tools)
		default:
			errs = append(errs, fmt.Errorf("unknown tool %q", name))
			continue
		}
		errs = append(errs, a.host.Load(p))
	}
	if err := errors.Join(errs...); err != nil {
		a.Close()
		return nil, err
	}
	// A plugin whose Apply failed stays pending (and its error was
	// returned above); check anyway, so a silently missing tool cannot
	// pass for a working configuration.
	for _, name := range cfg.Tools {
		plugin := map[string]string{toolBash: bashtool.PluginName, toolTasks: tasktool.PluginName}[name]
		if !a.host.Active(plugin) {
			a.Close()
			return nil, fmt.Errorf("tool plugin %s did not load", plugin)
		}
	}
	return a, nil
}

// Close ends everything the app started, in order: the host disposes the
// plugins (the tools stop taking calls that start tasks), the task runtime
// kills and awaits every task, and the executor kills and awaits whatever
// is left and removes its spill directory.
func (a *app) Close() {
	a.host.Close()
	if a.tasks != nil {
		a.tasks.Close()
	}
	if err := a.exec.Close(); err != nil {
		slog.Warn("closing the executor", "err", err)
	}
}
