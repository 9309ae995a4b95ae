package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

func toolNames(r *tool.Registry) []string {
	var names []string
	for _, s := range r.List() {
		names = append(names, s.Name)
	}
	return names
}

func mustConfig(t *testing.T, yaml string) configFile {
	t.Helper()
	c, err := parseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestApp(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name, yaml string
		tools      []string
		sections   []string
		background bool
	}{
		{"default", "", []string{"bash", "task_output", "task_list", "task_kill"}, []string{"tool:bash", "tool:tasks"}, true},
		{"tasks first", "tools: [tasks, bash]\n", []string{"task_output", "task_list", "task_kill", "bash"}, []string{"tool:bash", "tool:tasks"}, true},
		{"bash only", "tools: [bash]\n", []string{"bash"}, []string{"tool:bash"}, false},
		{"tasks only", "tools: [tasks]\n", []string{"task_output", "task_list", "task_kill"}, []string{"tool:tasks"}, false},
		{"none", "tools: []\n", nil, nil, false},
		{"background off", "bash: {enableRunInBackground: false}\n", []string{"bash", "task_output", "task_list", "task_kill"}, []string{"tool:bash", "tool:tasks"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := newApp(mustConfig(t, tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if got := toolNames(a.Tools); !slices.Equal(got, tc.tools) {
				t.Errorf("tools = %q, want %q", got, tc.tools)
			}
			var sections []string
			for _, s := range a.Prompt.Sections() {
				sections = append(sections, s.Name)
			}
			if !slices.Equal(sections, tc.sections) {
				t.Errorf("sections = %q, want %q", sections, tc.sections)
			}
			if def, ok := a.Tools.Lookup("bash"); ok {
				_, has := def.Parameters.Properties["run_in_background"]
				if has != tc.background {
					t.Errorf("run_in_background offered: %v, want %v", has, tc.background)
				}
			}
		})
	}
}

// TestAppCloseEndsTasks: Close kills and awaits a background task that its
// session never ended.
func TestAppCloseEndsTasks(t *testing.T) {
	defer goleak.VerifyNone(t)
	a, err := newApp(mustConfig(t, "local: {graceMs: 100}\n"))
	if err != nil {
		t.Fatal(err)
	}
	sess := session.New("test", t.TempDir())
	r := &runner{tools: a.Tools, sess: sess, out: &strings.Builder{}}
	res := r.call(t.Context(), "bash", map[string]any{"command": "sleep 60", "description": "sleep a minute", "run_in_background": true})
	if res.IsError || res.Content[0].Text != "started background task bash-1" {
		t.Fatalf("start: %+v", res)
	}
	start := time.Now()
	a.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if got := a.tasks.List(sess); len(got) != 1 || got[0].Status != tasks.Killed {
		t.Errorf("after Close, the tasks are %+v", got)
	}
	sess.End()
}

func TestTools(t *testing.T) {
	t.Parallel()
	got := dsh(t, nil, "tools")
	if got.code != 0 || got.stderr != "" {
		t.Fatalf("status %d, stderr %q", got.code, got.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(got.stdout))
	var tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations map[string]bool `json:"annotations"`
	}
	if err := dec.Decode(&tools); err != nil {
		t.Fatalf("stdout does not start with a JSON array: %v\n%s", err, got.stdout)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.Description == "" || len(tl.InputSchema) == 0 {
			t.Errorf("%s: empty description or schema", tl.Name)
		}
	}
	if want := []string{"bash", "task_output", "task_list", "task_kill"}; !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}
	want := map[string]map[string]bool{
		"bash":        {"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true},
		"task_output": {"readOnlyHint": true},
		"task_list":   {"readOnlyHint": true},
	}
	for _, tl := range tools {
		for k, v := range want[tl.Name] {
			if tl.Annotations[k] != v {
				t.Errorf("%s: %s = %v, want %v", tl.Name, k, tl.Annotations[k], v)
			}
		}
	}
	rest := got.stdout[dec.InputOffset():]
	if !strings.HasPrefix(rest, "\n\n") || !strings.HasSuffix(rest, "\n") ||
		!strings.Contains(rest, "[exit code: N]") || !strings.Contains(rest, "task_output") {
		t.Errorf("prompt after the JSON = %q", rest)
	}
	// Indented, with the parameter order of the schema.
	if !strings.Contains(got.stdout, "\n  {\n    \"name\": \"bash\"") ||
		strings.Index(got.stdout, `"command"`) > strings.Index(got.stdout, `"run_in_background"`) {
		t.Errorf("not indented or out of order:\n%s", got.stdout)
	}
}

func TestToolsBashOnly(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "dsh.yaml", "tools: [bash]\n")
	got := dsh(t, nil, "tools", "--config", cfg)
	if got.code != 0 || strings.Contains(got.stdout, "run_in_background") || strings.Contains(got.stdout, "task_list") ||
		!strings.Contains(got.stdout, "Background execution is not available") {
		t.Errorf("got %+v", got)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	got := dsh(t, nil, "version")
	if got.code != 0 || got.stderr != "" || !regexp.MustCompile(`^dsh (devel|v\S+) go1\.\d+\S*\n$`).MatchString(got.stdout) {
		t.Errorf("dsh version: %+v", got)
	}
}
