// Package capture collects one output stream of a command: a bounded tail in
// memory and, once the stream outgrows it, the whole stream from byte 0 in a
// private spill file.
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
//   - Memory holds at most MaxBytes of the tail, plus one read buffer. When
//     the cut falls inside a UTF-8 character the kept text starts at the next
//     character, so it may be up to 3 bytes shorter than MaxBytes.
//   - Output of exactly MaxBytes is not truncated and makes no file.
//   - On the first byte that does not fit, a spill file is created and
//     everything written so far goes into it first, so the file always holds
//     the stream from byte 0, up to MaxSpillBytes. If creating, writing or
//     closing the file fails, the file is removed and its path is withheld;
//     the stream itself is unaffected.
//   - Text is valid UTF-8: each invalid byte becomes U+FFFD, one for one.
//   - Consuming reads never split a character between two reads (an
//     incomplete character at the end is held back until it completes or the
//     stream ends) and report when unread bytes were dropped.
//
// A Collector keeps no goroutine of its own.
package capture

import (
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

// Spiller creates spill files. *SpillDir is the real one.
type Spiller interface {
	Create(stream string) (File, error)
}

// Options configures a Collector.
type Options struct {
	// Stream names the stream ("stdout", "stderr"); it ends the spill
	// file's name.
	Stream string
	// MaxBytes is the tail kept in memory; it must be > 0.
	MaxBytes int64
	// MaxSpillBytes caps the spill file; it must be > 0.
	MaxSpillBytes int64
	// Spill creates the spill file. Nil means none is ever made: an
	// overflowing stream is then truncated with no path.
	Spill Spiller
	// Observe, when set, sees every chunk written, on the writing
	// goroutine, after it is recorded. It must not keep p.
	Observe func(p []byte)
}

// Result is what a closed Collector kept.
type Result struct {
	// Text is the kept tail as valid UTF-8.
	Text string
	// Truncated reports that bytes were dropped from Text.
	Truncated bool
	// SpillPath is the spill file, set only when it was created, written
	// and closed without error.
	SpillPath string
	// SpillCapped reports that the stream outgrew MaxSpillBytes; the file
	// then holds the first SpillBytes bytes.
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
	minTailAlloc  = 4 << 10
)

// Collector is one stream's collector. All its methods are safe for
// concurrent use; writes are serialized, and reads never wait for the disk.
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

	mu      sync.Mutex
	tail    []byte // ring; grows up to MaxBytes, then wraps
	head    int    // index of the oldest kept byte
	n       int    // kept bytes
	total   int64
	readPos int64 // stream offset up to which ReadNew consumed
	path    string
	closed  bool
	result  Result
}

// New returns a Collector. It panics if MaxBytes or MaxSpillBytes is not
// positive: that is a programming error the config layer rules out.
func New(opts Options) *Collector {
	if opts.MaxBytes <= 0 || opts.MaxSpillBytes <= 0 {
		panic(fmt.Sprintf("capture: MaxBytes (%d) and MaxSpillBytes (%d) must be > 0", opts.MaxBytes, opts.MaxSpillBytes))
	}
	return &Collector{opts: opts}
}

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
	c.appendTail(p)
	c.mu.Unlock()
	if c.opts.Observe != nil {
		c.opts.Observe(p)
	}
	return len(p), nil
}

// startSpill creates the spill file on the first overflow and writes the
// stream so far into it. Nothing has been dropped from the tail yet, so the
// tail is the whole stream.
func (c *Collector) startSpill() {
	c.spilling = true
	if c.opts.Spill == nil {
		return
	}
	f, err := c.opts.Spill.Create(c.opts.Stream)
	if err != nil {
		c.spillErr = fmt.Errorf("spill file: %w", err)
		return
	}
	c.spill = f
	c.mu.Lock()
	c.path = f.Name()
	c.mu.Unlock()
	// Reading the ring without mu is safe: only writers, serialized by
	// wmu, change it.
	first, second := c.segments()
	c.spillWrite(first)
	c.spillWrite(second)
}

func (c *Collector) spillWrite(p []byte) {
	if c.spill == nil {
		return
	}
	room := c.opts.MaxSpillBytes - c.spillBytes
	if room <= 0 || len(p) == 0 {
		return
	}
	if int64(len(p)) > room {
		p = p[:room]
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
		name := c.spill.Name()
		_ = c.spill.Close()
		removeFile(name)
		c.spill = nil
	}
	c.mu.Lock()
	c.path = ""
	c.mu.Unlock()
}

// appendTail adds p to the ring. Called with mu held.
func (c *Collector) appendTail(p []byte) {
	limit := int(c.opts.MaxBytes)
	if len(p) >= limit {
		if len(c.tail) != limit {
			c.tail = make([]byte, limit)
		}
		copy(c.tail, p[len(p)-limit:])
		c.head, c.n = 0, limit
		return
	}
	need := c.n + len(p)
	if need > len(c.tail) && len(c.tail) < limit {
		// Still growing: the kept bytes are contiguous from index 0.
		size := min(max(2*len(c.tail), need, minTailAlloc), limit)
		grown := make([]byte, size)
		copy(grown, c.tail[:c.n])
		c.tail, c.head = grown, 0
	}
	size := len(c.tail)
	pos := (c.head + c.n) % size
	k := copy(c.tail[pos:], p)
	copy(c.tail, p[k:])
	if need > size {
		c.head = (c.head + need - size) % size
		c.n = size
	} else {
		c.n = need
	}
}

// segments returns the kept bytes in order, as at most two slices of the
// ring. Called with mu or wmu held.
func (c *Collector) segments() ([]byte, []byte) {
	if c.n == 0 {
		return nil, nil
	}
	end := c.head + c.n
	if end <= len(c.tail) {
		return c.tail[c.head:end], nil
	}
	return c.tail[c.head:], c.tail[:end-len(c.tail)]
}

// copyFrom copies the kept bytes from stream offset off to the end.
// Called with mu held; off must be within the kept range.
func (c *Collector) copyFrom(off int64) []byte {
	skip := int(off - (c.total - int64(c.n)))
	first, second := c.segments()
	out := make([]byte, 0, c.n-skip)
	if skip < len(first) {
		out = append(out, first[skip:]...)
		out = append(out, second...)
	} else {
		out = append(out, second[skip-len(first):]...)
	}
	return out
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
// back for the next read.
func (c *Collector) ReadNew() (data []byte, lossy bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.total - int64(c.n)
	from := c.readPos
	if from < kept {
		lossy, from = true, kept
	}
	if from == c.total {
		return nil, lossy
	}
	data = c.copyFrom(from)
	if lossy {
		cut := skipContinuation(data)
		data, from = data[cut:], from+int64(cut)
	}
	if !c.closed {
		data = data[:len(data)-incompleteSuffix(data)]
	}
	c.readPos = from + int64(len(data))
	return data, lossy
}

// Close ends the stream: it closes the spill file and computes the final
// Result. Later calls return the same Result.
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
			removeFile(f.Name())
			c.mu.Lock()
			c.path = ""
			c.mu.Unlock()
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	truncated := c.total > int64(c.n)
	kept := c.copyFrom(c.total - int64(c.n))
	if truncated {
		kept = kept[skipContinuation(kept):]
	}
	c.result = Result{
		Text:       Text(kept),
		Truncated:  truncated,
		SpillPath:  c.path,
		TotalBytes: c.total,
		SpillErr:   c.spillErr,
	}
	if c.path != "" {
		c.result.SpillBytes = c.spillBytes
		c.result.SpillCapped = c.total > c.opts.MaxSpillBytes
	}
	return c.result
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
