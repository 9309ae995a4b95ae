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
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
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

// MaxSize is the largest settings file Read takes: no real one comes
// close, and a repository's file must not make dsh read without end.
const MaxSize = 1 << 20

// Read decodes the JSON file at path into v. found is false for a file
// that does not exist (not an error); err is a read or JSON error.
//
// A project's files come with whatever repository the user cloned, so
// Read trusts nothing about them: a symlink to /dev/zero would be read
// without end, and opening a FIFO blocks until a writer comes, which
// nobody does. The file is opened without blocking, must be a regular
// file, and may hold at most MaxSize bytes; anything else is an error,
// which callers treat as a malformed file.
func Read(path string, v any) (found bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer f.Close()
	data, err := readRegular(f)
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	return true, err
}

// readRegular reads an open file that must be regular and at most MaxSize.
func readRegular(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err == nil && len(data) > MaxSize {
		err = fmt.Errorf("larger than %d bytes", MaxSize)
	}
	return data, err
}

// Project is PROJECT: CLAUDE_PROJECT_DIR of dsh's environment when set,
// else cwd.
func Project(cwd string) string {
	if dir := os.Getenv("CLAUDE_PROJECT_DIR"); dir != "" {
		return dir
	}
	return cwd
}
