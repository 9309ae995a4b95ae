package host

import (
	"fmt"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// BashTool is the bash tool as a plugin: it needs the executor, the tool
// registry and the prompt, and uses the task runtime when there is one.
func BashTool(cfg bashtool.Config) Plugin {
	return Plugin{
		Name:  bashtool.PluginName,
		Needs: []string{Executor, Tools, Prompt},
		Uses:  []string{Tasks},
		Apply: func(env *Env) (func(), error) {
			exec, _ := env.Service(Executor).(bash.Executor)
			t := bashtool.New(exec, func() *tasks.Service {
				rt, _ := env.Service(Tasks).(*tasks.Service)
				return rt
			}, cfg)
			if err := env.AddTool(t.Definition()); err != nil {
				return nil, err
			}
			return nil, env.AddSection(bashtool.Section)
		},
	}
}

// TaskTools are task_output, task_list and task_kill as a plugin. It needs
// the task runtime (a *tasks.Service), the tool registry and the prompt.
// Applying it validates cfg, adds the three tools and the tool:tasks
// section and starts them ([tasktool.Start]); disposing it stops them.
func TaskTools(cfg tasktool.Config) Plugin {
	return Plugin{
		Name:  tasktool.PluginName,
		Needs: []string{Tasks, Tools, Prompt},
		Apply: func(env *Env) (func(), error) {
			if err := cfg.Validate(); err != nil {
				return nil, err
			}
			svc, ok := env.Service(Tasks).(*tasks.Service)
			if !ok {
				return nil, fmt.Errorf("%s: the %q service is a %T, not a *tasks.Service", tasktool.PluginName, Tasks, env.Service(Tasks))
			}
			for _, def := range tasktool.Definitions(svc, cfg) {
				if err := env.AddTool(def); err != nil {
					return nil, err
				}
			}
			if err := env.AddSection(tasktool.Section()); err != nil {
				return nil, err
			}
			return tasktool.Start(svc), nil
		},
	}
}
