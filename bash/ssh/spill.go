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
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dsh-go/dsh/bash/capture"
)

// Remote scripts of the spill directory. umask 077 makes the directory
// 0700 and the files 0600; the directory's name is new (mkdir fails on
// one that exists), and `set -C` creates each file exclusively.
const (
	// mkdirScript makes the private directory "$2" under the base "$1"
	// (the remote $TMPDIR, else /tmp, when "$1" is empty; made if missing)
	// and prints its absolute path.
	mkdirScript = `umask 077 && b=${1:-${TMPDIR:-/tmp}} && mkdir -p -- "$b" && mkdir -- "$b/$2" && cd -- "$b/$2" && pwd -P`
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

// ensure makes the private directory once and returns its path.
func (s *remoteSpill) ensure() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return "", errSpillRemoved
	}
	if s.dir != "" {
		return s.dir, nil
	}
	rc, err := s.e.startRemote(context.Background(), false, mkdirScript, s.base, spillPrefix+randomHex(6))
	if err != nil {
		return "", fmt.Errorf("spill directory on %s: %w", s.e.target.host, err)
	}
	out, err := rc.wait()
	if err != nil {
		return "", fmt.Errorf("spill directory on %s: %w", s.e.target.host, err)
	}
	dir := strings.TrimSpace(out)
	if !strings.HasPrefix(dir, "/") || strings.Contains(dir, "\n") {
		return "", fmt.Errorf("spill directory on %s: unexpected path %q", s.e.target.host, out)
	}
	s.dir = dir
	return dir, nil
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
