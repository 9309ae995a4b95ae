package capture

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
// Files are created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) with mode 0600
// and named "<seq>-<12 hex>-<stream>.log", where seq is a per-process
// sequence number.
type SpillDir struct {
	base   string
	random io.Reader // the names' random part; crypto/rand unless a test sets it

	mu      sync.Mutex
	dir     string
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
func (d *SpillDir) Ensure() (string, error) { return d.ensure() }

// Path returns the private directory, or "" before the first spill.
func (d *SpillDir) Path() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dir
}

var errSpillDirRemoved = errors.New("spill directory already removed")

func (d *SpillDir) ensure() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.removed {
		return "", errSpillDirRemoved
	}
	if d.dir != "" {
		return d.dir, nil
	}
	if err := os.MkdirAll(d.base, 0o700); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(d.base, spillPrefix+procfs.Owner().String()+"-")
	if err != nil {
		return "", err
	}
	// MkdirTemp uses 0700 already; make it exact whatever the umask.
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	d.dir = dir
	return dir, nil
}

// Create makes a new spill file for stream.
func (d *SpillDir) Create(stream string) (File, error) {
	dir, err := d.ensure()
	if err != nil {
		return nil, err
	}
	var random [6]byte
	if _, err := io.ReadFull(d.random, random[:]); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%06d-%s-%s.log", spillSeq.Add(1), hex.EncodeToString(random[:]), stream)
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
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
	if d.dir == "" {
		return nil
	}
	err := os.RemoveAll(d.dir)
	d.dir = ""
	return err
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
func Sweep(base string) ([]string, error) {
	if base == "" {
		base = os.TempDir()
	}
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
		if !e.IsDir() || !leftover(e.Name()) {
			continue
		}
		path := filepath.Join(base, e.Name())
		if !ours(path) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// SweepOlder removes, under base, the private spill directories (real
// directories owned by this user, named as [SpillDir] names them) last
// modified before cutoff, whatever their process: the kept spill files of
// dsh run (docs/spec.md §6.1), whose paths were printed for a user who
// may read them after dsh exited. A directory whose process still runs is
// kept, and so is one of another pid namespace, whose process cannot be
// judged here (as [Sweep] does). It returns the directories it removed.
func SweepOlder(base string, cutoff time.Time) ([]string, error) {
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
		path := filepath.Join(base, e.Name())
		if !e.IsDir() || !strings.HasPrefix(e.Name(), spillPrefix) || !ours(path) || running(e.Name()) {
			continue
		}
		if info, err := e.Info(); err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
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
