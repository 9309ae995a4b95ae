package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/internal/procfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newCollector(t *testing.T, max, spillMax int64) (*Collector, *SpillDir) {
	t.Helper()
	dir := NewSpillDir(t.TempDir())
	t.Cleanup(func() { _ = dir.Remove() })
	return New(Options{Stream: "stdout", MaxBytes: max, MaxSpillBytes: spillMax, Spill: dir}), dir
}

func write(t *testing.T, c *Collector, chunks ...string) {
	t.Helper()
	for _, s := range chunks {
		if n, err := c.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
}

func TestExactlyTheCapIsNotTruncated(t *testing.T) {
	c, dir := newCollector(t, 10, 100)
	write(t, c, "01234", "56789")
	r := c.Close()
	if r.Text != "0123456789" || r.Truncated || r.SpillPath != "" || r.TotalBytes != 10 {
		t.Fatalf("got %+v", r)
	}
	if dir.Path() != "" {
		t.Fatalf("spill dir %q made for output that fit", dir.Path())
	}
}

func TestOverflowSpillsFromByteZero(t *testing.T) {
	c, dir := newCollector(t, 10, 100)
	write(t, c, "0123456", "789", "abcdef")
	r := c.Close()
	if r.Text != "6789abcdef" || !r.Truncated || r.TotalBytes != 16 {
		t.Fatalf("got %+v", r)
	}
	data, err := os.ReadFile(r.SpillPath)
	if err != nil || string(data) != "0123456789abcdef" {
		t.Fatalf("spill = %q, %v", data, err)
	}
	if r.SpillCapped || r.SpillBytes != 16 {
		t.Fatalf("capped %v bytes %d", r.SpillCapped, r.SpillBytes)
	}
	assertMode(t, r.SpillPath, 0o600)
	assertMode(t, dir.Path(), 0o700|os.ModeDir)
	if filepath.Dir(r.SpillPath) != dir.Path() {
		t.Fatalf("spill file %s outside private dir %s", r.SpillPath, dir.Path())
	}
	if !strings.HasSuffix(r.SpillPath, "-stdout.log") {
		t.Fatalf("spill name %s", r.SpillPath)
	}
	if !strings.HasPrefix(filepath.Base(dir.Path()), "dsh-out-"+procfs.Owner().String()+"-") {
		t.Fatalf("private dir name %s", dir.Path())
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode() != want {
		t.Fatalf("%s: mode %v, want %v", path, info.Mode(), want)
	}
}

func TestSpillStopsAtItsCap(t *testing.T) {
	c, _ := newCollector(t, 4, 6)
	write(t, c, "abc", "defgh", "ijkl")
	r := c.Close()
	if r.Text != "ijkl" || !r.Truncated || !r.SpillCapped || r.SpillBytes != 6 || r.TotalBytes != 12 {
		t.Fatalf("got %+v", r)
	}
	if data, _ := os.ReadFile(r.SpillPath); string(data) != "abcdef" {
		t.Fatalf("spill = %q", data)
	}
}

func TestSpillExactlyAtItsCapIsNotCapped(t *testing.T) {
	c, _ := newCollector(t, 2, 6)
	write(t, c, "abcdef")
	if r := c.Close(); r.SpillCapped || r.SpillBytes != 6 {
		t.Fatalf("got %+v", r)
	}
}

func TestTailCutMovesToCharacterStart(t *testing.T) {
	// "é" is 2 bytes and "€" 3: a 4-byte cap over "ab€é" (7 bytes) falls
	// inside "€", so the kept text is "é" alone.
	c, _ := newCollector(t, 4, 100)
	write(t, c, "ab€é")
	r := c.Close()
	if r.Text != "é" || !r.Truncated {
		t.Fatalf("got %q truncated=%v", r.Text, r.Truncated)
	}
}

// headCollector is a collector of max bytes that keeps head of them as the
// head.
func headCollector(t *testing.T, max, head int64) *Collector {
	t.Helper()
	dir := NewSpillDir(t.TempDir())
	t.Cleanup(func() { _ = dir.Remove() })
	return New(Options{Stream: "stdout", MaxBytes: max, HeadBytes: head, MaxSpillBytes: 1 << 20, Spill: dir})
}

// TestHeadAndTail checks the texts and the omitted count byte for byte
// (docs/spec.md §3.4a): head + omitted + tail is the stream's total.
func TestHeadAndTail(t *testing.T) {
	x1023, t2000 := strings.Repeat("x", 1023), strings.Repeat("t", 2000)
	for _, tc := range []struct {
		name      string
		max, head int64
		chunks    []string
		want      Result // Head, Text, OmittedBytes, Truncated
	}{
		{"fits: no head of its own", 10, 4, []string{"0123456789"},
			Result{Text: "0123456789"}},
		{"one byte over the cap", 10, 4, []string{"0123456789a"},
			Result{Head: "0123", Text: "56789a", OmittedBytes: 1, Truncated: true}},
		{"one byte over, in two writes", 10, 4, []string{"01", "23456789a"},
			Result{Head: "0123", Text: "56789a", OmittedBytes: 1, Truncated: true}},
		{"head cut back to its newline", 10, 6, []string{"ab\ncdefghijklmn"},
			Result{Head: "ab\n", Text: "klmn", OmittedBytes: 8, Truncated: true}},
		{"head ending in a newline keeps it", 10, 3, []string{"ab\ncdefghijklmn"},
			Result{Head: "ab\n", Text: "hijklmn", OmittedBytes: 5, Truncated: true}},
		{"the last of several newlines", 20, 10, []string{"a\nb\nc\nddddd" + strings.Repeat("z", 20)},
			Result{Head: "a\nb\nc\n", Text: strings.Repeat("z", 10), OmittedBytes: 15, Truncated: true}},
		{"tail cut forward to a character", 10, 4, []string{"abcdef€€é"},
			Result{Head: "abcd", Text: "€é", OmittedBytes: 5, Truncated: true}},
		{"head cut back before a split character", 10, 4, []string{"ab€cdefghijk"},
			Result{Head: "ab", Text: "fghijk", OmittedBytes: 6, Truncated: true}},
		{"both cuts inside characters", 10, 4, []string{"abc€€€€x"},
			Result{Head: "abc", Text: "€x", OmittedBytes: 9, Truncated: true}},
		{"a four-byte character at the head's end stays whole", 10, 4, []string{"😀0123456789"},
			Result{Head: "😀", Text: "456789", OmittedBytes: 4, Truncated: true}},
		{"invalid bytes count as characters", 10, 4, []string{"ab\xff\xfe0123456789"},
			Result{Head: "ab\uFFFD\uFFFD", Text: "456789", OmittedBytes: 4, Truncated: true}},
		{"nothing left of a tiny head", 10, 2, []string{"€0123456789"},
			Result{Text: "23456789", OmittedBytes: 5, Truncated: true}},
		{"no head: the tail as before", 10, 0, []string{"ab\ncdefghijk€"},
			Result{Text: "efghijk€", OmittedBytes: 5, Truncated: true}},
		{"a newline 1024 bytes before the head's end counts", 2000, 1025, []string{"a\n" + x1023 + "€" + t2000},
			Result{Head: "a\n", Text: t2000[:975], OmittedBytes: 2051, Truncated: true}},
		{"a newline 1025 bytes before it does not", 2000, 1026, []string{"a\n" + x1023 + "€" + t2000},
			Result{Head: "a\n" + x1023, Text: t2000[:974], OmittedBytes: 1029, Truncated: true}},
		{"no newline at all: up to the last whole character", 2000, 1500, []string{strings.Repeat("é", 2000)},
			Result{Head: strings.Repeat("é", 750), Text: strings.Repeat("é", 250), OmittedBytes: 2000, Truncated: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := headCollector(t, tc.max, tc.head)
			write(t, c, tc.chunks...)
			r := c.Close()
			got := Result{Head: r.Head, Text: r.Text, OmittedBytes: r.OmittedBytes, Truncated: r.Truncated}
			if got != tc.want {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
			stream := strings.Join(tc.chunks, "")
			if r.TotalBytes != int64(len(stream)) {
				t.Fatalf("total %d, want %d", r.TotalBytes, len(stream))
			}
			if utf8.ValidString(stream) && r.Truncated {
				if sum := int64(len(r.Head)) + r.OmittedBytes + int64(len(r.Text)); sum != r.TotalBytes {
					t.Fatalf("head %d + omitted %d + tail %d = %d, want %d", len(r.Head), r.OmittedBytes, len(r.Text), sum, r.TotalBytes)
				}
			}
		})
	}
}

func TestHeadStreamSpillsWhole(t *testing.T) {
	c := headCollector(t, 10, 4)
	write(t, c, "0123", "45", "6789", "abcdef", "ghij")
	r := c.Close()
	if r.Head != "0123" || r.Text != "efghij" || r.OmittedBytes != 10 {
		t.Fatalf("got %+v", r)
	}
	if data, err := os.ReadFile(r.SpillPath); err != nil || string(data) != "0123456789abcdefghij" {
		t.Fatalf("spill = %q, %v", data, err)
	}
}

// TestReadNewWithAHead: a consuming read sees the head while it runs on
// into the tail, and the tail alone once the middle was dropped.
func TestReadNewWithAHead(t *testing.T) {
	c := headCollector(t, 8, 3)
	write(t, c, "ab")
	if got, lossy := c.ReadNew(); string(got) != "ab" || lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
	write(t, c, "cdef")
	if got, lossy := c.ReadNew(); string(got) != "cdef" || lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
	write(t, c, "ghijkl") // head "abc", tail "hijkl": "defg" dropped, "g" unread
	if got, lossy := c.ReadNew(); string(got) != "hijkl" || !lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
	c = headCollector(t, 8, 3)
	write(t, c, "abcdefghij") // nothing read before the middle was dropped
	if got, lossy := c.ReadNew(); string(got) != "fghij" || !lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
}

func TestHeadBytesOutOfRangePanics(t *testing.T) {
	for _, head := range []int64{-1, 10, 11} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HeadBytes %d with MaxBytes 10 did not panic", head)
				}
			}()
			New(Options{MaxBytes: 10, HeadBytes: head, MaxSpillBytes: 10})
		}()
	}
}

func TestInvalidBytesReplacedOneForOne(t *testing.T) {
	c, _ := newCollector(t, 100, 100)
	write(t, c, "a\xff\xfeb\xe2\x82")
	if got := c.Close().Text; got != "a\uFFFD\uFFFDb\uFFFD\uFFFD" {
		t.Fatalf("got %q", got)
	}
}

func TestReadNewIsIncrementalAndKeepsCharactersWhole(t *testing.T) {
	c, _ := newCollector(t, 100, 1000)
	write(t, c, "one\n", "tw\xe2\x82")
	if got, lossy := c.ReadNew(); string(got) != "one\ntw" || lossy {
		t.Fatalf("first read %q lossy=%v", got, lossy)
	}
	if got, _ := c.ReadNew(); len(got) != 0 {
		t.Fatalf("read with nothing new: %q", got)
	}
	write(t, c, "\xac!")
	if got, _ := c.ReadNew(); string(got) != "€!" {
		t.Fatalf("second read %q", got)
	}
	write(t, c, "x\xe2")
	c.Close()
	if got, _ := c.ReadNew(); string(got) != "x\xe2" {
		t.Fatalf("read after close %q (an unfinished character is released at the end)", got)
	}
	if got, lossy := c.ReadNew(); len(got) != 0 || lossy {
		t.Fatalf("read after the last: %q lossy=%v", got, lossy)
	}
}

func TestReadNewReportsLoss(t *testing.T) {
	c, _ := newCollector(t, 5, 1000)
	write(t, c, "abc")
	if got, lossy := c.ReadNew(); string(got) != "abc" || lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
	write(t, c, "defghij") // keeps "fghij"; "de" unread and dropped
	if got, lossy := c.ReadNew(); string(got) != "fghij" || !lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
	write(t, c, "k")
	if got, lossy := c.ReadNew(); string(got) != "k" || lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
	// A loss that cuts a character: the read starts at the next one.
	write(t, c, "xx€yyy") // keeps the last 5 bytes, "\x82\xacyyy": cut inside €
	if got, lossy := c.ReadNew(); string(got) != "yyy" || !lossy {
		t.Fatalf("got %q lossy=%v", got, lossy)
	}
}

// failingSpiller makes files that fail on the chosen step.
type failingSpiller struct {
	dir                              string
	failCreate, failWrite, failClose bool
	made                             []string
}

type failingFile struct {
	*os.File
	s *failingSpiller
}

func (f failingFile) Write(p []byte) (int, error) {
	if f.s.failWrite {
		return 0, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f failingFile) Close() error {
	err := f.File.Close()
	if f.s.failClose {
		return syscall.EIO
	}
	return err
}

func (s *failingSpiller) Create(stream string) (File, error) {
	if s.failCreate {
		return nil, syscall.ENOSPC
	}
	f, err := os.CreateTemp(s.dir, "*-"+stream+".log")
	if err != nil {
		return nil, err
	}
	s.made = append(s.made, f.Name())
	return failingFile{f, s}, nil
}

func TestSpillFailuresWithholdThePath(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    failingSpiller
		want error
	}{
		{"create", failingSpiller{failCreate: true}, syscall.ENOSPC},
		{"write (disk full)", failingSpiller{failWrite: true}, syscall.ENOSPC},
		{"close", failingSpiller{failClose: true}, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.dir = t.TempDir()
			c := New(Options{Stream: "stderr", MaxBytes: 4, MaxSpillBytes: 100, Spill: &tc.s})
			write(t, c, "hello", " world")
			r := c.Close()
			if r.SpillPath != "" || !r.Truncated || r.Text != "orld" || r.TotalBytes != 11 {
				t.Fatalf("got %+v", r)
			}
			if !errors.Is(r.SpillErr, tc.want) {
				t.Fatalf("SpillErr = %v, want %v", r.SpillErr, tc.want)
			}
			if c.SpillPath() != "" {
				t.Fatalf("SpillPath() = %q after a failure", c.SpillPath())
			}
			for _, name := range tc.s.made {
				if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("failed spill file %s left behind", name)
				}
			}
		})
	}
}

// elsewhereFile is a spill file "on another machine": its name is no
// local path, and removing it goes through Remove.
type elsewhereFile struct {
	failClose bool
	removed   *[]string
}

func (elsewhereFile) Write(p []byte) (int, error) { return len(p), nil }
func (f elsewhereFile) Name() string              { return "/nonexistent/remote-stdout.log" }
func (f elsewhereFile) Remove() error             { *f.removed = append(*f.removed, f.Name()); return nil }
func (f elsewhereFile) Close() error {
	if f.failClose {
		return syscall.EIO
	}
	return nil
}

type elsewhereSpiller struct{ f elsewhereFile }

func (s elsewhereSpiller) Create(string) (File, error) { return s.f, nil }

// TestWithheldRemoteFileIsRemovedThroughItself: a File that is a Remover
// is removed through Remove when it is withheld, not by its name.
func TestWithheldRemoteFileIsRemovedThroughItself(t *testing.T) {
	var removed []string
	c := New(Options{Stream: "stdout", MaxBytes: 3, MaxSpillBytes: 10, Spill: elsewhereSpiller{elsewhereFile{failClose: true, removed: &removed}}})
	write(t, c, "abcdef")
	if r := c.Close(); r.SpillPath != "" || len(removed) != 1 || removed[0] != "/nonexistent/remote-stdout.log" {
		t.Fatalf("got %+v, removed %q", r, removed)
	}
	removed = nil
	c = New(Options{Stream: "stdout", MaxBytes: 3, MaxSpillBytes: 10, Spill: elsewhereSpiller{elsewhereFile{removed: &removed}}})
	write(t, c, "abcdef")
	if r := c.Close(); r.SpillPath != "/nonexistent/remote-stdout.log" || len(removed) != 0 {
		t.Fatalf("a good file: got %+v, removed %q", r, removed)
	}
}

func TestWithoutSpillerTruncatesWithNoPath(t *testing.T) {
	c := New(Options{Stream: "stdout", MaxBytes: 3, MaxSpillBytes: 10})
	write(t, c, "abcdef")
	if r := c.Close(); r.Text != "def" || !r.Truncated || r.SpillPath != "" {
		t.Fatalf("got %+v", r)
	}
}

func TestSpillFilesAreExclusiveAndUnique(t *testing.T) {
	dir := NewSpillDir(t.TempDir())
	defer dir.Remove()
	seen := map[string]bool{}
	for range 50 {
		f, err := dir.Create("stdout")
		if err != nil {
			t.Fatal(err)
		}
		if seen[f.Name()] {
			t.Fatalf("name %s reused", f.Name())
		}
		seen[f.Name()] = true
		f.Close()
	}
	// A symlink planted at the next name is never followed: the create
	// fails and the link's target stays untouched.
	dir.random = bytes.NewReader(bytes.Repeat([]byte{0xab}, 6))
	next := filepath.Join(dir.Path(), fmt.Sprintf("%06d-abababababab-stdout.log", spillSeq.Load()+1))
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, next); err != nil {
		t.Fatal(err)
	}
	if f, err := dir.Create("stdout"); err == nil {
		f.Close()
		t.Fatal("Create followed a planted symlink")
	}
	if data, _ := os.ReadFile(target); string(data) != "precious" {
		t.Fatalf("symlink target changed: %q", data)
	}
	// A plain file planted at the next name is not reused either.
	dir.random = bytes.NewReader(bytes.Repeat([]byte{0xcd}, 6))
	next = filepath.Join(dir.Path(), fmt.Sprintf("%06d-cdcdcdcdcdcd-stdout.log", spillSeq.Load()+1))
	if err := os.WriteFile(next, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Create("stdout"); err == nil {
		t.Fatal("Create reused an existing file")
	}
	if err := dir.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Create("stdout"); err == nil {
		t.Fatal("Create after Remove succeeded")
	}
}

func TestSweepRemovesOnlyDeadOwners(t *testing.T) {
	base := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ns := procfs.PidNamespace()
	dead := mk(fmt.Sprintf("dsh-out-%d-%d-1-abc", ns, deadPid(t)))
	mine := mk("dsh-out-" + procfs.Owner().String() + "-abc")
	parent := os.Getppid()
	alive := mk(fmt.Sprintf("dsh-out-%d-%d-%d-abc", ns, parent, procfs.Start(parent)))
	reused := mk(fmt.Sprintf("dsh-out-%d-%d-%d-abc", ns, parent, procfs.Start(parent)+12345))
	other := mk("dsh-out-notapid")
	// Another pid namespace's, whose pid runs nothing here: never judged.
	foreign := mk(fmt.Sprintf("dsh-out-%d-%d-1-abc", ns+1, deadPid(t)))
	// Named before the pid namespace was in the name: not attributable.
	oldFormat := mk(fmt.Sprintf("dsh-spill-%d-1-123", deadPid(t)))

	removed, err := Sweep(base)
	if err != nil {
		t.Fatal(err)
	}
	wantGone := map[string]bool{dead: true, reused: true}
	for _, p := range []string{dead, mine, alive, reused, other, foreign, oldFormat} {
		_, err := os.Stat(p)
		if gone := errors.Is(err, os.ErrNotExist); gone != wantGone[p] {
			t.Errorf("%s: gone=%v, want %v", filepath.Base(p), gone, wantGone[p])
		}
	}
	if len(removed) != 2 {
		t.Errorf("removed %v", removed)
	}
}

// deadPid returns a pid that runs no process.
func deadPid(t *testing.T) int {
	for pid := 999_999; pid > 100_000; pid-- {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return pid
		}
	}
	t.Fatal("no free pid found")
	return 0
}

// TestMemoryIsBounded pushes 64 MiB through a collector with a 64 000-byte
// cap, tail only and with the default head, and checks what it allocated:
// the head and the tail, one read buffer and their growth steps, nothing
// per byte. (The spill file is off: its writes cost no heap, and this
// measures the collector.)
func TestMemoryIsBounded(t *testing.T) {
	const max = 64000
	for _, head := range []int64{0, max / 4} {
		c := New(Options{Stream: "stdout", MaxBytes: max, HeadBytes: head, MaxSpillBytes: 1 << 30})
		src := io.LimitReader(zeros{}, 64<<20)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := c.ReadFrom(src); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		// Growth steps of head and tail (4K…max, about 2×max in all)
		// plus read buffers (8K…64K, about 128K in all), with room for
		// the runtime's own.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(2*max+(128<<10)+(64<<10)); got > limit {
			t.Fatalf("head %d: allocated %d bytes for a 64 MiB stream, want at most %d", head, got, limit)
		}
		if len(c.head) != int(head) || len(c.head)+len(c.tail) != max || cap(c.head) != int(head) {
			t.Fatalf("head holds %d bytes (capacity %d), tail %d, want %d in all", len(c.head), cap(c.head), len(c.tail), max)
		}
		c.Close()
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadFromGrowsItsBufferOnlyWhenNeeded(t *testing.T) {
	c, _ := newCollector(t, 1<<20, 1<<20)
	data := bytes.Repeat([]byte("x"), 300_000)
	n, err := c.ReadFrom(bytes.NewReader(data))
	if err != nil || n != int64(len(data)) || c.Total() != int64(len(data)) {
		t.Fatalf("ReadFrom = %d, %v; total %d", n, err, c.Total())
	}
	if r := c.Close(); r.Text != string(data) || r.Truncated {
		t.Fatal("content changed")
	}
	if _, err := c.Write([]byte("late")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// FuzzCollector writes a stream in random chunks, with random caps, heads
// and reads in between, and checks the collector's promises.
func FuzzCollector(f *testing.F) {
	f.Add([]byte("hello, world"), uint16(5), uint16(7), uint16(0), uint64(0x1234))
	f.Add([]byte("ab€é€€€éé"), uint16(4), uint16(100), uint16(0), uint64(7))
	f.Add([]byte("a\xff\xe2\x82\xacb\xe2"), uint16(3), uint16(2), uint16(0), uint64(99))
	f.Add(bytes.Repeat([]byte("line\n"), 200), uint16(64), uint16(300), uint16(0), uint64(3))
	f.Add(bytes.Repeat([]byte("line\n"), 200), uint16(64), uint16(300), uint16(16), uint64(3))
	f.Add([]byte("ab€é€€€éé\nx€"), uint16(8), uint16(100), uint16(5), uint64(11))
	f.Add([]byte("\xf0\x9f\x98\x80\xff\xe2\x82abc\xe2\x82\xac"), uint16(6), uint16(9), uint16(3), uint64(5))
	f.Add(bytes.Repeat([]byte("é"), 1500), uint16(400), uint16(1023), uint16(1201), uint64(8))
	f.Fuzz(func(t *testing.T, stream []byte, maxBytes, maxSpill, headBytes uint16, seed uint64) {
		max, spillMax := int64(maxBytes%2048)+1, int64(maxSpill%1024)+1
		head := int64(headBytes) % max
		dir := NewSpillDir(t.TempDir())
		defer dir.Remove()
		c := New(Options{Stream: "stdout", MaxBytes: max, HeadBytes: head, MaxSpillBytes: spillMax, Spill: dir})
		valid := utf8.Valid(stream)
		var reads []byte
		lost := false
		rest := stream
		for len(rest) > 0 {
			seed = seed*6364136223846793005 + 1442695040888963407
			n := min(int(seed>>33)%(2*int(max)+2)+1, len(rest))
			if _, err := c.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
			if seed&1 == 0 {
				got, lossy := c.ReadNew()
				lost = lost || lossy
				if valid && !utf8.Valid(got) {
					t.Fatalf("read split a character: %q", got)
				}
				reads = append(reads, got...)
			}
		}
		r := c.Close()
		got, lossy := c.ReadNew()
		reads, lost = append(reads, got...), lost || lossy

		checkKept(t, r, stream, max, head)
		if !lost && !bytes.Equal(reads, stream) {
			t.Fatalf("lossless reads %q != stream %q", reads, stream)
		}
		if int64(len(stream)) <= max {
			if r.SpillPath != "" || dir.Path() != "" {
				t.Fatalf("spill made for output that fit")
			}
			return
		}
		data, err := os.ReadFile(r.SpillPath)
		if err != nil {
			t.Fatal(err)
		}
		if want := stream[:min(int64(len(stream)), spillMax)]; !bytes.Equal(data, want) {
			t.Fatalf("spill %q, want the first %d bytes %q", data, spillMax, want)
		}
	})
}

// checkKept checks a closed collector's texts against the stream it was
// written: valid UTF-8; all of it when it fit; else the decoding of a head
// cut at its last newline (in its last headLineWindow bytes) or before an
// unfinished character, of a tail cut forward over continuation bytes, and
// the bytes in neither counted exactly.
func checkKept(t *testing.T, r Result, stream []byte, capBytes, head int64) {
	t.Helper()
	if !utf8.ValidString(r.Text) || !utf8.ValidString(r.Head) {
		t.Fatalf("texts are not valid UTF-8: %q, %q", r.Head, r.Text)
	}
	total := int64(len(stream))
	if r.TotalBytes != total {
		t.Fatalf("total %d, want %d", r.TotalBytes, total)
	}
	if r.Truncated != (total > capBytes) {
		t.Fatalf("truncated=%v with %d bytes and cap %d", r.Truncated, total, capBytes)
	}
	if !r.Truncated {
		if r.Text != Text(stream) || r.Head != "" || r.OmittedBytes != 0 {
			t.Fatalf("output that fit: %+v", r)
		}
		return
	}
	// A stream holding U+FFFD itself can decode to one text from two
	// lengths, so every cut the rules allow is tried.
	for _, h := range headCuts(stream[:head]) {
		for _, tl := range tailCuts(stream[total-(capBytes-head):]) {
			if Text(stream[:h]) == r.Head && Text(stream[total-tl:]) == r.Text && h+r.OmittedBytes+tl == total {
				return
			}
		}
	}
	t.Fatalf("head %q, tail %q and %d omitted are not the cuts of %q (cap %d, head %d)",
		r.Head, r.Text, r.OmittedBytes, stream, capBytes, head)
}

// headCuts returns the lengths a head b may be cut to: just after its last
// newline when one is in its last headLineWindow bytes, else b whole or
// without an unfinished character at its end.
func headCuts(b []byte) []int64 {
	from := max(0, len(b)-headLineWindow)
	if i := bytes.LastIndexByte(b[from:], '\n'); i >= 0 {
		return []int64{int64(from + i + 1)}
	}
	cuts := []int64{int64(len(b))}
	for n := len(b) - 1; n >= 0 && n >= len(b)-(utf8.UTFMax-1); n-- {
		if utf8.RuneStart(b[n]) && !utf8.FullRune(b[n:]) {
			cuts = append(cuts, int64(n))
		}
	}
	return cuts
}

// tailCuts returns the lengths a tail b may be cut to: b, or b without the
// continuation bytes (at most 3) of a character that began before it.
func tailCuts(b []byte) []int64 {
	cuts := []int64{int64(len(b))}
	for i := 0; i < len(b) && i < utf8.UTFMax-1 && !utf8.RuneStart(b[i]); i++ {
		cuts = append(cuts, int64(len(b)-i-1))
	}
	return cuts
}

func TestCloseRacingWrites(t *testing.T) {
	c, _ := newCollector(t, 16, 1<<20)
	var written int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := c.Write([]byte("0123456789"))
			if err != nil {
				return
			}
			written += int64(n)
			c.ReadNew()
		}
	}()
	for c.Total() < 1000 {
		runtime.Gosched()
	}
	r := c.Close()
	<-done
	if r.TotalBytes != written {
		t.Fatalf("result counts %d bytes, writer wrote %d", r.TotalBytes, written)
	}
	if data, err := os.ReadFile(r.SpillPath); err != nil || int64(len(data)) != written {
		t.Fatalf("spill holds %d bytes (%v), want %d", len(data), err, written)
	}
}

// TestOlderSweepsSkipOurNames: dsh versions whose spill names had no pid
// namespace swept every "dsh-spill-<pid>-<start>-…" whose pid ran nothing;
// they would read a namespace inode as a pid and delete a live directory
// of ours if our names started the same way.
func TestOlderSweepsSkipOurNames(t *testing.T) {
	older := regexp.MustCompile(`^dsh-spill-(\d+)-(\d+)-[^/]+$`) // their pattern
	d := NewSpillDir(t.TempDir())
	t.Cleanup(func() { _ = d.Remove() })
	f, err := d.Create("stdout")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if name := filepath.Base(d.Path()); older.MatchString(name) {
		t.Errorf("an older dsh's sweep would take %q for its own", name)
	}
}

// TestYieldReportsSoFarAndReadsGoOnAfterIt: a yield is the text Close
// would give for the stream so far, an incomplete character held back,
// and the consuming reads start right after what it reported.
func TestYieldReportsSoFarAndReadsGoOnAfterIt(t *testing.T) {
	c := headCollector(t, 10, 4)
	write(t, c, "ab\xe2\x82") // "ab" and the start of "€"
	r := c.Yield()
	if r.Text != "ab" || r.Truncated || r.TotalBytes != 2 || r.SpillPath != "" {
		t.Fatalf("yield of a short stream: %+v", r)
	}
	write(t, c, "\xaccd")
	if got, lossy := c.ReadNew(); string(got) != "€cd" || lossy {
		t.Fatalf("first read after the yield: %q lossy=%v", got, lossy)
	}

	c = headCollector(t, 10, 4)
	write(t, c, "0123456789abcdef")
	r = c.Yield()
	want := Result{Head: "0123", Text: "abcdef", OmittedBytes: 6, Truncated: true}
	if got := (Result{Head: r.Head, Text: r.Text, OmittedBytes: r.OmittedBytes, Truncated: r.Truncated}); got != want {
		t.Fatalf("yield of an overflowing stream: %#v", got)
	}
	if r.TotalBytes != 16 || r.SpillPath == "" || r.SpillCapped {
		t.Fatalf("yield's facts: %+v", r)
	}
	if data, err := os.ReadFile(r.SpillPath); err != nil || string(data) != "0123456789abcdef" {
		t.Fatalf("the live spill file holds %q, %v", data, err)
	}
	if got, lossy := c.ReadNew(); len(got) != 0 || lossy {
		t.Fatalf("a read right after the yield: %q lossy=%v", got, lossy)
	}
	write(t, c, "gh")
	if got, lossy := c.ReadNew(); string(got) != "gh" || lossy {
		t.Fatalf("the next output: %q lossy=%v", got, lossy)
	}
	final := c.Close()
	if final.Head != "0123" || final.Text != "cdefgh" || final.TotalBytes != 18 {
		t.Fatalf("close after a yield: %+v", final)
	}
	if again := c.Yield(); again.Text != final.Text {
		t.Fatalf("yield after close: %+v", again)
	}
}

// TestBeforeIsWhatCameBeforeTheTail: with ContextBytes, a truncated
// stream's Result and a lossy read report what came just before their
// text, ContextBytes of it at most (docs/spec.md §14), and keep the same
// texts and counts as without: the context is beside them.
func TestBeforeIsWhatCameBeforeTheTail(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 15))
	for round := range 500 {
		limit := int64(2 + r.IntN(40))
		head, context := int64(r.IntN(int(limit))), int64(r.IntN(60))
		var stream strings.Builder
		with := New(Options{Stream: "stdout", MaxBytes: limit, HeadBytes: head, ContextBytes: context, MaxSpillBytes: 1 << 20})
		without := New(Options{Stream: "stdout", MaxBytes: limit, HeadBytes: head, MaxSpillBytes: 1 << 20})
		reader := New(Options{Stream: "stdout", MaxBytes: limit, ContextBytes: context, MaxSpillBytes: 1 << 20})
		read := 0 // what reads returned or skipped of the stream
		for range r.IntN(8) {
			chunk := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(30))
			stream.WriteString(chunk)
			write(t, with, chunk)
			write(t, without, chunk)
			write(t, reader, chunk)
			if r.IntN(2) == 0 {
				data, before, lossy := reader.ReadNewAfter()
				at := stream.Len() - len(data)
				if want := stream.String()[max(0, at-int(context)):at]; lossy && string(before) != want || !lossy && (before != nil || at != read) {
					t.Fatalf("round %d: read %q after %q (lossy %v), stream %q", round, data, before, lossy, stream.String())
				}
				read = stream.Len()
			}
		}
		got, want := with.Close(), without.Close()
		if got.Truncated {
			at := stream.Len() - len(got.Text)
			if wantBefore := stream.String()[max(0, at-int(context)):at]; got.Before != wantBefore {
				t.Fatalf("round %d: Before %q, want %q (stream %q)", round, got.Before, wantBefore, stream.String())
			}
		} else if got.Before != "" {
			t.Fatalf("round %d: Before %q of a stream that fits", round, got.Before)
		}
		got.Before = ""
		if got != want {
			t.Fatalf("round %d: with context %+v, without %+v", round, got, want)
		}
	}
}

// TestContextCostsOnlyOverflowingStreams: a stream that fits allocates
// no context; one that overflows keeps ContextBytes more, no further.
func TestContextCostsOnlyOverflowingStreams(t *testing.T) {
	const max, head, context = 64000, 16000, 16 << 10
	c := New(Options{Stream: "stdout", MaxBytes: max, HeadBytes: head, ContextBytes: context, MaxSpillBytes: 1 << 30})
	if _, err := c.ReadFrom(io.LimitReader(zeros{}, max)); err != nil {
		t.Fatal(err)
	}
	if cap(c.tail) > max-head {
		t.Fatalf("a stream that fits holds a ring of %d bytes, want at most %d", cap(c.tail), max-head)
	}
	if _, err := c.ReadFrom(io.LimitReader(zeros{}, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if len(c.head)+len(c.tail) != max+context {
		t.Fatalf("an overflowing stream holds %d bytes, want %d", len(c.head)+len(c.tail), max+context)
	}
	if r := c.Close(); len(r.Before) != context || len(r.Head)+len(r.Text) != max {
		t.Fatalf("Before %d bytes, head and tail %d", len(r.Before), len(r.Head)+len(r.Text))
	}
}

// TestReadNewHeadOfARunningStream: a consumed stream with a head, read
// while it runs: a read that missed bytes from inside the head gets the
// head's unread part, cut to a line end, and the count of the bytes
// between it and the tail; a read that missed bytes after the head gets
// none.
func TestReadNewHeadOfARunningStream(t *testing.T) {
	c := New(Options{Stream: "stdout", MaxBytes: 20, HeadBytes: 8, MaxSpillBytes: 1 << 20, Consumed: true})
	write := func(s string) {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write("err1\nerr2\n")
	write(strings.Repeat("x", 40))
	r := c.ReadNewHead()
	if !r.Lossy || string(r.Head) != "err1\n" || string(r.Data) != strings.Repeat("x", 12) || r.Omitted != 50-5-12 {
		t.Fatalf("first read: lossy %v head %q data %q omitted %d", r.Lossy, r.Head, r.Data, r.Omitted)
	}
	write(strings.Repeat("y", 40))
	if r := c.ReadNewHead(); !r.Lossy || r.Head != nil || r.Omitted != 0 || string(r.Data) != strings.Repeat("y", 12) {
		t.Fatalf("second read: lossy %v head %q data %q omitted %d", r.Lossy, r.Head, r.Data, r.Omitted)
	}
	c.Close()
}
