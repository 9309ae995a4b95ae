package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exampleComing are importable packages whose Example is added on another
// branch of the same change. The test fails once one of them has one, so
// that this list empties as they are merged.
var exampleComing = []string{"bash/capture", "bash/local", "bash/ssh", "tool/bashtool", "tool/tasktool"}

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
		if !p.code || strings.HasPrefix(dir, "internal/") || strings.HasPrefix(dir, "cmd/") {
			continue
		}
		coming := slices.Contains(exampleComing, dir)
		switch {
		case !p.example && !coming:
			t.Errorf("package %s has no Example", dir)
		case p.example && coming:
			t.Errorf("package %s has an Example now: remove it from exampleComing", dir)
		}
	}
}

// pkgFacts is what the test needs to know of one package's files.
type pkgFacts struct {
	code    bool // it has files other than tests
	doc     bool // a file has a package doc comment
	example bool // a test file has an Example function
}

// readPackages reads the Go files of the repository, by directory
// relative to it.
func readPackages(t *testing.T) map[string]*pkgFacts {
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
			p = &pkgFacts{}
			pkgs[dir] = p
		}
		test := strings.HasSuffix(path, "_test.go")
		p.code = p.code || !test
		p.doc = p.doc || f.Doc != nil
		p.example = p.example || test && hasExample(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
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
