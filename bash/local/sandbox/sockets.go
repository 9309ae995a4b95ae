//go:build linux

package sandbox

// Host Unix sockets (docs/spec.md §11). Connecting to a socket needs only
// search access to the directories above it and write permission on it,
// which a read-only mount does not take away. bwrap's empty /run,
// /var/run, $XDG_RUNTIME_DIR and /tmp hold most of a host's sockets; the
// others, wherever they were bound, are read from /proc/net/unix at each
// command's start and covered by an empty file. What that cannot see: a
// socket bound after the command started, and one bound by a process of
// another network namespace (a container's), which /proc/net/unix does
// not list. dsh's own socket is hidden by name (Options.Hide) besides.
// Landlock needs none of this: its seccomp filter refuses socket(AF_UNIX).

import (
	"os"
	"path/filepath"
	"strings"
)

// procNetUnix lists the Unix sockets of dsh's network namespace.
var procNetUnix = "/proc/net/unix"

// boundSockets returns the distinct absolute paths that sockets of dsh's
// network namespace are bound to now (a listening socket is listed once
// more for each connection it accepted).
func boundSockets() []string {
	data, err := os.ReadFile(procNetUnix)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	lines := strings.Split(string(data), "\n")
	for _, line := range lines[min(1, len(lines)):] { // the first is the header
		if p := socketPath(line); strings.HasPrefix(p, "/") && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// socketPath is the Path field of a line of /proc/net/unix: what follows
// its seven other fields (Num RefCount Protocol Flags Type St Inode) and
// a space, spaces in it included; "" for a socket bound to no path. An
// abstract socket's starts with "@", one bound by a relative path with
// neither "@" nor "/".
func socketPath(line string) string {
	rest := line
	for range 7 {
		rest = strings.TrimLeft(rest, " ")
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			return ""
		}
		rest = rest[i:]
	}
	return strings.TrimPrefix(rest, " ")
}

// coveredSockets lists, resolved, the host sockets a command shown v
// must not reach: those bound now, not in allowSockets, not hidden by
// name already, and in its sight, that is, not under out (the replaced
// directories, the hidden spill base) unless a shown directory holds
// them. A directory's symlinks are resolved once for all the sockets in
// it: a busy host has many in a few directories.
func (s *Sandbox) coveredSockets(v view, out []string) []string {
	shown := v.shown()
	skip := map[string]bool{}
	for _, p := range s.allowed {
		skip[p] = true
	}
	for _, h := range v.hidden {
		skip[h.path] = true
	}
	dirs := map[string]string{}
	var covered []string
	for _, p := range boundSockets() {
		if skip[p] || !visible(p, out, shown) {
			continue
		}
		dir := filepath.Dir(p)
		rdir, ok := dirs[dir]
		if !ok {
			rdir = resolved(dir)
			dirs[dir] = rdir
		}
		r := filepath.Join(rdir, filepath.Base(p))
		if skip[r] || (r != p && !visible(r, out, shown)) {
			continue
		}
		skip[r] = true
		if fi, err := os.Lstat(r); err != nil || fi.Mode().Type() != os.ModeSocket {
			continue // gone, or removed and its name reused
		}
		covered = append(covered, r)
	}
	return covered
}
