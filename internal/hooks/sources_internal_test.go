package hooks

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/config"
)

// TestClaudeHookTimeout: a Claude Code settings file gives a hook's
// timeout in JSON seconds; it becomes the config's duration, rounded up to
// a whole millisecond, and a negative one is not run.
func TestClaudeHookTimeout(t *testing.T) {
	for _, tc := range []struct {
		json string
		want config.Hook
		why  string
	}{
		{`{"type":"command","command":"x","timeout":2.5,"if":"Bash(ls)","failClosed":true}`,
			config.Hook{Type: "command", Command: "x", Timeout: 2500 * time.Millisecond, If: "Bash(ls)", FailClosed: true}, ""},
		{`{"type":"command","command":"x","timeout":0.0001}`, config.Hook{Type: "command", Command: "x", Timeout: time.Millisecond}, ""},
		{`{"type":"command","command":"x"}`, config.Hook{Type: "command", Command: "x"}, ""},
		{`{"type":"command","command":"x","timeout":-1}`, config.Hook{Type: "command", Command: "x"}, "a negative timeout"},
	} {
		var hk claudeHook
		if err := json.Unmarshal([]byte(tc.json), &hk); err != nil {
			t.Fatal(err)
		}
		if why := unsupported(hk); why != tc.why {
			t.Errorf("%s: unsupported %q, want %q", tc.json, why, tc.why)
		}
		if tc.why != "" {
			continue
		}
		if diff := cmp.Diff(tc.want, hk.hook()); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.json, diff)
		}
	}
}
