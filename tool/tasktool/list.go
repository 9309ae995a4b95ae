package tasktool

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// listDefinition is task_list: one line per task the caller can reach, in
// start order.
func listDefinition(svc *tasks.Service) tool.Definition {
	return tool.Definition{
		Name:        "task_list",
		Description: "List your background tasks.",
		Parameters:  &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
		Annotations: tool.Annotations{ReadOnly: true},
		Execute: func(_ context.Context, call tool.Call) (tool.Result, error) {
			return tool.TextResult(listText(svc.List(call.Session))), nil
		},
		Presenters: presenters("read", "", false),
	}
}

// listText renders task_list's text.
func listText(snaps []tasks.Snapshot) string {
	if len(snaps) == 0 {
		return noTasksText
	}
	lines := make([]string, len(snaps))
	for i, s := range snaps {
		lines[i] = listLine(s)
	}
	return strings.Join(lines, "\n")
}
