package host

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/tool"
)

func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }

// fakeExecutor stands for a service; what it is does not matter here.
type fakeExecutor struct{ name string }

// The services of these tests.
var (
	fakeExec  = NewKey[*fakeExecutor]("executor")
	fakeTasks = NewKey[*fakeExecutor]("tasks")
)

// toolPlugin adds one tool that reports which executor it was wired to, and
// one prompt section.
func toolPlugin(name string, service Key[*fakeExecutor], order int, disposed *[]string) Plugin {
	return Plugin{
		Name:  name,
		Needs: []ServiceKey{service, Tools, Prompt},
		Apply: func(env *Env) (func(), error) {
			exec, _ := Service(env, service)
			err := env.AddTool(tool.Definition{
				Name:       name,
				Parameters: &jsonschema.Schema{Type: "object"},
				Execute: func(context.Context, tool.Call) (tool.Result, error) {
					return tool.TextResult(name + " via " + exec.name), nil
				},
			})
			if err != nil {
				return nil, err
			}
			if err := env.AddSection(prompt.Section{Name: "tool:" + name, Order: order, Text: name + " advice"}); err != nil {
				return nil, err
			}
			return func() {
				if disposed != nil {
					*disposed = append(*disposed, name)
				}
			}, nil
		},
	}
}

func newHost(t *testing.T) (*Host, *tool.Registry, *prompt.Registry) {
	t.Helper()
	h := New()
	tools, sections := tool.NewRegistry(), prompt.NewRegistry()
	if err := Provide(h, Tools, tools); err != nil {
		t.Fatal(err)
	}
	if err := Provide(h, Prompt, sections); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h, tools, sections
}

func names(tools *tool.Registry) []string {
	var out []string
	for _, s := range tools.List() {
		out = append(out, s.Name)
	}
	return out
}

func TestPluginWaitsForItsService(t *testing.T) {
	h, tools, sections := newHost(t)
	var disposed []string
	if err := h.Load(toolPlugin("bash", fakeExec, 105, &disposed)); err != nil {
		t.Fatal(err)
	}
	if h.Active("bash") || len(tools.List()) != 0 || sections.Text() != "" {
		t.Fatal("a plugin registered something before its service existed")
	}

	if err := Provide(h, fakeExec, &fakeExecutor{"local"}); err != nil {
		t.Fatal(err)
	}
	if !h.Active("bash") || !cmp.Equal(names(tools), []string{"bash"}) || sections.Text() != "bash advice" {
		t.Fatalf("after Provide: active %v, tools %v, prompt %q", h.Active("bash"), names(tools), sections.Text())
	}
	if res := tools.Execute(context.Background(), tool.Call{Name: "bash"}); res.Text() != "bash via local" {
		t.Fatalf("got %+v", res)
	}

	if !h.Remove(fakeExec) || h.Remove(fakeExec) {
		t.Fatal("Remove")
	}
	if h.Active("bash") || len(tools.List()) != 0 || sections.Text() != "" || !cmp.Equal(disposed, []string{"bash"}) {
		t.Fatalf("after Remove: active %v, tools %v, prompt %q, disposed %v", h.Active("bash"), names(tools), sections.Text(), disposed)
	}
	if res := tools.Execute(context.Background(), tool.Call{Name: "bash"}); res.Code != tool.CodeUnknownTool {
		t.Fatalf("the removed tool still runs: %+v", res)
	}

	// Providing it again applies the plugin again, to the new service.
	if err := Provide(h, fakeExec, &fakeExecutor{"sandbox"}); err != nil {
		t.Fatal(err)
	}
	if res := tools.Execute(context.Background(), tool.Call{Name: "bash"}); res.Text() != "bash via sandbox" {
		t.Fatalf("got %+v", res)
	}
}

func TestSectionOrderAcrossPlugins(t *testing.T) {
	h, _, sections := newHost(t)
	for _, p := range []Plugin{
		toolPlugin("tasks", fakeTasks, 106, nil),
		toolPlugin("bash", fakeExec, 105, nil),
		toolPlugin("early", fakeExec, 10, nil),
	} {
		if err := h.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	_ = Provide(h, fakeTasks, &fakeExecutor{"tasks"})
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	if got, want := sections.Text(), "early advice\n\nbash advice\n\ntasks advice"; got != want {
		t.Fatalf("prompt %q, want %q", got, want)
	}
	h.Remove(fakeExec)
	if got := sections.Text(); got != "tasks advice" {
		t.Fatalf("prompt after removing the executor: %q", got)
	}
}

func TestRemovingTheRegistryDisposesItsPlugins(t *testing.T) {
	h, tools, _ := newHost(t)
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	var disposed []string
	_ = h.Load(toolPlugin("a", fakeExec, 1, &disposed))
	_ = h.Load(toolPlugin("b", fakeExec, 2, &disposed))
	h.Remove(Tools)
	if !cmp.Equal(disposed, []string{"b", "a"}) || len(tools.List()) != 0 {
		t.Fatalf("disposed %v (want reverse load order), tools left %v", disposed, names(tools))
	}
}

func TestApplyFailureRollsBack(t *testing.T) {
	h, tools, sections := newHost(t)
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	for _, tc := range []struct {
		name  string
		apply func(env *Env) (func(), error)
		want  string
	}{
		{"error", func(env *Env) (func(), error) {
			_ = env.AddTool(tool.Definition{Name: "half", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) { return tool.Result{}, nil }})
			_ = env.AddSection(prompt.Section{Name: "half", Order: 1, Text: "half"})
			return nil, errors.New("no config")
		}, `host: plugin "error": no config`},
		{"panic", func(env *Env) (func(), error) {
			_ = env.AddSection(prompt.Section{Name: "half", Order: 1, Text: "half"})
			panic("bug")
		}, `host: plugin "panic": panic: bug`},
		{"duplicate tool", func(env *Env) (func(), error) {
			def := tool.Definition{Name: "dup", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) { return tool.Result{}, nil }}
			_ = env.AddTool(def)
			return nil, env.AddTool(def)
		}, `host: plugin "duplicate tool": tool "dup" is already registered`},
	} {
		err := h.Load(Plugin{Name: tc.name, Needs: []ServiceKey{fakeExec, Tools, Prompt}, Apply: tc.apply})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.want)
		}
		if h.Active(tc.name) || len(tools.List()) != 0 || sections.Text() != "" {
			t.Errorf("%s: left tools %v, prompt %q", tc.name, names(tools), sections.Text())
		}
	}
}

func TestPanickingDisposeIsContained(t *testing.T) {
	h, tools, _ := newHost(t)
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	p := toolPlugin("bash", fakeExec, 105, nil)
	apply := p.Apply
	p.Apply = func(env *Env) (func(), error) {
		_, err := apply(env)
		return func() { panic("dispose bug") }, err
	}
	_ = h.Load(p)
	h.Remove(fakeExec)
	if h.Active("bash") || len(tools.List()) != 0 {
		t.Fatal("a panicking dispose left the plugin's tools")
	}
}

func TestHostErrors(t *testing.T) {
	h, _, _ := newHost(t)
	if err := Provide(h, Tools, tool.NewRegistry()); err == nil || err.Error() != `host: service "tools" is already provided` {
		t.Errorf("duplicate provide: %v", err)
	}
	if err := Provide(h, NewKey[*fakeExecutor]("x"), nil); err == nil {
		t.Error("nil service accepted")
	}
	if err := h.Load(Plugin{Name: "p"}); err == nil {
		t.Error("plugin without Apply accepted")
	}
	_ = h.Load(toolPlugin("p", fakeExec, 1, nil))
	if err := h.Load(toolPlugin("p", fakeExec, 1, nil)); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Errorf("duplicate load: %v", err)
	}
	// A plugin that did not declare the registries cannot touch them.
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	err := h.Load(Plugin{Name: "sneaky", Needs: []ServiceKey{fakeExec}, Apply: func(env *Env) (func(), error) {
		if _, ok := Service(env, fakeTasks); ok {
			return nil, errors.New("saw an undeclared service")
		}
		return nil, env.AddTool(tool.Definition{Name: "x", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) { return tool.Result{}, nil }})
	}})
	if err == nil || !strings.Contains(err.Error(), `no "tools" service among the plugin's needs`) {
		t.Errorf("sneaky plugin: %v", err)
	}
	if !h.Unload("p") || h.Unload("p") {
		t.Error("Unload")
	}
	h.Close()
	if err := h.Load(toolPlugin("late", fakeExec, 1, nil)); err == nil {
		t.Error("Load after Close")
	}
}

func TestUndeclaredRegistryAccessIsRefused(t *testing.T) {
	h := New()
	defer h.Close()
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	err := h.Load(Plugin{Name: "p", Needs: []ServiceKey{fakeExec}, Apply: func(env *Env) (func(), error) {
		return nil, env.AddSection(prompt.Section{Name: "s", Order: 1, Text: "t"})
	}})
	if err == nil || !strings.Contains(err.Error(), `no "prompt" service`) {
		t.Fatalf("err = %v", err)
	}
}

// TestConcurrentCallsWhilePluginsComeAndGo executes tools from many
// goroutines while the executor service is provided and removed.
func TestConcurrentCallsWhilePluginsComeAndGo(t *testing.T) {
	h, tools, sections := newHost(t)
	_ = h.Load(toolPlugin("bash", fakeExec, 105, nil))
	_ = h.Load(toolPlugin("tasks", fakeTasks, 106, nil))
	_ = Provide(h, fakeTasks, &fakeExecutor{"tasks"})
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = Provide(h, fakeExec, &fakeExecutor{"local"})
			h.Remove(fakeExec)
		}
	})
	churn.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			h.Unload("extra")
			_ = h.Load(toolPlugin("extra", fakeTasks, 200, nil))
			_ = sections.Text()
		}
	})
	var calls sync.WaitGroup
	var ran atomic.Int64
	// 500 calls each, and on until the churning plugin served one (on a
	// loaded machine the churn may not get scheduled at first), for at
	// most 10 s.
	deadline := time.Now().Add(10 * time.Second)
	for range 8 {
		calls.Go(func() {
			for i := 0; i < 500 || ran.Load() == 0 && time.Now().Before(deadline); i++ {
				res := tools.Execute(context.Background(), tool.Call{Name: "bash"})
				if res.Text() == "bash via local" {
					ran.Add(1)
				} else if res.Code != tool.CodeUnknownTool {
					t.Errorf("bash: %+v", res)
				}
				if res := tools.Execute(context.Background(), tool.Call{Name: "tasks"}); res.Text() != "tasks via tasks" {
					t.Errorf("tasks: %+v", res)
				}
			}
		})
	}
	calls.Wait()
	close(stop)
	churn.Wait()
	if ran.Load() == 0 {
		t.Fatal("the churning plugin never served a call: the test proved nothing")
	}
}

func TestEnvAfterDisposeRefusesAdds(t *testing.T) {
	h, tools, _ := newHost(t)
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	var env *Env
	_ = h.Load(Plugin{Name: "p", Needs: []ServiceKey{fakeExec, Tools}, Apply: func(e *Env) (func(), error) {
		env = e
		if !h.Active("other") && h.Active("p") {
			return nil, errors.New("Active saw the plugin before Apply returned")
		}
		return nil, nil
	}})
	if !h.Active("p") {
		t.Fatal("not applied")
	}
	h.Remove(fakeExec)
	def := tool.Definition{Name: "late", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) { return tool.Result{}, nil }}
	if err := env.AddTool(def); err == nil {
		t.Fatal("a disposed plugin added a tool")
	}
	if len(tools.List()) != 0 {
		t.Fatalf("tools left: %v", names(tools))
	}
}

func TestRegistriesMustBeNeeded(t *testing.T) {
	h, tools, _ := newHost(t)
	err := h.Load(Plugin{Name: "u", Uses: []ServiceKey{Tools}, Apply: func(e *Env) (func(), error) {
		return nil, e.AddTool(tool.Definition{Name: "u", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) { return tool.Result{}, nil }})
	}})
	if err == nil || len(tools.List()) != 0 {
		t.Fatalf("a plugin that only uses the registry added to it: %v", err)
	}
}

func TestOptionalServices(t *testing.T) {
	h, tools, _ := newHost(t)
	_ = Provide(h, fakeExec, &fakeExecutor{"local"})
	var env *Env
	err := h.Load(Plugin{Name: "bash", Needs: []ServiceKey{fakeExec, Tools}, Uses: []ServiceKey{fakeTasks}, Apply: func(e *Env) (func(), error) {
		env = e
		return nil, e.AddTool(tool.Definition{Name: "bash", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) {
			if rt, ok := Service(env, fakeTasks); ok {
				return tool.TextResult("background via " + rt.name), nil
			}
			return tool.TextResult("no task runtime"), nil
		}})
	}})
	if err != nil || !h.Active("bash") {
		t.Fatalf("a plugin waited for an optional service: %v", err)
	}
	call := func() string { return tools.Execute(context.Background(), tool.Call{Name: "bash"}).Text() }
	if got := call(); got != "no task runtime" {
		t.Fatal(got)
	}
	_ = Provide(h, fakeTasks, &fakeExecutor{"tasks"})
	if got := call(); got != "background via tasks" {
		t.Fatal(got)
	}
	h.Remove(fakeTasks)
	if got := call(); got != "no task runtime" || !h.Active("bash") {
		t.Fatalf("%s; active %v", got, h.Active("bash"))
	}
}
