package main

import (
	"path/filepath"
	"testing"
)

// TestConfigErrorsCLI: every config problem is one line on stderr and exit
// status 2, whatever the command.
func TestConfigErrorsCLI(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"missing file", "", "no such file or directory"},
		{"malformed YAML", "local: {graceMs: [\n", "not valid YAML: did not find expected node content (line 1)"},
		{"unknown key", "foo: bar\n", `foo: unknown key (line 1)`},
		{"near miss", "local:\n  timeoutMsec: 5\n", `local.timeoutMsec: unknown key (line 2); did you mean local.timeoutMs?`},
		{"bad graceMs", "local: {graceMs: 0}\n", "local.graceMs must be a positive finite number (line 1)"},
		{"inverted tasks waits", "tasks: {waitTimeoutMs: 2000, maxWaitTimeoutMs: 1000}\n",
			"tasks.waitTimeoutMs (2000) exceeds tasks.maxWaitTimeoutMs (1000) (line 1)"},
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
