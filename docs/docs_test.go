// Package docs holds dsh's documentation; its test keeps the repository
// standing on its own: no reference points outside it, every relative
// link in a Markdown file resolves to a file in it, every
// "docs/spec.md §N" a comment cites is a section of docs/spec.md; and the
// docs match the code: docs/config.md documents exactly the keys of
// config.File, every package has a doc comment and every importable one
// an Example, docs/design.md names every package, no package imports
// what the docs say it does not, and the README's list of what .ci/run
// installs names every apt package it installs.
package docs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// root is the repository, seen from this package's directory.
const root = ".."

var (
	// outside matches texts that name places outside the repository: the
	// workspace the contract came from, its folder and its file names.
	outside = regexp.MustCompile(`\.\./` + `shared|work/` + `shared|\bSP` + `EC\b|\bDES` + `IGN\b`)
	// mdLink is an inline link's target, mdRef a reference definition's.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdRef  = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	// cite is a citation of docs/spec.md ("docs/spec.md §N", or "spec §N"
	// as docs/design.md writes it) with all its section numbers
	// ("§2.1", "§3.4–§3.5", "§4.2, §4.3").
	cite    = regexp.MustCompile(`(?:docs/spec\.md|\bspec) ((?:§+[\d.]*\da?(?:\s*(?:[–,-]|and)\s*)?)+)`)
	section = regexp.MustCompile(`§+([\d.]*\da?)`)
	heading = regexp.MustCompile(`^#{2,3} (\d+(?:\.\d+)?a?)[. ]`)
)

// skipDir are directories of things the repository does not write:
// version control, installed npm packages.
func skipDir(rel string) bool {
	return rel == ".git" || filepath.Base(rel) == "node_modules" || rel == filepath.Join(".ci", "node")
}

// text reports whether a file is one the checks read.
func text(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".sh", ".mjs", ".js", ".json", ".yaml", ".yml", ".txt", "":
		return true
	}
	return false
}

func TestNoReferenceLeavesTheRepository(t *testing.T) {
	sections := specSections(t)
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if skipDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !text(path) {
			return nil
		}
		n++
		checkFile(t, path, rel, sections)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("read only %d files: is %s the repository?", n, root)
	}
}

func checkFile(t *testing.T, path, rel string, sections map[string]bool) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if o := outside.FindString(s); o != "" {
			t.Errorf("%s:%d names %q, which is outside the repository", rel, line, o)
		}
		for _, c := range cite.FindAllStringSubmatch(s, -1) {
			for _, m := range section.FindAllStringSubmatch(c[1], -1) {
				if !sections[m[1]] {
					t.Errorf("%s:%d cites docs/spec.md §%s, which has no such section", rel, line, m[1])
				}
			}
		}
		if strings.HasSuffix(rel, ".md") {
			for _, m := range mdLink.FindAllStringSubmatch(s, -1) {
				checkLink(t, rel, line, m[1])
			}
			if m := mdRef.FindStringSubmatch(s); m != nil {
				checkLink(t, rel, line, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Errorf("%s: %v", rel, err)
	}
}

// checkLink checks a Markdown link target of the file rel: a relative one
// must name a file of the repository, and its #fragment a heading of it.
func checkLink(t *testing.T, rel string, line int, target string) {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return
	}
	target, frag, _ := strings.Cut(target, "#")
	p := filepath.Join(filepath.Dir(rel), target)
	if target == "" {
		p = rel
	}
	if strings.HasPrefix(filepath.Clean(p), "..") || filepath.IsAbs(target) {
		t.Errorf("%s:%d links to %s, outside the repository", rel, line, target)
		return
	}
	if _, err := os.Stat(filepath.Join(root, p)); err != nil {
		t.Errorf("%s:%d links to %s: %v", rel, line, target, err)
		return
	}
	if frag != "" && strings.HasSuffix(p, ".md") && !anchors(t, p)[frag] {
		t.Errorf("%s:%d links to %s#%s, which is no heading of %s", rel, line, target, frag, p)
	}
}

var (
	// mdHeadingLine is any Markdown heading; notSlug what GitHub drops of
	// its text to make the anchor.
	mdHeadingLine = regexp.MustCompile(`^#{1,6} (.+)`)
	notSlug       = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
	anchorCache   = map[string]map[string]bool{}
)

// anchors are the anchors GitHub gives the headings of the Markdown file
// rel: the text in lower case, without punctuation, spaces as hyphens, a
// repeated one numbered ("-1"). Code blocks are skipped.
func anchors(t *testing.T, rel string) map[string]bool {
	if a, ok := anchorCache[rel]; ok {
		return a
	}
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	a := map[string]bool{}
	count := map[string]int{}
	fenced := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		m := mdHeadingLine.FindStringSubmatch(l)
		if fenced || m == nil {
			continue
		}
		slug := strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := count[slug]; n > 0 {
			a[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			a[slug] = true
		}
		count[slug]++
	}
	anchorCache[rel] = a
	return a
}

// specSections returns the section numbers of docs/spec.md ("2", "2.1").
func specSections(t *testing.T) map[string]bool {
	data, err := os.ReadFile("spec.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if m := heading.FindStringSubmatch(l); m != nil {
			out[m[1]] = true
		}
	}
	if !out["2.1"] || !out["8"] {
		t.Fatalf("docs/spec.md sections %v: the headings changed shape", out)
	}
	return out
}

// TestConfigExamplesParse: every YAML example of docs/config.md is a valid
// config file.
func TestConfigExamplesParse(t *testing.T) {
	data, err := os.ReadFile("config.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d YAML examples", len(blocks))
	}
	for _, b := range blocks {
		if _, err := config.Parse([]byte(b[1])); err != nil {
			t.Errorf("%v in\n%s", err, b[1])
		}
	}
}
