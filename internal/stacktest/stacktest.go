// Package stacktest composes dsh's stack for tests, as a front end does:
// the local executor, the task runtime, and the bash and task tools in a
// registry, put together by host. Every command carries the test run's
// leak mark (package proctest), and everything is closed when the test
// ends.
package stacktest

import (
	"errors"
	"maps"
	"testing"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// Stack is the composed stack.
type Stack struct {
	Tools  *tool.Registry
	Prompt *prompt.Registry
	Exec   *local.Executor
	Tasks  *tasks.Service
}

// New composes the stack over cfg, with a 200 ms grace and a spill
// directory of the test's unless cfg sets them. Its error is local.New's
// (an unavailable containment, say); other failures fail the test.
func New(t testing.TB, cfg config.Local) (*Stack, error) {
	t.Helper()
	if cfg.GraceMs == 0 {
		cfg.GraceMs = 200
	}
	if cfg.SpillDir == "" {
		cfg.SpillDir = t.TempDir()
	}
	set := proctest.Set()
	maps.Copy(set, cfg.Env.Set)
	cfg.Env.Set = set
	e, err := local.New(cfg)
	if err != nil {
		return nil, err
	}
	s := &Stack{Tools: tool.NewRegistry(), Prompt: prompt.NewRegistry(), Exec: e, Tasks: tasks.New(tasks.Config{})}
	h := host.New()
	t.Cleanup(func() {
		h.Close()
		s.Tasks.Close()
		if err := e.Close(); err != nil {
			t.Errorf("closing the executor: %v", err)
		}
	})
	err = errors.Join(
		h.Provide(host.Executor, e),
		h.Provide(host.Tools, s.Tools),
		h.Provide(host.Prompt, s.Prompt),
		h.Provide(host.Tasks, s.Tasks),
		h.Load(host.BashTool(bashtool.Config{})),
		h.Load(host.TaskTools(tasktool.Config{})),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s, nil
}

// Must is New for a test that expects the stack to compose.
func Must(t testing.TB, cfg config.Local) *Stack {
	t.Helper()
	s, err := New(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
