package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeListsWhatCIInstalls: every apt package .ci/run installs when a
// program is missing (its missing+=(…) lines) is named in the README's
// list of what .ci/run installs, under "Prerequisites and installing".
func TestReadmeListsWhatCIInstalls(t *testing.T) {
	run, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, m := range regexp.MustCompile(`missing\+=\(([^)]*)\)`).FindAllStringSubmatch(string(run), -1) {
		pkgs = append(pkgs, strings.Fields(m[1])...)
	}
	if len(pkgs) < 10 {
		t.Fatalf("found %d apt packages in .ci/run: %v", len(pkgs), pkgs)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Prerequisites and installing\n")
	if !ok {
		t.Fatal(`README.md has no section "Prerequisites and installing"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	m := regexp.MustCompile(`with apt, the programs the tests\s+run \(([^)]*)\)`).FindStringSubmatch(section)
	if m == nil {
		t.Fatal(`README.md's "Prerequisites and installing" has no "with apt, the programs the tests run (…)" list`)
	}
	listed := map[string]bool{}
	for _, w := range regexp.MustCompile(`[^\s,]+`).FindAllString(m[1], -1) {
		listed[w] = true
	}
	for _, p := range pkgs {
		if !listed[p] {
			t.Errorf(".ci/run installs %s with apt; README.md's list of what it installs does not name it", p)
		}
	}
}
