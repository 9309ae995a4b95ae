package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/google/jsonschema-go/jsonschema"
)

// A front end builds the stack from a config file, then sends each call
// through the registry with the session it belongs to.
func ExampleStandard() {
	cfg, err := config.Parse([]byte("local: {timeoutMs: 10000}\ntools: [bash]\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := host.Standard(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	owner := session.New("example", os.TempDir())
	defer owner.End()
	for _, s := range st.Tools.List() {
		fmt.Println("tool:", s.Name)
	}
	args, _ := json.Marshal(map[string]any{"command": "echo hello; exit 3", "description": "Say hello"})
	res := st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: args, Session: owner})
	fmt.Println(res.Text())
	// Output:
	// tool: bash
	// hello
	// [exit code: 3]
}

// A plugin of one's own: it is applied once the services it needs are
// provided, and what it added goes away with them.
func ExamplePlugin() {
	greeting := host.NewKey[string]("greeting")
	h := host.New()
	defer h.Close()
	reg := tool.NewRegistry()
	_ = host.Provide(h, host.Tools, reg)

	_ = h.Load(host.Plugin{
		Name:  "greeter",
		Needs: []host.ServiceKey{greeting, host.Tools},
		Apply: func(env *host.Env) (func(), error) {
			text, _ := host.Service(env, greeting)
			return nil, env.AddTool(tool.Definition{
				Name:       "greet",
				Parameters: &jsonschema.Schema{Type: "object"},
				Execute: func(context.Context, tool.Call) (tool.Result, error) {
					return tool.TextResult(text), nil
				},
			})
		},
	})
	fmt.Println(h.Active("greeter"), len(reg.List()))
	_ = host.Provide(h, greeting, "hello")
	fmt.Println(h.Active("greeter"), reg.Execute(context.Background(), tool.Call{Name: "greet"}).Text())
	h.Remove(greeting)
	fmt.Println(h.Active("greeter"), len(reg.List()))
	// Output:
	// false 0
	// true hello
	// false 0
}
