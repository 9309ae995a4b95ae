// Package capture collects one output stream of a command: a bounded tail in
// memory, optionally a bounded head too, and, once the stream outgrows them,
// the whole stream from byte 0 in a private spill file.
//
// A [Collector] is written by one goroutine (usually through
// [Collector.ReadFrom] on a pipe) and may be read concurrently by others:
// [Collector.ReadNew] consumes what was written since the previous call, and
// [Collector.Close] ends the stream and reports what was kept; a Write that
// comes after Close fails and changes nothing.
//
// The contract (docs/spec.md §2.5):
//
//   - Every byte counts toward the total.
//   - Memory holds at most MaxBytes of the stream, plus ContextBytes and one
//     read buffer: the first HeadBytes (the head, docs/spec.md §3.4a; none
//     by default) and a tail of at most MaxBytes − HeadBytes, and once the
//     stream overflows, up to ContextBytes before the tail: not part of the
//     kept text, but reported beside it (Before) for whoever must read the
//     tail in the light of what came before it (redaction, docs/spec.md
//     §14). When the tail's cut falls inside a UTF-8 character the kept
//     text starts at the next character, so it may be up to 3 bytes
//     shorter.
//   - The head of an overflowing stream ends just after its last newline
//     when one lies in its last 1024 bytes, else after its last complete
//     character. The bytes between the kept head and the kept tail, those
//     the two cuts moved included, are counted as omitted: head + omitted +
//     tail is the total, in raw bytes.
//   - Output of exactly MaxBytes is not truncated and makes no file.
//   - On the first byte that does not fit, a spill file is created and
//     everything written so far goes into it first, so the file always holds
//     the stream from byte 0, up to MaxSpillBytes. If creating, writing or
//     closing the file fails, the file is removed and its path is withheld;
//     the stream itself is unaffected.
//   - Text is valid UTF-8: each invalid byte becomes U+FFFD, one for one.
//   - Consuming reads never split a character between two reads (an
//     incomplete character at the end is held back until it completes or the
//     stream ends) and report when unread bytes were dropped. With a head,
//     a read that lost bytes from inside it also returns the head's unread
//     part, cut as Close cuts it, and counts the bytes between it and the
//     tail ([Collector.ReadNewHead]).
//   - A Consumed collector (a background stream, read only by ReadNew) is
//     parked when it closes: memory keeps at most ParkedBytes of its
//     unread bytes, and reads take the rest (and a lossy read's before)
//     back from its spill file (made then, if the stream never
//     overflowed), so a finished stream nobody has read costs a kilobyte
//     rather than MaxBytes, twice.
//   - [Collector.Yield] reports the kept text so far as Close would, and
//     consumes it: reads go on after it (a foreground run that continues
//     in the background, docs/spec.md §12).
//   - Collectors that share a [Budget] hold at most its bytes in spill
//     files together: a write that finds no room deletes the files of
//     streams finished and read, oldest first, then cuts its own file as
//     MaxSpillBytes does (SpillCapped); a stream that finds no room at all
//     gets no file ([ErrBudgetSpent]).
//
// A Collector keeps no goroutine of its own.
package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// File is the part of *os.File a spill file needs. It is an interface so a
// test can cause the failures that a real disk rarely shows on demand.
type File interface {
	io.Writer
	Close() error
	Name() string
}

// Remover is implemented by a File that is not a file of this machine (a
// remote spill file): a file the collector withholds is removed through
// it rather than by its name with os.Remove.
type Remover interface {
	Remove() error
}

// Spiller creates spill files. *SpillDir is the local one.
type Spiller interface {
	Create(stream string) (File, error)
}

// Options configures a Collector.
type Options struct {
	// Stream names the stream ("stdout", "stderr"); it ends the spill
	// file's name.
	Stream string
	// MaxBytes is what is kept in memory, head and tail; it must be > 0.
	MaxBytes int64
	// HeadBytes is the start of the stream kept besides the tail, out of
	// MaxBytes; 0 keeps the tail only. It must be >= 0 and < MaxBytes.
	HeadBytes int64
	// ContextBytes is kept before the tail once the stream overflows,
	// besides MaxBytes: Result.Before and the before of a lossy read. It
	// must be >= 0.
	ContextBytes int64
	// MaxSpillBytes caps the spill file; it must be > 0.
	MaxSpillBytes int64
	// Spill creates the spill file. Nil means none is ever made: an
	// overflowing stream is then truncated with no path.
	Spill Spiller
	// Observe, when set, sees every chunk written, on the writing
	// goroutine, after it is recorded. It must not keep p.
	Observe func(p []byte)
	// Consumed says the stream is read with ReadNew alone (a background
	// process's): Close reports no Head or Text, and parks the stream
	// ([Collector.Close]), so a finished stream nobody read yet costs
	// little memory.
	Consumed bool
	// Budget, when set, bounds the bytes of this and other collectors'
	// spill files together ([Budget]): a file that finds no room stops
	// growing, as at MaxSpillBytes.
	Budget *Budget
}

// Result is what a closed Collector kept.
type Result struct {
	// Text is the kept tail as valid UTF-8 (the whole stream when nothing
	// was dropped).
	Text string
	// Head is the kept start of a truncated stream as valid UTF-8, cut
	// back to a line end or a character end; empty without a head.
	Head string
	// Before is what came just before Text in a truncated stream, up to
	// ContextBytes from a character start, as valid UTF-8: not kept text
	// (its bytes count as omitted), context for reading Text.
	Before string
	// OmittedBytes counts the raw bytes of a truncated stream in neither
	// Head nor Text: the total less their raw bytes.
	OmittedBytes int64
	// Truncated reports that bytes were dropped from Text.
	Truncated bool
	// SpillPath is the spill file, set only when it was created, written
	// and closed without error.
	SpillPath string
	// SpillCapped reports that the file stopped before the stream's end,
	// at MaxSpillBytes or when the Budget was spent; it then holds the
	// first SpillBytes bytes.
	SpillCapped bool
	SpillBytes  int64
	// TotalBytes counts every byte written.
	TotalBytes int64
	// SpillErr is why the spill file was withheld, if it was.
	SpillErr error
}

const (
	minReadBuffer = 8 << 10
	maxReadBuffer = 64 << 10
	minAlloc      = 4 << 10 // the first allocation of the head and the tail
	// headLineWindow is how far back from its end a head is cut to a line
	// end (docs/spec.md §3.4a); past it, a line is cut at a character.
	headLineWindow = 1024
)

// Collector is one stream's collector. All its methods are safe for
// concurrent use; writes are serialized, and reads never wait for the disk
// (but those of a parked stream, which read its spill file back).
type Collector struct {
	opts Options

	// wmu serializes Write and Close and guards the spill state, so file
	// work never holds mu, which readers take.
	wmu        sync.Mutex
	closedW    bool
	spill      File
	spillBytes int64
	spillErr   error
	spilling   bool // the first overflow happened (file made or not)
	spillCut   bool // the Budget cut the file: it grows no more

	mu      sync.Mutex
	head    []byte // the stream's first bytes, up to HeadBytes
	tail    []byte // ring of the bytes after the head; grows to MaxBytes-HeadBytes, then wraps
	start   int    // index of the oldest byte in tail
	n       int    // bytes in tail
	total   int64
	readPos int64 // stream offset up to which ReadNew consumed
	path    string
	closed  bool
	result  Result
	park    parked // a Consumed stream after Close
	// consuming: read by ReadNew (Consumed, or since a Yield), so the
	// stream is read once a read after Close took its last byte; else
	// Close's result is its read.
	consuming bool
	read      bool // the Budget was told the stream is finished and read
}

// New returns a Collector. It panics if MaxBytes or MaxSpillBytes is not
// positive, or HeadBytes is not in [0, MaxBytes): those are programming
// errors the config layer rules out.
func New(opts Options) *Collector {
	if opts.MaxBytes <= 0 || opts.MaxSpillBytes <= 0 {
		panic(fmt.Sprintf("capture: MaxBytes (%d) and MaxSpillBytes (%d) must be > 0", opts.MaxBytes, opts.MaxSpillBytes))
	}
	if opts.HeadBytes < 0 || opts.HeadBytes >= opts.MaxBytes || opts.ContextBytes < 0 {
		panic(fmt.Sprintf("capture: HeadBytes (%d) must be >= 0 and < MaxBytes (%d), ContextBytes (%d) >= 0", opts.HeadBytes, opts.MaxBytes, opts.ContextBytes))
	}
	return &Collector{opts: opts, consuming: opts.Consumed}
}

// ErrBudgetSpent is the SpillErr of a stream that found no room in its
// Budget for a spill file at all (its output is truncated, with no path).
var ErrBudgetSpent = errors.New("spill file: the spill files of all commands hold their budget")

var errClosed = errors.New("capture: write after close")

// Write records p. It never fails for spill trouble: the error is kept and
// the path withheld. It fails only after Close.
func (c *Collector) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closedW {
		return 0, errClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	before := c.total
	c.mu.Unlock()

	if !c.spilling && before+int64(len(p)) > c.opts.MaxBytes {
		c.startSpill()
	}
	if c.spill != nil {
		c.spillWrite(p)
	}

	c.mu.Lock()
	c.total += int64(len(p))
	c.appendKept(p)
	c.mu.Unlock()
	if c.opts.Observe != nil {
		c.opts.Observe(p)
	}
	return len(p), nil
}

// startSpill creates the spill file on the first overflow and writes the
// stream so far into it. Nothing has been dropped yet, so the head and the
// tail are the whole stream.
func (c *Collector) startSpill() {
	c.spilling = true
	if c.opts.Spill == nil {
		return
	}
	if !c.opts.Budget.hasRoom() {
		c.spillErr = ErrBudgetSpent
		return
	}
	f, err := c.opts.Spill.Create(c.opts.Stream)
	if err != nil {
		c.spillErr = fmt.Errorf("spill file: %w", err)
		return
	}
	c.opts.Budget.add(f)
	c.spill = f
	c.mu.Lock()
	c.path = f.Name()
	c.mu.Unlock()
	// Reading head and ring without mu is safe: only writers, serialized
	// by wmu, change them.
	first, second := c.segments()
	c.spillWrite(c.head)
	c.spillWrite(first)
	c.spillWrite(second)
}

func (c *Collector) spillWrite(p []byte) {
	if c.spill == nil || c.spillCut {
		return
	}
	room := c.opts.MaxSpillBytes - c.spillBytes
	if room <= 0 || len(p) == 0 {
		return
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	if grant := c.opts.Budget.take(c.spill.Name(), int64(len(p))); grant < int64(len(p)) {
		// Later bytes must not follow: the file holds the stream from
		// byte 0 without a gap, or nothing.
		c.spillCut, p = true, p[:grant]
	}
	if len(p) == 0 {
		return
	}
	n, err := c.spill.Write(p)
	c.spillBytes += int64(n)
	if err != nil {
		c.failSpill(fmt.Errorf("spill file: %w", err))
	}
}

// failSpill drops the spill file: a partial file nobody will be told about
// is only litter.
func (c *Collector) failSpill(err error) {
	c.spillErr = err
	if c.spill != nil {
		_ = c.spill.Close()
		c.opts.Budget.Forget(c.spill.Name())
		discard(c.spill)
		c.spill = nil
	}
	c.mu.Lock()
	c.path = ""
	c.mu.Unlock()
}

// appendKept adds p to the head while it has room, and the rest to the
// ring. Called with mu held.
func (c *Collector) appendKept(p []byte) {
	if room := int(c.opts.HeadBytes) - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = appendBounded(c.head, p[:k], int(c.opts.HeadBytes))
		p = p[k:]
	}
	if len(p) > 0 {
		c.appendTail(p)
	}
}

// appendBounded appends p to b, which never needs more than limit bytes:
// it grows in doubling steps from minAlloc, so a short stream costs little
// and a long one no more than limit.
func appendBounded(b, p []byte, limit int) []byte {
	if need := len(b) + len(p); need > cap(b) {
		grown := make([]byte, len(b), growSize(cap(b), need, limit))
		copy(grown, b)
		b = grown
	}
	return append(b, p...)
}

// growSize is the next size of a buffer of size cur that must hold need
// bytes and never more than limit.
func growSize(cur, need, limit int) int {
	return min(max(2*cur, need, minAlloc), limit)
}

// appendTail adds p to the ring. Called with mu held, after total counted
// p.
func (c *Collector) appendTail(p []byte) {
	limit := int(c.opts.MaxBytes - c.opts.HeadBytes)
	if c.overflowed() {
		// The context joins the ring only now, so a stream that fits
		// never allocates it. Until now the ring never wrapped.
		limit += int(c.opts.ContextBytes)
	}
	if len(p) >= limit {
		if len(c.tail) != limit {
			c.tail = make([]byte, limit)
		}
		copy(c.tail, p[len(p)-limit:])
		c.start, c.n = 0, limit
		return
	}
	need := c.n + len(p)
	if need > len(c.tail) && len(c.tail) < limit {
		// Still growing: the kept bytes are contiguous from index 0.
		grown := make([]byte, growSize(len(c.tail), need, limit))
		copy(grown, c.tail[:c.n])
		c.tail, c.start = grown, 0
	}
	size := len(c.tail)
	pos := (c.start + c.n) % size
	k := copy(c.tail[pos:], p)
	copy(c.tail, p[k:])
	if need > size {
		c.start = (c.start + need - size) % size
		c.n = size
	} else {
		c.n = need
	}
}

// segments returns the bytes of the ring in order, as at most two slices.
// Called with mu or wmu held.
func (c *Collector) segments() ([]byte, []byte) {
	if c.n == 0 {
		return nil, nil
	}
	end := c.start + c.n
	if end <= len(c.tail) {
		return c.tail[c.start:end], nil
	}
	return c.tail[c.start:], c.tail[:end-len(c.tail)]
}

// dropped is the number of bytes between the head and the ring that are no
// longer in memory. Called with mu or wmu held.
func (c *Collector) dropped() int64 {
	return c.total - int64(len(c.head)) - int64(c.n)
}

// overflowed reports that the stream outgrew MaxBytes: its text is cut.
// Called with mu or wmu held.
func (c *Collector) overflowed() bool {
	return c.total > c.opts.MaxBytes
}

// keptFrom is the stream offset from which the kept bytes run without a
// gap to the end: 0 while the stream fits, else the tail's first byte.
// Called with mu held.
func (c *Collector) keptFrom() int64 {
	if !c.overflowed() {
		return 0
	}
	return c.total - (c.opts.MaxBytes - c.opts.HeadBytes)
}

// before returns up to ContextBytes of the stream just before offset at,
// from a character start: what memory holds of it. (Where the kept text
// starts after at, at the next character, the bytes skipped join it.)
// Called with mu held.
func (c *Collector) before(at int64) []byte {
	from := c.total - int64(c.n) // the ring's first byte
	if c.dropped() == 0 {
		from = 0 // the head, then the ring, without a gap
	}
	from = max(from, at-c.opts.ContextBytes)
	if from >= at {
		return nil
	}
	b := c.copyRange(from, at)
	return b[skipContinuation(b):]
}

// copyFrom copies the bytes in memory from stream offset off to the end.
// Called with mu held; memory must hold off (at or after the ring's first
// byte, or anywhere when nothing was dropped).
func (c *Collector) copyFrom(off int64) []byte { return c.copyRange(off, c.total) }

// copyRange copies the bytes in memory from stream offset off to end, as
// copyFrom.
func (c *Collector) copyRange(off, end int64) []byte {
	out := make([]byte, 0, end-off)
	if off < int64(len(c.head)) { // nothing was dropped: the head comes first
		out = append(out, c.head[off:min(end, int64(len(c.head)))]...)
		off = int64(len(c.head))
	}
	if off >= end {
		return out
	}
	skip, take := int(off-(c.total-int64(c.n))), int(end-off)
	first, second := c.segments()
	if skip < len(first) {
		k := min(take, len(first)-skip)
		out = append(out, first[skip:skip+k]...)
		return append(out, second[:take-k]...)
	}
	skip -= len(first)
	return append(out, second[skip:skip+take]...)
}

// ReadFrom copies r into the Collector until EOF or an error (a pipe's read
// deadline, say), which it returns; EOF is not an error. Its one read buffer
// starts small and grows while reads fill it, so a quiet stream costs little.
func (c *Collector) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, minReadBuffer)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			total += int64(n)
			if _, werr := c.Write(buf[:n]); werr != nil {
				return total, werr
			}
			if n == len(buf) && len(buf) < maxReadBuffer {
				buf = make([]byte, 2*len(buf))
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Total returns the bytes written so far.
func (c *Collector) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// SpillPath returns the spill file's path while it is usable, else "".
func (c *Collector) SpillPath() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.path
}

// ReadNew consumes the bytes written since the previous ReadNew. lossy
// reports that some of them were dropped from memory before this read; the
// returned bytes then start at the first character boundary of what is
// kept. While the stream is open, an incomplete character at the end is held
// back for the next read. A head counts as kept only while nothing after it
// was dropped: once something was, ReadNew reads on from the tail.
func (c *Collector) ReadNew() (data []byte, lossy bool) {
	data, _, lossy = c.ReadNewAfter()
	return data, lossy
}

// ReadNewAfter is ReadNew that also returns, for a lossy read, before:
// what came just before data, up to ContextBytes (as Result.Before).
func (c *Collector) ReadNewAfter() (data, before []byte, lossy bool) {
	r := c.ReadNewHead()
	return r.Data, r.Before, r.Lossy
}

// NewRead is one consuming read ([Collector.ReadNewHead]).
type NewRead struct {
	// Data is the new output; Before, for a lossy read, what came just
	// before it (as Result.Before).
	Data, Before []byte
	// Head is, for a lossy read, the unread part of the stream's head
	// (HeadBytes, cut as Result.Head), when the dropped bytes began inside
	// it: a lossy read then shows the start and the end of what it missed,
	// as Close does for a foreground stream. Empty otherwise.
	Head []byte
	// Omitted counts the raw bytes between Head and Data, when Head is set.
	Omitted int64
	// Lossy reports that unread bytes were dropped before Data.
	Lossy bool
}

// ReadNewHead is ReadNewAfter that also returns, for a lossy read that
// began inside the stream's head, that head's unread part (NewRead.Head):
// a Consumed stream with a head keeps its start for the read that missed
// it.
func (c *Collector) ReadNewHead() (r NewRead) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.markRead()
	if c.park.on {
		return c.readParked()
	}
	kept := c.keptFrom()
	from := c.readPos
	if from < kept {
		r.Lossy, from = true, kept
	}
	if from == c.total {
		return r
	}
	data := c.copyFrom(from)
	if r.Lossy {
		cut := skipContinuation(data)
		r.Before = append(c.before(from), data[:cut]...)
		data, from = data[cut:], from+int64(cut)
		r.Head = c.unreadHead(c.readPos)
		r.Omitted = omittedAfter(c.readPos, r.Head, from)
	}
	if !c.closed {
		data = data[:len(data)-incompleteSuffix(data)]
	}
	r.Data = data
	c.readPos = from + int64(len(data))
	return r
}

// unreadHead is the part of the head, cut as Close cuts it, from stream
// offset pos on; nil when pos is at or past the cut. Called with mu held.
func (c *Collector) unreadHead(pos int64) []byte {
	end := int64(headCut(c.head))
	if pos >= end {
		return nil
	}
	return append([]byte(nil), c.head[pos:end]...)
}

// omittedAfter counts the bytes a lossy read that began at pos leaves
// out between head (from pos on; none when empty) and its data at from.
func omittedAfter(pos int64, head []byte, from int64) int64 {
	if len(head) == 0 {
		return 0
	}
	return from - pos - int64(len(head))
}

// Close ends the stream: it closes the spill file and computes the final
// Result. Later calls return the same Result. A Consumed stream's Result
// has no Head or Text, and the stream is parked: memory keeps at most
// ParkedBytes of what ReadNew has not returned yet, and the unread bytes
// before those are read back from the spill file, when the Spiller can
// open its files ([Reopener]); a stream that never overflowed gets its
// spill file now if its unread part is larger than that.
func (c *Collector) Close() Result {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closedW {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.result
	}
	c.closedW = true

	if c.spill != nil {
		f := c.spill
		c.spill = nil
		if err := f.Close(); err != nil {
			c.spillErr = fmt.Errorf("spill file: close: %w", err)
			c.opts.Budget.Forget(f.Name())
			discard(f)
			c.mu.Lock()
			c.path = ""
			c.mu.Unlock()
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.opts.Consumed {
		c.parkStream()
	} else {
		c.result = c.kept()
	}
	c.result.SpillPath = c.path
	c.result.TotalBytes = c.total
	c.result.SpillErr = c.spillErr
	if c.path != "" {
		c.result.SpillBytes = c.spillBytes
		c.result.SpillCapped = c.spillBytes < c.total
	}
	c.markRead()
	return c.result
}

// markRead tells the Budget, once, that the stream's spill file will not
// be read again: the stream is closed, and it is not consumed or a read
// took its last byte. Called with mu held.
func (c *Collector) markRead() {
	if c.read || !c.closed || c.path == "" || c.consuming && c.readPos < c.total {
		return
	}
	c.read = true
	c.opts.Budget.done(c.path)
}

// Yield reports what is kept of the stream so far, as Close would, but
// leaves the stream open: the head and tail as they are now, the spill
// file's path (still being written) and its size, and TotalBytes = the
// bytes the result covers. An incomplete character at the end is held
// back, as a consuming read would. It also consumes what it reports: the
// next ReadNew starts right after it. A foreground run that goes on in the
// background (docs/spec.md §12) reports its output so far with Yield and
// is read from there on. After Close it returns Close's result.
func (c *Collector) Yield() Result {
	c.wmu.Lock() // no write in between, and the spill state holds still
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.consuming = true
	if c.closed {
		c.readPos = c.total
		c.markRead()
		return c.result
	}
	r, held := c.keptUpTo(true)
	r.TotalBytes = c.total - int64(held)
	c.readPos = r.TotalBytes
	r.SpillPath = c.path
	if c.path != "" {
		r.SpillBytes = c.spillBytes
		r.SpillCapped = c.spillBytes < c.total
	}
	return r
}

// kept is the text of a stream that ended: all of it when nothing was
// dropped; else the head cut back to a line or character end (when there
// is a head), the tail from its first character start, and the count of
// the raw bytes in neither. Called with mu held.
func (c *Collector) kept() Result {
	r, _ := c.keptUpTo(false)
	return r
}

// keptUpTo is kept; with open, an incomplete character at the end is
// held back (held says how many bytes) and counted nowhere. Called with
// mu held.
func (c *Collector) keptUpTo(open bool) (r Result, held int) {
	hold := func(b []byte) ([]byte, int) {
		if !open {
			return b, 0
		}
		n := incompleteSuffix(b)
		return b[:len(b)-n], n
	}
	if !c.overflowed() {
		all, n := hold(c.copyFrom(0))
		return Result{Text: Text(all)}, n
	}
	head := c.head[:headCut(c.head)]
	from := c.keptFrom()
	tail := c.copyFrom(from)
	cut := skipContinuation(tail)
	before := append(c.before(from), tail[:cut]...)
	tail, held = hold(tail[cut:])
	return Result{
		Head:         Text(head),
		Before:       Text(before),
		Text:         Text(tail),
		OmittedBytes: c.total - int64(held) - int64(len(head)) - int64(len(tail)),
		Truncated:    true,
	}, held
}

// headCut returns where the kept part of a head ends (docs/spec.md
// §3.4a): just after its last newline when one lies in its last
// headLineWindow bytes, so the model reads whole lines; else after its
// last complete character, so none is split.
func headCut(b []byte) int {
	from := max(0, len(b)-headLineWindow)
	if i := bytes.LastIndexByte(b[from:], '\n'); i >= 0 {
		return from + i + 1
	}
	return len(b) - incompleteSuffix(b)
}

// skipContinuation returns how many leading bytes of b are UTF-8
// continuation bytes of a character cut off before b, at most 3.
func skipContinuation(b []byte) int {
	i := 0
	for i < len(b) && i < utf8.UTFMax-1 && !utf8.RuneStart(b[i]) {
		i++
	}
	return i
}

// incompleteSuffix returns the length of a valid but unfinished character
// at the end of b (0 when b ends on a boundary).
func incompleteSuffix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// Text decodes b as UTF-8, replacing each invalid byte by U+FFFD.
func Text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}
