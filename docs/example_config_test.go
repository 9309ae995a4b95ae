package docs

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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

// TestExampleConfigIsTheDefaults: the example's values are the defaults,
// as its first lines say, but where a comment says otherwise (the
// permissions section shows rules; local.env.set a variable), and but for
// the defaults spelt out (shell bash, containment auto, otel's signals
// true), which mean what leaving them out means.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	data, err := os.ReadFile("examples/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := config.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	def, _ := config.Parse(nil)
	ex, def = ex.WithDefaults(), def.WithDefaults()
	ex.Permissions = def.Permissions
	ex.Local.Env.Set = def.Local.Env.Set
	for _, spelt := range []struct {
		v       *string
		dflt    string
		meaning string
	}{{&ex.Local.Shell, "", "bash"}, {&ex.Local.Containment, "", "auto"}} {
		if *spelt.v == spelt.meaning {
			*spelt.v = spelt.dflt
		}
	}
	for _, b := range []**bool{&ex.Otel.Traces, &ex.Otel.Logs, &ex.Otel.Metrics} {
		if *b != nil && **b {
			*b = nil
		}
	}
	if ex.Local.Sandbox.Network != nil && def.Local.Sandbox.Network != nil {
		ex.Local.Sandbox.Network.Implied = def.Local.Sandbox.Network.Implied // written out or not
	}
	if diff := cmp.Diff(def, ex, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("examples/config.yaml differs from the defaults (-defaults +example):\n%s", diff)
	}
}
