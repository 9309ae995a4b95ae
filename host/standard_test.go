package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/google/jsonschema-go/jsonschema"
)

// standard builds the stack of a config file, with the tests' leak mark.
func standard(t testing.TB, yaml string) *host.Stack {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Local.Env.Set = proctest.Set()
	cfg.Local.SpillDir = t.TempDir()
	st, err := host.Standard(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStandard(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		tools      []string
		sections   []string
		background bool
	}{
		{"default", "", []string{"bash", "task_output", "task_list", "task_kill", "task_input"}, []string{"tool:bash", "tool:tasks"}, true},
		{"tasks first", "tools: [tasks, bash]\n", []string{"task_output", "task_list", "task_kill", "task_input", "bash"}, []string{"tool:bash", "tool:tasks"}, true},
		{"bash only", "tools: [bash]\n", []string{"bash"}, []string{"tool:bash"}, false},
		{"tasks only", "tools: [tasks]\n", []string{"task_output", "task_list", "task_kill", "task_input"}, []string{"tool:tasks"}, false},
		{"none", "tools: []\n", nil, nil, false},
		{"background off", "bash: {enableRunInBackground: false}\n", []string{"bash", "task_output", "task_list", "task_kill", "task_input"}, []string{"tool:bash", "tool:tasks"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := standard(t, tc.yaml)
			defer st.Close()
			var tools []string
			for _, s := range st.Tools.List() {
				tools = append(tools, s.Name)
			}
			if !slices.Equal(tools, tc.tools) {
				t.Errorf("tools = %q, want %q", tools, tc.tools)
			}
			var sections []string
			for _, s := range st.Prompt.Sections() {
				sections = append(sections, s.Name)
			}
			if !slices.Equal(sections, tc.sections) {
				t.Errorf("sections = %q, want %q", sections, tc.sections)
			}
			if def, ok := st.Tools.Lookup("bash"); ok {
				if _, has := def.Parameters.Properties["run_in_background"]; has != tc.background {
					t.Errorf("run_in_background offered: %v, want %v", has, tc.background)
				}
			}
			if (st.Tasks != nil) != slices.Contains(tc.tools, "task_list") {
				t.Errorf("task runtime %v with tools %q", st.Tasks, tc.tools)
			}
		})
	}
}

func TestStandardRefusesAnInvalidConfig(t *testing.T) {
	for cfg, want := range map[*config.File]string{
		{Local: config.Local{Grace: -time.Millisecond}}: "local.graceMs must be a positive finite number",
		{Tools: []string{"web"}}:                        `tools[0]: "web" is not one of "bash" or "tasks"`,
		{Tasks: config.Tasks{WaitTimeout: time.Millisecond, MaxWaitTimeout: 500 * time.Microsecond}}: "tasks.waitTimeoutMs (1) exceeds tasks.maxWaitTimeoutMs (0.5)",
	} {
		if st, err := host.Standard(*cfg); err == nil || err.Error() != want {
			if st != nil {
				st.Close()
			}
			t.Errorf("Standard(%+v) error = %v, want %q", *cfg, err, want)
		}
	}
}

// TestStandardCloseEndsTasks: Close kills and awaits a background task that
// its session never ended.
func TestStandardCloseEndsTasks(t *testing.T) {
	st := standard(t, "local: {graceMs: 100}\n")
	sess := session.New("test", t.TempDir())
	defer sess.End()
	args, _ := json.Marshal(map[string]any{"command": "sleep 60", "description": "sleep a minute", "run_in_background": true})
	res := st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: args, Session: sess})
	if res.IsError || res.Text() != "started background task bash-1" {
		t.Fatalf("start: %+v", res)
	}
	start := time.Now()
	st.Close()
	if d := time.Since(start); d > proctest.Scale(5*time.Second) {
		t.Errorf("Close took %v", d)
	}
	if got := st.Tasks.List(sess); len(got) != 1 || got[0].Status != tasks.Killed {
		t.Errorf("after Close, the tasks are %+v", got)
	}
}

// TestCloseRemovesTheTools: after Close a call is refused as unknown
// rather than reaching a closed executor or task runtime, and the prompt
// has no sections of tools that are gone; a tool the caller registered
// stays.
func TestCloseRemovesTheTools(t *testing.T) {
	st := standard(t, "")
	mine := tool.Definition{Name: "mine", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) {
		return tool.TextResult("ok"), nil
	}}
	if err := st.Tools.Register(mine); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if got := st.Tools.List(); len(got) != 1 || got[0].Name != "mine" {
		t.Errorf("tools after Close: %+v", got)
	}
	if got := st.Prompt.Sections(); len(got) != 0 {
		t.Errorf("sections after Close: %+v", got)
	}
	args, _ := json.Marshal(map[string]any{"command": "true", "description": "do nothing"})
	if res := st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: args}); res.Text() != `Error: unknown tool "bash"` {
		t.Errorf("bash after Close: %q", res.Text())
	}
}

// TestStandardLogsToItsLogger: a tool's panic is logged to the logger the
// stack was given.
func TestStandardLogsToItsLogger(t *testing.T) {
	var buf bytes.Buffer
	st, err := host.Standard(config.File{Tools: []string{}}, host.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_ = st.Tools.Register(tool.Definition{Name: "boom", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, tool.Call) (tool.Result, error) {
		panic("kaboom")
	}})
	if res := st.Tools.Execute(context.Background(), tool.Call{Name: "boom"}); res.Text() != "Error: kaboom" {
		t.Errorf("result %q", res.Text())
	}
	if !strings.Contains(buf.String(), `msg="tool panicked" tool=boom panic=kaboom`) {
		t.Errorf("the stack's logger got %q", buf.String())
	}
}
