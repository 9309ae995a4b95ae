package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestReadmeClientSnippets: every JSON snippet of the README parses, and
// the Zed one uses Zed's current context_servers form, command and args
// side by side (the nested command: {path, args} is the old one).
func TestReadmeClientSnippets(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	zed := 0
	for _, b := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(string(data), -1) {
		var v struct {
			ContextServers map[string]map[string]json.RawMessage `json:"context_servers"`
		}
		if err := json.Unmarshal([]byte(b[1]), &v); err != nil {
			t.Errorf("%v in\n%s", err, b[1])
			continue
		}
		for name, server := range v.ContextServers {
			zed++
			var command string
			var args []string
			if err := json.Unmarshal(server["command"], &command); err != nil || command == "" {
				t.Errorf("context_servers.%s.command is %s, want a path (Zed's flat form)", name, server["command"])
			}
			if err := json.Unmarshal(server["args"], &args); err != nil || len(args) == 0 || args[0] != "mcp" {
				t.Errorf("context_servers.%s.args is %s, want [\"mcp\", …]", name, server["args"])
			}
		}
	}
	if zed == 0 {
		t.Error("the README has no Zed (context_servers) snippet")
	}
}
