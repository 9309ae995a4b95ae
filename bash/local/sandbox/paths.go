//go:build linux

package sandbox

// Paths: the config's "~/", symlinks, and, for Landlock (which only
// grants), the set of subtrees that covers a tree except some paths in it.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// expand turns "~/x" into home/x; other paths are cleaned.
func expand(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return filepath.Clean(p)
}

// resolved resolves p's symlinks, or returns p cleaned when it does not
// exist (a hide entry may appear later).
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// withinAny reports whether p is one of dirs or inside one of them.
func withinAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// existingDir resolves a directory that must exist: a writable root.
func existingDir(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist", p)
	}
	if err != nil {
		return "", err
	}
	info, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", p)
	}
	return r, nil
}

// cover returns paths whose subtrees, together, hold everything under
// root except the excluded paths and what lies below them: root itself
// when nothing excluded lies under it, else, recursively, the entries of
// root. Landlock grants a right to a whole subtree, so a directory above
// an excluded path gets no rule of its own (it cannot be listed, and no
// entry can be made directly in it). Symlinks get no rule: the access
// goes to their target, which is covered or not on its own; a rule on a
// link would grant its target, perhaps an excluded one.
func cover(root string, excluded []string) []string {
	if withinAny(root, excluded) {
		return nil
	}
	below := false
	for _, x := range excluded {
		if within(x, root) {
			below = true
			break
		}
	}
	if !below {
		return []string{root}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil // unreadable: nothing under it is granted
	}
	var out []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		out = append(out, cover(filepath.Join(root, e.Name()), excluded)...)
	}
	return out
}
