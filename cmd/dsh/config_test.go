package main

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/tool/bashtool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

func ptr[T any](v T) *T { return &v }

func TestParseConfig(t *testing.T) {
	off := ptr(false)
	for _, tc := range []struct {
		name string
		yaml string
		want configFile
	}{
		{"empty", "", defaultConfig()},
		{"comments only", "# nothing\n", defaultConfig()},
		{"null", "~\n", defaultConfig()},
		{"everything", `
executor: local
local:
  cwd: /srv
  timeoutMs: 1000
  graceMs: 50
  env: {set: {A: 1}}
tools: [tasks, bash]
bash: {enableRunInBackground: true}
tasks: {maxRunningPerSession: 3, waitTimeoutMs: 10, maxWaitTimeoutMs: 20.5}
`, configFile{
			Executor: "local",
			Local:    config.Local{Cwd: "/srv", TimeoutMs: 1000, GraceMs: 50, Env: config.Env{Set: map[string]string{"A": "1"}}},
			Tools:    []string{"tasks", "bash"},
			Bash:     bashtool.Config{EnableRunInBackground: ptr(true)},
			Tasks:    tasksSection{MaxRunningPerSession: 3, Tools: tasktool.Config{WaitTimeoutMs: 10, MaxWaitTimeoutMs: 20.5}},
		}},
		{"nulls are absent", "executor: ~\nlocal: ~\ntools: ~\nbash: {enableRunInBackground: ~}\ntasks: {waitTimeoutMs: ~}\n", defaultConfig()},
		{"bash only turns background off", "tools: [bash]\n", configFile{
			Executor: "local", Tools: []string{"bash"}, Bash: bashtool.Config{EnableRunInBackground: off},
		}},
		{"no tools", "tools: []\n", configFile{
			Executor: "local", Tools: []string{}, Bash: bashtool.Config{EnableRunInBackground: off},
		}},
		{"background off", "bash: {enableRunInBackground: false}\n", configFile{
			Executor: "local", Tools: []string{"bash", "tasks"}, Bash: bashtool.Config{EnableRunInBackground: off},
		}},
		{"aliases", "tasks: {waitTimeoutMs: &w 10, maxWaitTimeoutMs: *w}\n", configFile{
			Executor: "local", Tools: []string{"bash", "tasks"}, Tasks: tasksSection{Tools: tasktool.Config{WaitTimeoutMs: 10, MaxWaitTimeoutMs: 10}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseConfig([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(configFile{})); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"unknown key", "foo: 1\n", `unknown key "foo" (line 1)`},
		{"duplicate key", "tools: [bash]\ntools: [tasks]\n", `duplicate key "tools" (line 2)`},
		{"merge key", "base: &b {}\n<<: *b\n", `unknown key "base" (line 1)`},
		{"merge key first", "<<: {tools: []}\n", `merge keys (<<) are not supported (line 1)`},
		{"not a mapping", "- a\n", "config must be a mapping (line 1)"},
		{"two documents", "tools: []\n---\ntools: []\n", "config must be a single YAML document (second one at line 2)"},
		{"malformed", "local: [\n", "yaml: line 1: did not find expected node content"},
		{"executor", "executor: docker\n", `unknown executor "docker" (line 1): the only executor is "local"`},
		{"executor type", "executor: [local]\n", "executor must be a string (line 1)"},
		{"local unknown key", "local: {cwdd: /}\n", `bash-local: unknown key "cwdd" (line 1)`},
		{"local graceMs", "local:\n  graceMs: -1\n", "bash-local: graceMs must be a positive finite number"},
		{"local zero", "local: {timeoutMs: 0}\n", "bash-local: timeoutMs must be a positive finite number"},
		{"tools type", "tools: bash\n", "tools must be a list of tool names (line 1)"},
		{"tools item type", "tools: [[bash]]\n", "tools must be a list of tool names (line 1)"},
		{"unknown tool", "tools: [bash, web]\n", `unknown tool "web" in tools (line 1): the tools are "bash" and "tasks"`},
		{"tool twice", "tools: [bash, bash]\n", `tool "bash" listed twice in tools (line 1)`},
		{"bash type", "bash: true\n", "tool-bash: bash must be a mapping (line 1)"},
		{"bash unknown key", "bash:\n  background: true\n", `tool-bash: unknown key "background" (line 2)`},
		{"bash bool", "bash: {enableRunInBackground: \"yes\"}\n", "tool-bash: enableRunInBackground must be a boolean (line 1)"},
		{"background without tasks", "tools: [bash]\nbash:\n  enableRunInBackground: true\n",
			`tool-bash: enableRunInBackground needs the task tools: add "tasks" to tools (line 3)`},
		{"tasks type", "tasks: 3\n", "tool-tasks: tasks must be a mapping (line 1)"},
		{"tasks unknown key", "tasks: {foo: 1}\n", `tool-tasks: unknown key "foo" (line 1)`},
		{"running limit zero", "tasks: {maxRunningPerSession: 0}\n", "tool-tasks: maxRunningPerSession must be a positive integer (line 1)"},
		{"running limit fraction", "tasks: {maxRunningPerSession: 1.5}\n", "tool-tasks: maxRunningPerSession must be a positive integer (line 1)"},
		{"wait type", "tasks: {waitTimeoutMs: \"5\"}\n", "tool-tasks: waitTimeoutMs must be a number (line 1)"},
		{"wait zero", "tasks: {waitTimeoutMs: 0}\n", "tool-tasks: waitTimeoutMs must be a positive finite number"},
		{"wait infinite", "tasks: {maxWaitTimeoutMs: .inf}\n", "tool-tasks: maxWaitTimeoutMs must be a positive finite number"},
		{"inverted waits", "tasks: {waitTimeoutMs: 5000, maxWaitTimeoutMs: 1000}\n",
			"tool-tasks: waitTimeoutMs (5000) exceeds maxWaitTimeoutMs (1000)"},
		{"default wait over cap", "tasks: {maxWaitTimeoutMs: 1000}\n",
			"tool-tasks: waitTimeoutMs (30000) exceeds maxWaitTimeoutMs (1000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error, want %q", tc.err)
			}
			if got := oneLine(err.Error()); got != tc.err {
				t.Errorf("error = %q, want %q", got, tc.err)
			}
		})
	}
}

// TestConfigErrorsCLI: every config problem is one line on stderr and exit
// status 2, whatever the command.
func TestConfigErrorsCLI(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"missing file", "", "no such file or directory"},
		{"malformed YAML", "local: {graceMs: [\n", "yaml: line 1: did not find expected node content"},
		{"unknown key", "foo: bar\n", `unknown key "foo" (line 1)`},
		{"bad graceMs", "local: {graceMs: 0}\n", "bash-local: graceMs must be a positive finite number"},
		{"inverted tasks waits", "tasks: {waitTimeoutMs: 2000, maxWaitTimeoutMs: 1000}\n",
			"tool-tasks: waitTimeoutMs (2000) exceeds maxWaitTimeoutMs (1000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := missing
			if tc.yaml != "" {
				path = writeFile(t, "dsh.yaml", tc.yaml)
			}
			want := "dsh: config file " + path + ": " + tc.err + "\n"
			for _, args := range [][]string{
				{"run", "--config", path, "--", "true"},
				{"tools", "--config", path},
				{"mcp", "--config", path},
				{"serve", "--addr", "127.0.0.1:0", "--no-auth", "--config", path},
			} {
				got := dsh(t, nil, args...)
				if got.code != exitUsage || got.stderr != want || got.stdout != "" {
					t.Errorf("dsh %q: status %d, stdout %q, stderr %q; want 2, nothing, %q", args, got.code, got.stdout, got.stderr, want)
				}
			}
		})
	}
}
