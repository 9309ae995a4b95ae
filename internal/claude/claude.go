// Package claude finds Claude Code's settings files, which dsh reads for
// their Bash permission rules (package permissions) and their hooks
// (package hooks): which files, in which order, and which of them belong
// to the project and so to whoever wrote the repository (docs/spec.md
// §9.5, §10).
//
//	for _, f := range (claude.Places{Home: home, Project: project}).Files() {
//		found, err := claude.Read(f.Path, &settings)
//		…
//	}
package claude

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// DefaultManagedDir holds managed-settings.json and managed-settings.d.
const DefaultManagedDir = "/etc/claude-code"

// Places are where the files are.
type Places struct {
	// ManagedDir is DefaultManagedDir when empty.
	ManagedDir string
	// Home is the user's home; no user file when empty.
	Home string
	// Project is PROJECT; no project file when empty.
	Project string
}

// File is one settings file.
type File struct {
	Path string
	// Managed: set by an administrator; a malformed one must not be
	// skipped quietly.
	Managed bool
	// Project: in the project's .claude/ directory, written by whoever
	// wrote the repository.
	Project bool
}

// Files lists the settings files in Claude Code's order: managed (the
// drop-in directory's files by name), user, project, project local. Files
// that do not exist are listed too; Read tells.
func (p Places) Files() []File {
	dir := p.ManagedDir
	if dir == "" {
		dir = DefaultManagedDir
	}
	files := []File{{Path: filepath.Join(dir, "managed-settings.json"), Managed: true}}
	drop, _ := filepath.Glob(filepath.Join(dir, "managed-settings.d", "*.json"))
	slices.Sort(drop)
	for _, path := range drop {
		files = append(files, File{Path: path, Managed: true})
	}
	if p.Home != "" {
		files = append(files, File{Path: filepath.Join(p.Home, ".claude", "settings.json")})
	}
	if p.Project != "" {
		files = append(files,
			File{Path: filepath.Join(p.Project, ".claude", "settings.json"), Project: true},
			File{Path: filepath.Join(p.Project, ".claude", "settings.local.json"), Project: true})
	}
	return files
}

// Read decodes the JSON file at path into v. found is false for a file
// that does not exist (not an error); err is a read or JSON error.
func Read(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	return true, err
}

// Project is PROJECT: CLAUDE_PROJECT_DIR of dsh's environment when set,
// else cwd.
func Project(cwd string) string {
	if dir := os.Getenv("CLAUDE_PROJECT_DIR"); dir != "" {
		return dir
	}
	return cwd
}
