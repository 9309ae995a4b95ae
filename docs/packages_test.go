package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPackageDocsAndExamples: every package has a doc comment, and every
// package a Go program can import (outside internal/ and cmd/) an Example
// (docs/design.md, Style). Packages of tests only (deploy, docs) are
// documented in a test file and need no Example.
func TestPackageDocsAndExamples(t *testing.T) {
	pkgs := readPackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages: is %s the repository?", len(pkgs), root)
	}
	for dir, p := range pkgs {
		if !p.doc {
			t.Errorf("package %s has no doc comment", dir)
		}
		if p.code && importable(dir) && !p.example {
			t.Errorf("package %s has no Example", dir)
		}
	}
}

// importable reports whether a Go program outside dsh can import the
// package in dir: not under an internal/ directory, not a command.
func importable(dir string) bool {
	return !strings.HasPrefix(dir, "cmd/") && dir != "internal" && !strings.HasPrefix(dir, "internal/") && !strings.Contains(dir, "/internal/") && !strings.HasSuffix(dir, "/internal")
}

// pkgFacts is what the tests need to know of one package's files.
type pkgFacts struct {
	code    bool // it has files other than tests
	doc     bool // a file has a package doc comment
	example bool // a test file has an Example function
	// imports are the import paths of its files other than tests, on
	// every platform.
	imports map[string]bool
}

// packages is what readPackages read, for the tests after the first.
var packages map[string]*pkgFacts

// readPackages reads the Go files of the repository, by directory
// relative to it.
func readPackages(t *testing.T) map[string]*pkgFacts {
	if packages != nil {
		return packages
	}
	pkgs := map[string]*pkgFacts{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if skipDir(rel) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".go" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		p := pkgs[dir]
		if p == nil {
			p = &pkgFacts{imports: map[string]bool{}}
			pkgs[dir] = p
		}
		test := strings.HasSuffix(path, "_test.go")
		p.code = p.code || !test
		p.doc = p.doc || f.Doc != nil
		p.example = p.example || test && hasExample(f)
		for _, im := range f.Imports {
			if !test {
				p.imports[strings.Trim(im.Path.Value, `"`)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	packages = pkgs
	return pkgs
}

// hasExample reports whether f declares an Example function.
func hasExample(f *ast.File) bool {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") {
			return true
		}
	}
	return false
}

// module is the import path of the repository's root.
const module = "github.com/dsh-go/dsh/"

// TestDesignListsEveryPackage: docs/design.md names every package, in its
// list of packages or in backquotes.
func TestDesignListsEveryPackage(t *testing.T) {
	data, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	design := string(data)
	for dir, p := range readPackages(t) {
		if !p.code {
			continue
		}
		if !strings.Contains(design, "\n"+dir+" ") && !strings.Contains(design, "`"+dir+"`") {
			t.Errorf("docs/design.md does not name package %s", dir)
		}
	}
}

// TestImportClaims: what the docs say a package does not import, it
// imports neither directly nor through another package of dsh.
func TestImportClaims(t *testing.T) {
	pkgs := readPackages(t)
	for _, c := range []struct {
		pkg, why string
		not      []string // import paths, or dsh directories, it must not reach
		onlyDsh  []string // when set, the only dsh directories it may reach
	}{
		{pkg: "policy", why: "policy/doc.go: config validates rules with it", onlyDsh: []string{"internal/lazyre"}},
		{pkg: "bash", why: "design.md: the seam knows no tools, tasks or sessions, and no config parser",
			not: []string{"tool", "tasks", "session", "config", "go.yaml.in/yaml/v3", "mvdan.cc/sh/v3/syntax"}},
		{pkg: "tasks", why: "design.md: tasks knows nothing of bash, and no config parser",
			not: []string{"bash", "config", "go.yaml.in/yaml/v3", "mvdan.cc/sh/v3/syntax"}},
		{pkg: "tool", why: "design.md: tool knows nothing of MCP or ACP",
			not: []string{"mcpserver", "acp", "github.com/modelcontextprotocol/go-sdk/mcp", "github.com/coder/acp-go-sdk"}},
		{pkg: "session", why: "design.md: session knows nothing of tasks or tools", not: []string{"tasks", "tool"}},
		{pkg: "bash/ssh", why: "design.md: it imports neither bash/local nor the tool or task packages",
			not: []string{"bash/local", "tool", "tool/bashtool", "tasks"}},
	} {
		reach := reached(pkgs, c.pkg)
		for _, n := range c.not {
			if reach[n] {
				t.Errorf("%s reaches %s (%s)", c.pkg, n, c.why)
			}
		}
		if c.onlyDsh == nil {
			continue
		}
		for dir := range reach {
			if pkgs[dir] != nil && !slices.Contains(c.onlyDsh, dir) {
				t.Errorf("%s reaches %s (%s)", c.pkg, dir, c.why)
			}
		}
	}
}

// reached is every import of dir, directly or through packages of dsh:
// dsh's packages by directory, others by import path.
func reached(pkgs map[string]*pkgFacts, dir string) map[string]bool {
	seen := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		p := pkgs[dir]
		if p == nil {
			return
		}
		for im := range p.imports {
			name, ours := strings.CutPrefix(im, module)
			if !ours {
				name = im
			}
			if !seen[name] {
				seen[name] = true
				visit(name)
			}
		}
	}
	visit(dir)
	return seen
}
