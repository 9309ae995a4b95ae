package bashtool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// The bash tool over a local executor, in a registry of one's own (what
// host.Standard does for a config file): the model's call comes back as
// the text the model reads.
func Example() {
	exec, err := local.New(config.Local{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer exec.Close()
	reg := tool.NewRegistry()
	// No task runtime: the schema offers no run_in_background.
	if err := reg.Register(bashtool.New(exec, nil, config.Bash{EnableRunInBackground: new(false)}).Definition()); err != nil {
		fmt.Println(err)
		return
	}
	args := json.RawMessage(`{"command": "echo hello; exit 3", "description": "Say hello"}`)
	res := reg.Execute(context.Background(), tool.Call{Name: bashtool.Name, Args: args})
	fmt.Println(res.Text())
	// Output:
	// hello
	// [exit code: 3]
}

// A step before the tool (a policy, a hook) reads the call's arguments
// as the tool will.
func ExampleDecodeArgs() {
	a, err := bashtool.DecodeArgs(json.RawMessage(`{"command": "make test", "description": "Run the tests", "workdir": "src", "run_in_background": true}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Command, a.Background(), a.LeavesSandbox(), a.ResolveWorkdir(nil))
	// Output: make test true false src
}
