//go:build linux

package sandbox

// What a command is shown of the host besides the read-only root, and
// what of dsh's own it must not reach (docs/spec.md §11): computed at each
// start from the config and what exists then, and made into mounts (bwrap)
// or rules (Landlock) by the backend.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/bash/capture"
)

// view is what one command is shown and what is hidden from it.
type view struct {
	roots   []string     // writable: the workspace first (workspace-write)
	workdir string       // shown read-only: "" when a root holds it
	hidden  []hiddenPath // the hide entries that exist, dsh's own included
	spill   spillView
	// configDir is dsh's config file's directory when it is hidden, and
	// config the config file in it, shown read-only.
	configDir, config string
}

// spillView is how the spill files of other sessions and other dsh
// processes are put out of sight: the whole spill base, or, where that
// would hide a writable root or the home directory, each private spill
// directory in it, this executor's own among them. The command's own
// spill directory is shown again in either.
type spillView struct {
	base   string
	others []string // other dsh processes' private directories
	own    string   // this executor's private directory, with others
}

// shown are the directories v shows on top of what is out of sight.
func (v view) shown() []string {
	if v.workdir == "" {
		return v.roots
	}
	return append(append([]string(nil), v.roots...), v.workdir)
}

// newView is what c, whose workspace is ws, is shown. replaced are the
// directories the backend puts out of sight whole besides the spill base
// (bwrap: the run directories and /tmp; Landlock: the run directories).
// A root or workdir inside dsh's private spill directories is not shown:
// the model picks the workdir, and must not pick its way in there.
func (s *Sandbox) newView(c Command, ws string, replaced []string) view {
	v := view{hidden: s.hidden()}
	for _, r := range s.writable(ws) {
		if !s.inPrivate(r) {
			v.roots = append(v.roots, r)
		}
	}
	if c.Dir != "" && !withinAny(c.Dir, v.roots) && !s.inPrivate(c.Dir) && s.outOfSight(c.Dir, replaced) {
		v.workdir = c.Dir
	}
	v.spill = s.spillView(v, replaced)
	if v.spill.base != "" {
		replaced = append(slices.Clone(replaced), v.spill.base)
	}
	v.configDir, v.config = s.configView(ws, v.roots, replaced, v.shown())
	return v
}

// outOfSight reports whether dir lies in what the sandbox puts out of
// sight (the replaced directories, the spill base), where a workdir must
// be shown again. Elsewhere the read-only root shows it already, and
// binding it would cover what the sandbox mounted inside it: a workdir of
// / would bring back the host's /dev, /proc, /run and /tmp.
func (s *Sandbox) outOfSight(dir string, replaced []string) bool {
	return withinAny(dir, replaced) || s.base != "" && within(dir, s.base)
}

// inPrivate reports whether p lies in a private spill directory of the
// spill base: another dsh's, or this executor's, of which a command sees
// only its own spill directory.
func (s *Sandbox) inPrivate(p string) bool {
	if s.base == "" || p == s.base || !within(p, s.base) {
		return false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(p, s.base), "/")
	name, _, _ := strings.Cut(rest, "/")
	return isPrivateName(name)
}

// isPrivateName reports whether a directory of the spill base holds spill
// files of a dsh: an executor's private directory, or dsh run's base of
// its own (dsh-run-<uid>, made in the temp dir).
func isPrivateName(name string) bool {
	return capture.IsPrivateName(name) || strings.HasPrefix(name, "dsh-run-")
}

// visible reports whether p is in sight: outside the replaced
// directories, or inside a directory shown on top of them.
func visible(p string, replaced, shown []string) bool {
	return !withinAny(p, replaced) || withinAny(p, shown)
}

// spillView decides how v hides other spill files: nothing to do when
// the base is out of sight already; the whole base, unless it is a
// writable root, the root directory, or holds the home directory, where
// hiding it whole would hide what commands need: then each private
// directory found in it now (one made later is not hidden). A workdir
// that is the base reads as empty but for the command's spill directory.
func (s *Sandbox) spillView(v view, replaced []string) spillView {
	if s.base == "" || !visible(s.base, replaced, v.shown()) {
		return spillView{}
	}
	if s.base != "/" && !within(s.home, s.base) && !slices.Contains(v.roots, s.base) {
		return spillView{base: s.base}
	}
	sv := spillView{own: s.private}
	entries, _ := os.ReadDir(s.base)
	for _, e := range entries {
		p := filepath.Join(s.base, e.Name())
		if e.IsDir() && isPrivateName(e.Name()) && p != s.private {
			sv.others = append(sv.others, p)
		}
	}
	return sv
}

// configView decides whether dsh's config file's directory is hidden
// from a command whose workspace is ws, and where the config file is
// then shown: it is not when it is too broad to be dsh's own (the root
// directory, a directory right under it such as /etc, the home directory
// or one above it), when it is or holds the workspace or a writable root
// (a project's own directory stays visible), or when it is out of sight
// already (replaced holds the spill base when it is hidden whole). A
// workdir inside it does not keep it visible: the model picks the
// workdir.
func (s *Sandbox) configView(ws string, roots, replaced, shown []string) (dir, file string) {
	d := s.configDir
	if d == "" || d == "/" || filepath.Dir(d) == "/" || within(s.home, d) || !visible(d, replaced, shown) {
		return "", ""
	}
	if within(ws, d) {
		return "", ""
	}
	for _, r := range roots {
		if within(r, d) {
			return "", ""
		}
	}
	return d, filepath.Join(d, filepath.Base(s.config))
}

// runDirs are /run, /var/run (unless it leads into /run) and
// $XDG_RUNTIME_DIR (unless under /run), resolved: where a host's sockets
// gather; every backend puts them out of sight.
func runDirs() []string {
	dirs := []string{"/run"}
	if r := resolved("/var/run"); !within(r, "/run") {
		dirs = append(dirs, r)
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		if r := resolved(x); !withinAny(r, dirs) {
			dirs = append(dirs, r)
		}
	}
	return dirs
}

// resolvConf is the resolver's config, which may lead into /run
// (systemd-resolved's stub-resolv.conf): its target stays readable.
var resolvConf = "/etc/resolv.conf"

// resolvTarget is where resolvConf leads when that is inside dirs (the
// run directories), else "".
func resolvTarget(dirs []string) string {
	r := resolved(resolvConf)
	if r == resolvConf || !withinAny(r, dirs) {
		return ""
	}
	if _, err := os.Stat(r); err != nil {
		return ""
	}
	return r
}
