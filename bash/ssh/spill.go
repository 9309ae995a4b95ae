package ssh

// Spill files on the remote host: the collectors run here, and a stream
// that overflows is written back to a file in a private directory there,
// whose path the model is told (docs/spec.md §13).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dsh-go/dsh/bash/capture"
)

// Remote scripts of the spill directory. umask 077 makes the directory
// 0700 and the files 0600; the directory's name is new (mkdir fails on
// one that exists), and `set -C` creates each file exclusively.
const (
	// baseScript reports on the base "$1" (the remote $TMPDIR, else /tmp,
	// when "$1" is empty), making nothing: the base as used, the remote
	// user's uid, the part of the base that does not exist yet ("" when
	// it all does), its nearest existing directory with its symlinks
	// resolved, then `ls -ldn` of that directory and of each one above
	// it, up to /.
	baseScript = `b=${1:-${TMPDIR:-/tmp}} && d=$b && r= && ` +
		`while [ ! -e "$d" ] && [ ! -L "$d" ]; do case $d in */*) r=/${d##*/}$r; d=${d%/*} ;; *) r=/$d$r; d=. ;; esac; d=${d:-/}; done && ` +
		`printf '%s\n' "$b" && id -u && printf '%s\n' "$r" && cd -- "$d" && d=$(pwd -P) && printf '%s\n' "$d" && ` +
		`while :; do ls -ldn -- "$d" || exit; [ "$d" = / ] && exit; d=${d%/*}; d=${d:-/}; done`
	// mkdirScript makes the base "$1" (a checked path without symlinks) if
	// missing and the private directory "$2" in it, and prints the private
	// directory's path, resolved, `ls -ldn` of it, then `ls -ldn` of the
	// base and of each directory above it: a part of the base that was
	// missing when it was checked may have been made by another meanwhile.
	mkdirScript = `umask 077 && mkdir -p -- "$1" && cd -- "$1" && mkdir -- "$2" && cd -- "$2" && pwd -P && ls -ldn . && ` +
		`d=$(cd .. && pwd -P) && while :; do ls -ldn -- "$d" || exit; [ "$d" = / ] && exit; d=${d%/*}; d=${d:-/}; done`
	// writeScript writes its stdin to a new file "$1"; cat's exit status
	// says whether every byte was written.
	writeScript = `umask 077 && set -C && exec cat > "$1"`
	// removeScript removes files.
	removeScript = `exec rm -f -- "$@"`
	// removeDirScript removes the private directory.
	removeDirScript = `exec rm -rf -- "$1"`
)

// spillPrefix starts the private directories' names. They are never swept
// by a later dsh: whether their owner still runs cannot be told from the
// remote host, so one left by a dsh that died stays until the remote
// host's temp cleaner removes it.
const spillPrefix = "dsh-out-ssh-"

// spillSeq numbers the spill files of this process.
var spillSeq atomic.Uint64

var errSpillRemoved = errors.New("spill directory already removed")

// remoteSpill is the executor's private spill directory on the remote
// host, made on the first spill. It is the collectors' capture.Spiller.
type remoteSpill struct {
	e    *Executor
	base string // ssh.spillDir; "" is the remote $TMPDIR or /tmp

	mu      sync.Mutex
	dir     string
	removed bool
}

var _ capture.Spiller = (*remoteSpill)(nil)

// Create starts a remote file for stream. It does not wait for a free
// channel: a collector calls it while it holds a command's output, and the
// channels may all be held by commands whose output is held the same way.
// Without one the spill fails, and the path is withheld.
func (s *remoteSpill) Create(stream string) (capture.File, error) {
	dir, err := s.ensure()
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("%s/%06d-%s-%s.log", dir, spillSeq.Add(1), randomHex(6), stream)
	rc, err := s.e.startRemote(context.Background(), false, writeScript, path)
	if err != nil {
		return nil, fmt.Errorf("spill file on %s: %w", s.e.target.host, err)
	}
	return &remoteFile{rc: rc, path: path, e: s.e}, nil
}

// ensure makes the private directory once and returns its path. The base
// is checked first, as the local executor checks its own (docs/spec.md
// §13): no other user may be able to move what dsh puts there, or they
// could swap dsh's directory for one of theirs and write what the model
// reads. Then the new directory must be the remote user's, mode 0700.
// A base found unsafe is looked at again at the next spill.
func (s *remoteSpill) ensure() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return "", errSpillRemoved
	}
	if s.dir != "" {
		return s.dir, nil
	}
	base, err := s.e.checkBase(context.Background(), false, s.base)
	if err == nil {
		s.dir, err = s.e.makePrivate(base, spillPrefix+randomHex(6))
	}
	if err != nil {
		return "", fmt.Errorf("spill directory on %s: %w", s.e.target.host, err)
	}
	return s.dir, nil
}

// checkedBase is a remote base that passed the checks: its path without
// symlinks (made when missing), and the remote user's uid.
type checkedBase struct {
	real string
	uid  int
}

// checkBase checks the remote base as capture.CheckBase checks a local
// one: base, with its symlinks resolved, and every directory above it
// must belong to the remote user or root, and be writable by no other
// user unless it has the sticky bit. A base that does not exist yet is
// checked by its nearest existing directory. wait: whether to wait for a
// free channel (not while a collector holds output).
func (e *Executor) checkBase(ctx context.Context, wait bool, base string) (checkedBase, error) {
	rc, err := e.startRemote(ctx, wait, baseScript, base)
	if err != nil {
		return checkedBase{}, err
	}
	out, err := rc.wait()
	if err != nil {
		return checkedBase{}, err
	}
	r, err := parseBase(out)
	if err != nil {
		return checkedBase{}, err
	}
	if err := checkChain(r.given, r.chain, r.uid); err != nil {
		return checkedBase{}, err
	}
	return checkedBase{real: r.real, uid: r.uid}, nil
}

// makePrivate makes the private directory name in the checked base, and
// checks that it is the remote user's, mode 0700 (a default ACL on the
// base could have made it otherwise), and where it was asked for.
func (e *Executor) makePrivate(base checkedBase, name string) (string, error) {
	rc, err := e.startRemote(context.Background(), false, mkdirScript, base.real, name)
	if err != nil {
		return "", err
	}
	out, err := rc.wait()
	if err != nil {
		return "", err
	}
	dir, err := judgePrivate(out, base, name)
	if err == nil {
		return dir, nil
	}
	want := path.Join(base.real, name)
	if rc, rerr := e.startRemote(context.Background(), false, removeDirScript, want); rerr == nil {
		_, _ = rc.wait()
	}
	return "", err
}

// judgePrivate reads mkdirScript's output: the private directory, which
// must be the remote user's with mode 0700 and where it was asked for,
// and the base's chain, each directory judged again as the base was.
func judgePrivate(out string, base checkedBase, name string) (string, error) {
	want := path.Join(base.real, name)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	bad := fmt.Errorf("unexpected output making %s: %q", want, out)
	if len(lines) < 3 || lines[0] != want {
		return "", bad
	}
	d, err := parseLs(lines[1], lines[0])
	if err != nil {
		return "", bad
	}
	chain, err := parseChain(lines[2:], base.real)
	if err != nil {
		return "", bad
	}
	if d.owner != base.uid || d.mode.Perm() != 0o700 {
		return "", capture.NotOwnDirError(lines[0], d.mode)
	}
	if err := checkChain(base.real, chain, base.uid); err != nil {
		return "", err
	}
	return lines[0], nil
}

// remoteBase is what baseScript reports.
type remoteBase struct {
	given string // the base as used
	uid   int    // the remote user's
	real  string // the base without symlinks: its nearest existing directory's real path, then the rest
	chain []remoteDir
}

// remoteDir is one directory as `ls -ldn` shows it.
type remoteDir struct {
	path  string
	mode  os.FileMode
	owner int
}

// parseBase reads baseScript's output: the base, the uid, the missing
// part, the nearest existing directory resolved, then one ls line for
// each directory from that one up to /.
func parseBase(out string) (remoteBase, error) {
	bad := fmt.Errorf("unexpected output checking the spill directory base: %q", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[3], "/") {
		return remoteBase{}, bad
	}
	uid, err := strconv.Atoi(lines[1])
	if err != nil {
		return remoteBase{}, bad
	}
	resolved := lines[3]
	r := remoteBase{given: lines[0], uid: uid, real: path.Join(resolved, lines[2])}
	if r.chain, err = parseChain(lines[4:], resolved); err != nil {
		return remoteBase{}, bad
	}
	return r, nil
}

// parseChain reads one `ls -ldn` line of a directory for from and each
// directory above it, up to /.
func parseChain(lines []string, from string) ([]remoteDir, error) {
	var chain []remoteDir
	for p := from; ; p = path.Dir(p) {
		if len(lines) == 0 {
			return nil, errors.New("too few lines")
		}
		d, err := parseLs(lines[0], p)
		if err != nil || !d.mode.IsDir() {
			return nil, fmt.Errorf("not a directory: %q", lines[0])
		}
		chain, lines = append(chain, d), lines[1:]
		if p == "/" {
			break
		}
	}
	if len(lines) != 0 {
		return nil, errors.New("too many lines")
	}
	return chain, nil
}

// checkChain judges each directory of a base's chain as the local base
// is judged.
func checkChain(given string, chain []remoteDir, uid int) error {
	for _, d := range chain {
		if err := capture.CheckBaseDir(given, d.path, d.mode, d.owner, uid); err != nil {
			return err
		}
	}
	return nil
}

// parseLs reads the mode and numeric owner from an `ls -ldn` line of p:
// "drwxrwxrwt 10 0 0 4096 Dec  4 03:00 /tmp".
func parseLs(line, p string) (remoteDir, error) {
	f := strings.Fields(line)
	if len(f) < 3 || len(f[0]) < 10 {
		return remoteDir{}, fmt.Errorf("unexpected ls line %q", line)
	}
	owner, err := strconv.Atoi(f[2])
	if err != nil {
		return remoteDir{}, fmt.Errorf("unexpected ls line %q", line)
	}
	return remoteDir{path: p, mode: lsMode(f[0][:10]), owner: owner}, nil
}

// lsMode is the file mode that ls's ten mode characters show: the type,
// the permission bits (s and t include x) and the sticky bit.
func lsMode(s string) os.FileMode {
	var m os.FileMode
	if s[0] == 'd' {
		m |= os.ModeDir
	}
	for i := range 9 {
		if c := s[1+i]; c != '-' && c != 'S' && c != 'T' {
			m |= 1 << (8 - i)
		}
	}
	if s[9] == 't' || s[9] == 'T' {
		m |= os.ModeSticky
	}
	return m
}

// owns reports whether path is a file of the private directory.
func (s *remoteSpill) owns(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rest, ok := strings.CutPrefix(path, s.dir+"/")
	return s.dir != "" && ok && rest != "" && !strings.Contains(rest, "/")
}

// remove deletes the private directory (Close). Create fails afterwards.
func (s *remoteSpill) remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removed = true
	if s.dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*s.e.keepalive)
	defer cancel()
	if _, err := s.e.runRemote(ctx, removeDirScript, s.dir); err != nil {
		return fmt.Errorf("%s: remove the spill directory %s on %s: %w", Name, s.dir, s.e.target.host, err)
	}
	s.dir = ""
	return nil
}

// maxRemoveArgs bounds the paths of one remove command.
const maxRemoveArgs = 64

// RemoveSpills deletes spill files the executor reported, on the remote
// host ([bash.SpillRemover]). Only files of its private directory are
// touched; what cannot be removed is logged.
func (e *Executor) RemoveSpills(paths ...string) {
	var mine []string
	for _, p := range paths {
		if e.spill.owns(p) {
			mine = append(mine, p)
		} else if p != "" {
			e.log.Warn("ssh: not removing a file outside the spill directory", "host", e.target.host, "path", p)
		}
	}
	for len(mine) > 0 {
		n := min(len(mine), maxRemoveArgs)
		ctx, cancel := context.WithTimeout(context.Background(), 3*e.keepalive)
		if _, err := e.runRemote(ctx, removeScript, mine[:n]...); err != nil {
			e.log.Warn("ssh: removing spill files", "host", e.target.host, "files", mine[:n], "err", err)
		}
		cancel()
		mine = mine[n:]
	}
}

// remoteFile is a spill file being written on the remote host.
type remoteFile struct {
	rc   *remoteCmd
	path string
	e    *Executor
}

var (
	_ capture.File    = (*remoteFile)(nil)
	_ capture.Remover = (*remoteFile)(nil)
)

func (f *remoteFile) Write(p []byte) (int, error) { return f.rc.s.ch.Write(p) }
func (f *remoteFile) Name() string                { return f.path }

// Close ends the file and reports whether every byte reached it.
func (f *remoteFile) Close() error {
	if _, err := f.rc.wait(); err != nil {
		return fmt.Errorf("%s on %s: %w", f.path, f.e.target.host, err)
	}
	return nil
}

// Remove deletes a file the collector withholds, in the background: the
// collector calls it while it holds a command's output. The run that
// collects is live, so the executor's WaitGroup is above zero.
func (f *remoteFile) Remove() error {
	f.e.wg.Add(1)
	go func() {
		defer f.e.wg.Done()
		f.e.RemoveSpills(f.path)
	}()
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
