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
// not list. dsh's own socket is hidden by name (Options.Hide) besides. A
// socket removed between the scan and bwrap's mounts fails that command
// (bwrap cannot make its mount point on the read-only root), as a hide
// entry removed then does; the start-up probe covers none. One the
// command could not reach anyway gets no cover (creds.reachable).
// Landlock needs none of this: its seccomp filter refuses socket(AF_UNIX).

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
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
// name already, in its sight, that is, not under out (the replaced
// directories, the hidden spill base) unless a shown directory holds
// them, and that it could connect to (creds.reachable). A directory's
// symlinks are resolved once for all the sockets in it: a busy host has
// many in a few directories.
func (s *Sandbox) coveredSockets(v view, out []string) []string {
	shown := v.shown()
	skip := map[string]bool{}
	for _, p := range s.allowed {
		skip[p] = true
	}
	for _, h := range v.hidden {
		skip[h.path] = true
	}
	dirs, searchable := map[string]string{}, map[string]bool{}
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
		if s.creds.reachable(r, searchable) {
			covered = append(covered, r)
		}
	}
	return covered
}

// creds are who a sandboxed command is to the kernel's permission
// checks: dsh's user and groups, without capabilities (bwrap drops them,
// root's included).
type creds struct {
	uid    uint32
	groups map[uint32]bool
}

func ownCreds() creds {
	c := creds{uid: uint32(os.Geteuid()), groups: map[uint32]bool{uint32(os.Getegid()): true}}
	gs, _ := os.Getgroups()
	for _, g := range gs {
		c.groups[uint32(g)] = true
	}
	return c
}

// reachable reports whether c can connect to the socket at p (resolved):
// search every directory above it, and write it. One it cannot reach
// needs no cover, and must get none: bwrap, whose user namespace maps no
// other user, cannot make a mount point under a directory of another
// user's that only that user may search (dsh as root can: every command
// would fail). searchable holds the directories' answers for one call.
func (c creds) reachable(p string, searchable map[string]bool) bool {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		ok, seen := searchable[d]
		if !seen {
			var st unix.Stat_t
			ok = unix.Stat(d, &st) == nil && c.permits(d, &st, 1)
			searchable[d] = ok
		}
		if !ok {
			return false
		}
		if d == "/" {
			break
		}
	}
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return false // gone, or removed and its name reused
	}
	return c.permits(p, &st, 2)
}

// permits reports whether c has permission bit (1: search, 2: write) on
// the file at path, whose stat is st, by its mode; where the mode says no
// but the file has an ACL, which may say yes, it answers yes: covering a
// socket the command cannot reach is the safe mistake.
func (c creds) permits(path string, st *unix.Stat_t, bit uint32) bool {
	var ok bool
	switch {
	case st.Uid == c.uid:
		ok = st.Mode&(bit<<6) != 0
	case c.groups[st.Gid]:
		ok = st.Mode&(bit<<3) != 0
	default:
		ok = st.Mode&bit != 0
	}
	if ok {
		return true
	}
	n, err := unix.Lgetxattr(path, "system.posix_acl_access", nil)
	return err == nil && n > 0
}
