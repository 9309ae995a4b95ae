package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

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
	if want := []string{"bash", "task_output", "task_list", "task_kill", "task_input"}; !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}
	want := map[string]map[string]bool{
		"bash":        {"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true},
		"task_output": {"readOnlyHint": true},
		"task_list":   {"readOnlyHint": true},
		"task_input":  {"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true},
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

// TestVersion checks the form of the line whatever the build: the test
// binary may or may not have version control information
// (TestVersionOfACheckoutBuild checks its content).
func TestVersion(t *testing.T) {
	t.Parallel()
	got := dsh(t, nil, "version")
	if got.code != 0 || got.stderr != "" || !regexp.MustCompile(`^dsh (\(devel\)|v\S+) \((commit [0-9a-f]{12}(\+dirty)?, \S+|commit unknown: built without version control information)\) go1\.\d+\S* \w+/\w+\n$`).MatchString(got.stdout) {
		t.Errorf("dsh version: %+v", got)
	}
}
