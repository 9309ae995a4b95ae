package docs

import (
	"os"
	"regexp"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// TestExampleConfig: docs/examples/config.yaml is a valid config file for
// dsh's own strict loader, and has every top-level section docs/config.md
// documents (a "## `key`" heading), as a key or, for a section that only
// applies with another executor (ssh), as a commented-out one.
func TestExampleConfig(t *testing.T) {
	data, err := os.ReadFile("examples/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Parse(data); err != nil {
		t.Fatalf("examples/config.yaml: %v", err)
	}
	doc, err := os.ReadFile("config.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := regexp.MustCompile("(?m)^## `([a-zA-Z]+)`(?:, `([a-zA-Z]+)`)?(?:, `([a-zA-Z]+)`)?").FindAllStringSubmatch(string(doc), -1)
	if len(sections) < 10 {
		t.Fatalf("docs/config.md has %d key sections: its headings changed shape", len(sections))
	}
	for _, m := range sections {
		for _, key := range m[1:] {
			if key == "" {
				continue
			}
			if !regexp.MustCompile(`(?m)^(# )?` + key + `:`).Match(data) {
				t.Errorf("examples/config.yaml lacks the %s section", key)
			}
		}
	}
}
