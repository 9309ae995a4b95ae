package host

import (
	"fmt"
	"reflect"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// BashTool is the bash tool as a plugin: it needs the executor, the tool
// registry and the prompt, and uses the task runtime when there is one.
// opts configure the tool (bashtool.WithSandbox: the executor's sandbox;
// bashtool.WithRedactor: its redaction).
func BashTool(cfg config.Bash, opts ...bashtool.Option) Plugin {
	return Plugin{
		Name:  bashtool.PluginName,
		Needs: []ServiceKey{Executor, Tools, Prompt},
		Uses:  []ServiceKey{Tasks},
		Apply: func(env *Env) (func(), error) {
			exec, ok := Service(env, Executor)
			if !ok {
				return nil, errWrongType(Executor, env)
			}
			t := bashtool.New(exec, func() *tasks.Service {
				rt, _ := Service(env, Tasks)
				return rt
			}, cfg, opts...)
			if err := env.AddTool(t.Definition()); err != nil {
				return nil, err
			}
			return nil, env.AddSection(bashtool.Section)
		},
	}
}

// TaskTools are task_output, task_list and task_kill as a plugin. It needs
// the task runtime, the tool registry and the prompt. Applying it validates
// cfg ([tasktool.Validate]), adds the three tools and the tool:tasks
// section and starts them ([tasktool.Start]); disposing it stops them.
func TaskTools(cfg config.Tasks) Plugin {
	return Plugin{
		Name:  tasktool.PluginName,
		Needs: []ServiceKey{Tasks, Tools, Prompt},
		Apply: func(env *Env) (func(), error) {
			if err := tasktool.Validate(cfg); err != nil {
				return nil, err
			}
			svc, ok := Service(env, Tasks)
			if !ok {
				return nil, errWrongType(Tasks, env)
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

// errWrongType is a needed service provided under a key of another type
// (two keys of one name): the plugin cannot use it.
func errWrongType[T any](k Key[T], env *Env) error {
	return fmt.Errorf("the %q service is a %T, not a %s", k.Name(), env.service(k.Name()), reflect.TypeFor[T]())
}
