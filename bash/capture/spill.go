package capture

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/internal/procfs"
)

// SpillDir is an executor's private spill directory. It is made lazily, on
// the first spill, inside a base directory, with mode 0700 and a name that
// records the owning process by its stamp
// ("dsh-out-<pidns>-<pid>-<start>-<random>") so that a later executor can
// tell a leftover from a live one ([Sweep]).
//
// The base must be safe from other users ([CheckBase]): it is refused when
// another user could move or delete what dsh puts in it. The private
// directory is reached through the descriptor opened when it was made,
// never through a symlink: a file is refused when the directory's path no
// longer names that directory.
//
// Files are created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) with mode 0600
// and named "<seq>-<12 hex>-<stream>.log", where seq is a per-process
// sequence number.
type SpillDir struct {
	base   string
	random io.Reader // the names' random part; crypto/rand unless a test sets it

	mu      sync.Mutex
	dir     string
	root    *os.Root // the private directory, opened when made
	removed bool
}

// spillSeq numbers spill files across all SpillDirs of this process.
var spillSeq atomic.Uint64

// spillPrefix starts the private directories' names. It is not the
// "dsh-spill-" of dsh versions whose names had no pid namespace: their
// sweep reads the first two numbers after it as pid and start, and would
// take a live directory "dsh-spill-<pidns>-<pid>-…" of a newer dsh on the
// same machine for a dead one (no pid is as large as a namespace inode).
const spillPrefix = "dsh-out-"

// IsPrivateName reports whether name is that of an executor's private
// spill directory in a spill base: this version's ("dsh-out-…") or an
// older one's ("dsh-spill-…"). A sandbox hides every such directory from
// its commands but its own session's spill files (docs/spec.md §11).
func IsPrivateName(name string) bool {
	return strings.HasPrefix(name, spillPrefix) || strings.HasPrefix(name, "dsh-spill-")
}

// NewSpillDir returns a SpillDir under base (the OS temp dir when empty).
// Nothing is created until the first spill.
func NewSpillDir(base string) *SpillDir {
	if base == "" {
		base = os.TempDir()
	}
	return &SpillDir{base: base, random: rand.Reader}
}

// SpillDirAt returns a SpillDir whose files go into dir, an existing
// private directory its caller made and removes (a sandboxed session's).
func SpillDirAt(dir string) *SpillDir {
	return &SpillDir{base: filepath.Dir(dir), dir: dir, random: rand.Reader}
}

// Ensure makes the private directory now, if it was not made yet, and
// returns it: a sandbox must show it to commands before they spill.
func (d *SpillDir) Ensure() (string, error) {
	dir, _, err := d.ensure()
	return dir, err
}

// Path returns the private directory, or "" before the first spill.
func (d *SpillDir) Path() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dir
}

var errSpillDirRemoved = errors.New("spill directory already removed")

func (d *SpillDir) ensure() (string, *os.Root, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.removed {
		return "", nil, errSpillDirRemoved
	}
	if d.dir != "" {
		return d.dir, d.root, nil
	}
	base, err := makeBase(d.base)
	if err != nil {
		return "", nil, err
	}
	dir, root, err := makePrivate(base, spillPrefix+procfs.Owner().String()+"-", d.random)
	if err != nil {
		return "", nil, err
	}
	d.dir, d.root = dir, root
	return dir, root, nil
}

// makePrivate makes a directory of mode 0700 named prefix and a random
// part in base, and opens it.
func makePrivate(base, prefix string, random io.Reader) (string, *os.Root, error) {
	b, err := os.OpenRoot(base)
	if err != nil {
		return "", nil, err
	}
	defer b.Close()
	var rnd [8]byte
	for range 100 {
		if _, err := io.ReadFull(random, rnd[:]); err != nil {
			return "", nil, err
		}
		name := prefix + hex.EncodeToString(rnd[:])
		if err := b.Mkdir(name, 0o700); errors.Is(err, os.ErrExist) {
			continue
		} else if err != nil {
			return "", nil, err
		}
		dir := filepath.Join(base, name)
		root, err := b.OpenRoot(name)
		if err == nil {
			// Exact whatever the umask.
			err = root.Chmod(".", 0o700)
		}
		if err == nil {
			err = ownDir(root, dir)
		}
		if err != nil {
			if root != nil {
				root.Close()
			}
			_ = b.Remove(name)
			return "", nil, err
		}
		return dir, root, nil
	}
	return "", nil, fmt.Errorf("no free name for a directory in %s", base)
}

// openAt opens a caller's directory (SpillDirAt) at its first file.
func (d *SpillDir) openAt(dir string) (*os.Root, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.removed {
		return nil, errSpillDirRemoved
	}
	if d.root == nil {
		root, err := openOwnDir(dir)
		if err != nil {
			return nil, err
		}
		d.root = root
	}
	return d.root, nil
}

// openOwnDir opens dir, which must be a directory of this user.
func openOwnDir(dir string) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if err := ownDir(root, dir); err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// ownDir checks that root is a directory of this user that only this user
// can write, and that its path still names it (no symlink in between).
func ownDir(root *os.Root, path string) error {
	fi, err := root.Stat(".")
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return NotOwnDirError(path, fi.Mode())
	}
	return samePath(path, st)
}

// NotOwnDirError is the error for a private spill directory that is not
// this user's alone (a local one, or the SSH executor's remote one).
func NotOwnDirError(path string, mode os.FileMode) error {
	return fmt.Errorf("spill directory %s is not this user's own (mode %v)", path, mode)
}

// samePath checks that path names, without a symlink at its end, the
// directory whose stat is st.
func samePath(path string, st *syscall.Stat_t) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("spill directory %s: %w", path, err)
	}
	pst, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || pst.Dev != st.Dev || pst.Ino != st.Ino {
		return fmt.Errorf("spill directory %s was replaced", path)
	}
	return nil
}

// Create makes a new spill file for stream, in the private directory
// through its descriptor. The file is refused when the directory's path
// no longer names that directory: the path reported for it would name
// something else.
func (d *SpillDir) Create(stream string) (File, error) {
	dir, root, err := d.ensure()
	if err == nil && root == nil {
		root, err = d.openAt(dir)
	}
	if err != nil {
		return nil, err
	}
	var random [6]byte
	if _, err := io.ReadFull(d.random, random[:]); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%06d-%s-%s.log", spillSeq.Add(1), hex.EncodeToString(random[:]), stream)
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	err = f.Chmod(0o600)
	if err == nil {
		err = ownDir(root, dir)
	}
	if err != nil {
		_ = f.Close()
		_ = root.Remove(name)
		return nil, err
	}
	return f, nil
}

// Reopen opens a spill file of d for reading (Reopener), never through a
// symbolic link.
func (d *SpillDir) Reopen(path string) (io.ReaderAt, io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}

// Remove deletes the private directory and everything in it. Create fails
// afterwards.
func (d *SpillDir) Remove() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removed = true
	if d.root != nil {
		_ = d.root.Close()
		d.root = nil
	}
	if d.dir == "" {
		return nil
	}
	err := removeIn(filepath.Dir(d.dir), filepath.Base(d.dir))
	d.dir = ""
	return err
}

// removeIn removes name, and all it holds, from dir without following a
// symlink: a symlink put in its place goes, not what it names.
func removeIn(dir, name string) error {
	b, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer b.Close()
	return b.RemoveAll(name)
}

// UnsafeBaseError is CheckBase's error for a base another user could
// write: unlike a base that cannot be made (a spill file is then
// unavailable), it is a reason not to start.
type UnsafeBaseError struct{ msg string }

func (e *UnsafeBaseError) Error() string { return e.msg }

// CheckBase returns base (the OS temp dir when empty) with its symlinks
// resolved, or an error when it is not safe from other users: when it,
// or a directory above it, belongs to a user other than this one or root,
// or another user can write it and it has no sticky bit (/tmp's 1777 is
// safe), an [*UnsafeBaseError]. Either would let that user move or
// delete what dsh puts in it. A base that does not exist yet is checked
// by its nearest existing parent.
func CheckBase(base string) (string, error) {
	if base == "" {
		base = os.TempDir()
	}
	abs, err := filepath.Abs(base)
	if err != nil {
		return "", err
	}
	missing := ""
	for {
		real, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(real, missing), checkChain(base, real)
		}
		if !errors.Is(err, os.ErrNotExist) || abs == filepath.Dir(abs) {
			return "", fmt.Errorf("spill directory base %s: %w", base, err)
		}
		missing = filepath.Join(filepath.Base(abs), missing)
		abs = filepath.Dir(abs)
	}
}

// checkChain checks real and every directory above it.
func checkChain(base, real string) error {
	for dir := real; ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		if err != nil {
			return fmt.Errorf("spill directory base %s: %w", base, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("spill directory base %s: %s is not a directory", base, dir)
		}
		owner := os.Geteuid()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			owner = int(st.Uid)
		}
		if err := CheckBaseDir(base, dir, fi.Mode(), owner, os.Geteuid()); err != nil {
			return err
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// CheckBaseDir checks one directory of a spill directory base's chain
// (the base, with its symlinks resolved, and every directory above it)
// from its mode and owner, for a user whose uid is self: it returns an
// [*UnsafeBaseError] when the directory belongs to a user other than self
// or root, or when another user can write it and it has no sticky bit,
// else nil. base is the base as configured, for the message. The SSH
// executor checks the remote chain with it, from what the remote host
// reports, so both refuse with the same words.
func CheckBaseDir(base, dir string, mode os.FileMode, owner, self int) error {
	switch {
	case owner != self && owner != 0:
		return &UnsafeBaseError{fmt.Sprintf("spill directory base %s: %s is owned by uid %d, neither this user nor root, who could move what dsh puts there", base, dir, owner)}
	case mode.Perm()&0o022 != 0 && mode&os.ModeSticky == 0:
		return &UnsafeBaseError{fmt.Sprintf("spill directory base %s: %s is writable by other users and has no sticky bit (mode %04o): make it 0700, or 1777 like /tmp", base, dir, mode.Perm())}
	}
	return nil
}

// makeBase checks base and makes it, mode 0700, when it does not exist,
// and returns it with its symlinks resolved.
func makeBase(base string) (string, error) {
	real, err := CheckBase(base)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(real, 0o700); err != nil {
		return "", err
	}
	// Made now, or by someone else meanwhile: check it as it is.
	return CheckBase(real)
}

// Sweep removes, under base (the OS temp dir when empty), the private spill
// directories of processes that no longer run. A directory is left alone
// unless it is a real directory owned by this user whose stamp names a
// process of this pid namespace that is gone, or whose pid now belongs to
// a process started at another time. It returns the directories it
// removed.
//
// A directory of another pid namespace is never removed: a dsh in a
// container that shares the base with the host records a pid that means
// nothing in the host's namespace (and the other way round). Nor is one
// of older dsh versions ("dsh-spill-<pid>-<start>-<random>", without the
// pid namespace): it cannot be told from a live directory of another
// namespace, so it stays until removed by hand (or by a cleaner of the OS
// temp dir). The stamps are one kernel's: a base shared between machines
// (NFS) is not supported, since two kernels' pid namespaces can have the
// same number.
//
// A base that is not safe from other users ([CheckBase]) is not swept.
func Sweep(base string) ([]string, error) {
	base, err := CheckBase(base)
	if err != nil {
		return nil, err
	}
	return removeDirs(base, func(e os.DirEntry) bool {
		return e.IsDir() && leftover(e.Name()) && ours(filepath.Join(base, e.Name()))
	})
}

// SweepOlder removes, under base, the private spill directories (real
// directories owned by this user, named as [SpillDir] names them) last
// modified before cutoff, whatever their process: the kept spill files of
// dsh run (docs/spec.md §6.1), whose paths were printed for a user who
// may read them after dsh exited. A directory whose process still runs is
// kept, and so is one of another pid namespace, whose process cannot be
// judged here (as [Sweep] does). It returns the directories it removed.
func SweepOlder(base string, cutoff time.Time) ([]string, error) {
	return removeDirs(base, func(e os.DirEntry) bool {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), spillPrefix) || !ours(filepath.Join(base, e.Name())) || running(e.Name()) {
			return false
		}
		info, err := e.Info()
		return err == nil && info.ModTime().Before(cutoff)
	})
}

// Removed is what [RemoveFinished] removed: regular files and their bytes.
type Removed struct {
	Files int
	Bytes int64
}

// RemoveFinished removes the spill directories in base whose process no
// longer runs, whatever their age: dsh clean's removal of the spill files
// dsh run kept (docs/spec.md §6.1). As [SweepOlder], it takes only real
// directories (no symlink) of this user's named as spill directories, and
// keeps one whose process still runs or is of another pid namespace. It
// follows no symlink inside them either (a link is removed, not what it
// points to), and counts the regular files it removed and their bytes;
// a base that does not exist has none.
func RemoveFinished(base string) (Removed, error) {
	var r Removed
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(base, e.Name())
		if !e.IsDir() || !stamped(e.Name()) || !ours(path) || running(e.Name()) {
			continue
		}
		errs = append(errs, removeTree(path, &r))
	}
	return r, errors.Join(errs...)
}

// removeTree removes the directory path and everything in it, without
// following symlinks, adding the regular files it removed to r.
func removeTree(path string, r *Removed) error {
	var dirs []string
	var errs []error
	walkErr := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			errs = append(errs, err)
		case d.IsDir():
			dirs = append(dirs, p)
		default:
			info, infoErr := d.Info()
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
			} else if infoErr == nil && info.Mode().IsRegular() {
				r.Files++
				r.Bytes += info.Size()
			}
		}
		return nil
	})
	errs = append(errs, walkErr)
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeDirs removes the entries of base that remove picks, and returns
// their paths; a base that does not exist has none.
func removeDirs(base string, remove func(os.DirEntry) bool) ([]string, error) {
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !remove(e) {
			continue
		}
		path := filepath.Join(base, e.Name())
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// stamped reports whether name is a spill directory's: the prefix, then
// an owner stamp.
func stamped(name string) bool {
	rest, ok := strings.CutPrefix(name, spillPrefix)
	if !ok {
		return false
	}
	_, _, ok = procfs.CutStamp(rest)
	return ok
}

// running reports whether name is that of a spill directory whose stamp
// names this process or one of this pid namespace that still runs (a
// command that has run for longer than the cutoff keeps its files).
func running(name string) bool {
	st, _, ok := procfs.CutStamp(strings.TrimPrefix(name, spillPrefix))
	return ok && (st.Pid == os.Getpid() || !st.Gone())
}

// leftover reports whether name is that of a spill directory whose stamp
// names a process of this pid namespace, other than this one, that no
// longer runs.
func leftover(name string) bool {
	rest, ok := strings.CutPrefix(name, spillPrefix)
	if !ok {
		return false
	}
	s, _, ok := procfs.CutStamp(rest)
	return ok && s.Pid != os.Getpid() && s.Gone()
}

// ours reports whether path is a real directory (no symlink) owned by this
// user.
func ours(path string) bool {
	info, err := os.Lstat(path)
	if err != nil || !info.IsDir() {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}

// discard removes a spill file that is withheld: through the file itself
// when it is not a file of this machine, else by its name.
func discard(f File) {
	if r, ok := f.(Remover); ok {
		_ = r.Remove()
		return
	}
	_ = os.Remove(f.Name())
}
