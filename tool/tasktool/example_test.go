package tasktool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// The task tools over a task runtime, in a registry of one's own (what
// host.Standard does for a config file). A producer of one's own starts a
// task that ends with a final output; the model lists its tasks and reads
// the output.
func Example() {
	svc := tasks.New(tasks.Config{})
	defer svc.Close()
	reg := tool.NewRegistry()
	for _, def := range tasktool.Definitions(svc, config.Tasks{}) {
		if err := reg.Register(def); err != nil {
			fmt.Println(err)
			return
		}
	}
	stop := tasktool.Start(svc) // from here on svc accepts tasks
	defer stop()

	owner := session.New("example", "")
	defer owner.End()
	done := make(chan tasks.Outcome, 1)
	done <- tasks.Outcome{Status: tasks.Completed, Output: "4"}
	snap, err := svc.Start(tasks.Spec{Kind: "calc", Label: "2 + 2", Owner: owner, Run: func() (tasks.Hooks, error) {
		return tasks.Hooks{Cancel: func(string) error { return nil }, Done: done}, nil
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	call := func(name string, args map[string]any) {
		raw, _ := json.Marshal(args)
		fmt.Println(reg.Execute(context.Background(), tool.Call{Name: name, Args: raw, Session: owner}).Text())
	}
	call("task_output", map[string]any{"task_id": snap.ID, "wait": true})
	call("task_list", map[string]any{})
	// Output:
	// 4
	// [status: completed]
	// calc-1 [calc] completed — 2 + 2
}
