package tasktool

import (
	"context"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// killDefinition is task_kill: it asks a task to end, or says how it had
// already ended.
func killDefinition(svc *tasks.Service) tool.Definition {
	return tool.Definition{
		Name:        "task_kill",
		Description: "Stop a background task.",
		Parameters: &jsonschema.Schema{
			Type:          "object",
			Properties:    map[string]*jsonschema.Schema{"task_id": idProperty()},
			PropertyOrder: []string{"task_id"},
			Required:      []string{"task_id"},
		},
		Execute: func(_ context.Context, call tool.Call) (tool.Result, error) {
			return kill(svc, call)
		},
		Presenters: presenters("other", killTitlePrefix, false),
	}
}

// kill runs task_kill. A failed cancel is TASK_KILL_FAILED; the lookup
// errors keep their own codes.
func kill(svc *tasks.Service, call tool.Call) (tool.Result, error) {
	id, err := taskID(call)
	if err != nil {
		return tool.Result{}, err
	}
	res, snap, err := svc.Kill(call.Session, id)
	if err != nil {
		if errors.Is(err, tasks.ErrUnknown) || errors.Is(err, tasks.ErrForbidden) {
			return tool.Result{}, toolError(err)
		}
		return tool.Result{}, &tool.Error{Code: CodeKillFailed, Message: err.Error()}
	}
	withdrawStale(call.Session, snap)
	return tool.TextResult(killText(res, snap)), nil
}
