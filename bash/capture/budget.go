package capture

import (
	"container/list"
	"sync"
)

// Budget bounds the bytes that the spill files of many collectors hold
// together (an executor's local.maxSpillTotalBytes, docs/spec.md §2.5).
// A collector charges every byte it writes to its file; when the budget
// has no room left, the files of streams that are finished and read are
// deleted, the oldest first (the one marked read first), and when none is
// left the stream's file stops growing, as it does at MaxSpillBytes: the
// output is cut with the usual notice, never failed.
//
// A stream is read once nothing will read its file again: a stream that
// is not consumed (a foreground command's) when it closes, since its
// result is then being returned; a consumed one (a background task's)
// once a read after its close took its last byte. Whoever deletes a spill
// file of its own accord tells the budget with [Budget.Forget]. A nil
// *Budget has no bound.
type Budget struct {
	max int64

	mu    sync.Mutex
	used  int64
	files map[string]*charge
	read  list.List // of *charge, whose streams are finished and read, oldest first
}

// charge is what one spill file holds.
type charge struct {
	path  string
	bytes int64
	file  File          // to delete it by
	read  *list.Element // in Budget.read, nil while its stream needs it
}

// NewBudget returns a Budget of max bytes; max must be > 0.
func NewBudget(max int64) *Budget {
	return &Budget{max: max, files: make(map[string]*charge)}
}

// Used is the bytes the budget's files hold now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// hasRoom reports whether one more byte fits, once the files of read
// streams are released if need be.
func (b *Budget) hasRoom() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	released := b.releaseFor(1)
	ok := b.used < b.max
	b.mu.Unlock()
	remove(released)
	return ok
}

// add starts charging f, a new spill file.
func (b *Budget) add(f File) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files[f.Name()] = &charge{path: f.Name(), file: f}
}

// take charges up to n more bytes to the file at path and returns how
// many it may write: n, or what is left once every read stream's file is
// released.
func (b *Budget) take(path string, n int64) int64 {
	if b == nil {
		return n
	}
	b.mu.Lock()
	released := b.releaseFor(n)
	grant := max(0, min(n, b.max-b.used))
	if c := b.files[path]; c != nil {
		c.bytes += grant
		b.used += grant
	}
	b.mu.Unlock()
	remove(released)
	return grant
}

// releaseFor takes read streams' files off the budget, oldest first, until
// n more bytes fit or none is left, and returns them for deletion. Called
// with mu held; the caller deletes them after unlocking.
func (b *Budget) releaseFor(n int64) []File {
	var out []File
	for b.used+n > b.max && b.read.Len() > 0 {
		c := b.read.Remove(b.read.Front()).(*charge)
		b.drop(c)
		out = append(out, c.file)
	}
	return out
}

// done marks the stream of the file at path finished and read: its file
// may be released.
func (b *Budget) done(path string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.files[path]; c != nil && c.read == nil {
		c.read = b.read.PushBack(c)
	}
}

// Forget stops charging the files at paths, which their owner deleted
// (or is about to).
func (b *Budget) Forget(paths ...string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range paths {
		if c := b.files[p]; c != nil {
			if c.read != nil {
				b.read.Remove(c.read)
			}
			b.drop(c)
		}
	}
}

// drop forgets c and its bytes. Called with mu held.
func (b *Budget) drop(c *charge) {
	delete(b.files, c.path)
	b.used -= c.bytes
}

// remove deletes released files.
func remove(files []File) {
	for _, f := range files {
		discard(f)
	}
}
