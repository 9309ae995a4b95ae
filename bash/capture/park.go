package capture

import (
	"fmt"
	"io"
)

// ParkedBytes is the most of a finished Consumed stream's unread bytes
// kept in memory; the rest is read back from its spill file.
const ParkedBytes = 1 << 10

// Reopener is implemented by a Spiller whose files this process can read
// back (*SpillDir): a parked stream's unread bytes stay in its spill file
// rather than in memory.
type Reopener interface {
	Reopen(path string) (io.ReaderAt, io.Closer, error)
}

// parked is what a closed Consumed stream keeps: its unread bytes from
// from on, and before them from keep on when the next read is lossy (its
// before); those before fileTo in the spill file and the rest in tail.
// Guarded by Collector.mu.
type parked struct {
	on     bool
	from   int64 // where a read that fell behind resumes (lossy)
	keep   int64 // the first byte kept: from, or its context's first
	fileTo int64
	tail   []byte // the stream's bytes [fileTo, total)
	// head is the head's unread part, for the next read when it is lossy
	// (NewRead.Head); headTo its end in the spill file instead, when the
	// file holds it (it is the stream from byte 0): a finished stream
	// keeps at most ParkedBytes in memory, not its head too.
	head   []byte
	headTo int64
}

// parkStream closes a Consumed stream: the Result without texts, and the
// unread bytes parked. Where no spill file can be read back, the ring
// stays as it is; where the file does not hold all of it (it stopped at
// MaxSpillBytes, or the spill total left no room), only the last
// ParkedBytes stay, and the next read is lossy: a finished stream never
// keeps its whole ring. Called by Close with wmu and mu held.
func (c *Collector) parkStream() {
	c.result = Result{Truncated: c.overflowed(), OmittedBytes: c.keptFrom() - int64(len(c.head))}
	if !c.overflowed() {
		c.result.OmittedBytes = 0
	}
	from := max(c.readPos, c.keptFrom())
	keep := from
	var head []byte
	if c.readPos < from { // the next read is lossy: keep its before too
		keep = from - int64(len(c.before(from)))
		head = c.unreadHead(c.readPos)
	}
	defer func() {
		if _, ok := c.opts.Spill.(Reopener); ok && c.path != "" && len(head) > 0 && c.spillBytes >= c.readPos+int64(len(head)) {
			c.park.headTo = c.readPos + int64(len(head)) // read back from the file
			return
		}
		c.park.head = head
	}()
	if c.total-keep <= ParkedBytes {
		c.parkAt(from, keep, keep)
		return
	}
	if _, ok := c.opts.Spill.(Reopener); !ok {
		return
	}
	if (!c.spilling && !c.spillWhole()) || c.path == "" || c.spillBytes < c.total {
		// No whole file to read back (the spill total was reached, or
		// MaxSpillBytes): keep what a parked stream keeps, and the
		// context before it; the next read is lossy.
		from = max(c.readPos, c.total-ParkedBytes)
		keep = from - int64(len(c.before(from)))
		c.parkAt(from, keep, keep)
		return
	}
	c.parkAt(from, keep, c.total-ParkedBytes)
}

// parkAt keeps the bytes from fileTo on in memory and drops the ring.
func (c *Collector) parkAt(from, keep, fileTo int64) {
	c.park = parked{on: true, from: from, keep: keep, fileTo: fileTo, tail: c.copyFrom(fileTo)}
	c.head, c.tail, c.start, c.n = nil, nil, 0, 0
}

// spillWhole writes a stream that never overflowed, all of it still in
// memory, to a new spill file, so that it can be parked there. Called
// with wmu and mu held.
func (c *Collector) spillWhole() bool {
	c.spilling = true
	f, err := c.opts.Spill.Create(c.opts.Stream)
	if err != nil {
		c.spillErr = fmt.Errorf("spill file: %w", err)
		return false
	}
	data := c.copyFrom(0)
	c.opts.Budget.add(f)
	if c.opts.Budget.take(f.Name(), int64(len(data))) < int64(len(data)) {
		// No room for all of it: the stream stays in memory.
		_ = f.Close()
		c.opts.Budget.Forget(f.Name())
		discard(f)
		return false
	}
	n, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.opts.Budget.Forget(f.Name())
		discard(f)
		c.spillErr = fmt.Errorf("spill file: %w", err)
		return false
	}
	c.path, c.spillBytes = f.Name(), int64(n)
	return true
}

// readParked is ReadNewHead on a parked stream: the unread bytes, from
// the spill file and the tail in memory. A spill file that cannot be read
// back (deleted meanwhile) makes the read lossy: it returns the tail, with
// no before. Called with mu held.
func (c *Collector) readParked() NewRead {
	data, before, lossy, from := c.readParkedData()
	r := NewRead{Data: data, Before: before, Lossy: lossy}
	if lossy && from >= 0 {
		r.Head = c.park.head
		if c.park.headTo > c.readPos {
			r.Head, _ = c.readSpill(c.readPos, c.park.headTo) // gone meanwhile: no head
		}
		r.Omitted = omittedAfter(c.readPos, r.Head, from)
	}
	c.park.head, c.park.headTo = nil, 0
	if from >= 0 {
		c.readPos = c.total // all read
	}
	return r
}

// readParkedData reads a parked stream's unread bytes: from is the
// stream offset of data, -1 when there was nothing to read. Called with
// mu held; leaves readPos to its caller.
func (c *Collector) readParkedData() (data, before []byte, lossy bool, from int64) {
	from, lo := c.readPos, c.readPos
	if from < c.park.from {
		lossy, from, lo = true, c.park.from, c.park.keep
	}
	if from == c.total {
		return nil, nil, lossy, -1
	}
	var all []byte
	if lo < c.park.fileTo {
		if part, err := c.readSpill(lo, c.park.fileTo); err == nil {
			all = part
		} else {
			lossy, from, lo = true, max(from, c.park.fileTo), c.park.fileTo
		}
	}
	all = append(all, c.park.tail[max(0, lo-c.park.fileTo):]...)
	before, data = all[:from-lo], all[from-lo:]
	if lossy {
		cut := skipContinuation(data)
		before, data = all[:from-lo+int64(cut)], data[cut:]
		before = before[skipContinuation(before):]
		from += int64(cut)
	}
	c.park.tail = nil // all read: nothing to keep
	return data, before, lossy, from
}

// readSpill reads the bytes [from, to) of the stream from its spill file.
func (c *Collector) readSpill(from, to int64) ([]byte, error) {
	r, closer, err := c.opts.Spill.(Reopener).Reopen(c.path)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	buf := make([]byte, to-from)
	if _, err := r.ReadAt(buf, from); err != nil {
		return nil, err
	}
	return buf, nil
}
