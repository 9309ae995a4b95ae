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
