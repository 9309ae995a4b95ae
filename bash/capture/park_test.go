package capture

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func consumed(t *testing.T, max int64, spill Spiller) *Collector {
	t.Helper()
	return New(Options{Stream: "stdout", MaxBytes: max, MaxSpillBytes: 1 << 30, Spill: spill, Consumed: true})
}

func spillDir(t *testing.T) *SpillDir {
	t.Helper()
	dir := NewSpillDir(t.TempDir())
	t.Cleanup(func() { _ = dir.Remove() })
	return dir
}

// TestParkedReadsAsUnparked: a Consumed stream reads the same, chunk for
// chunk, lossy or not, and with the same before, as one that is not
// parked, whatever was read before it ended; and what it keeps in memory
// once closed is at most ParkedBytes.
func TestParkedReadsAsUnparked(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 15))
	for round := range 300 {
		max, context := int64(1+r.IntN(4000)), int64(r.IntN(5000))
		plain := New(Options{Stream: "stdout", MaxBytes: max, ContextBytes: context, MaxSpillBytes: 1 << 30, Spill: spillDir(t)})
		parked := New(Options{Stream: "stdout", MaxBytes: max, ContextBytes: context, MaxSpillBytes: 1 << 30, Spill: spillDir(t), Consumed: true})
		read := func() {
			a, ab, al := plain.ReadNewAfter()
			b, bb, bl := parked.ReadNewAfter()
			if string(a) != string(b) || al != bl || string(ab) != string(bb) {
				t.Fatalf("round %d (max %d, context %d): parked read %q after %q, %v; unparked %q after %q, %v",
					round, max, context, short(b), short(bb), bl, short(a), short(ab), al)
			}
		}
		for range r.IntN(6) {
			chunk := strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(3000)) + "é"
			write(t, plain, chunk)
			write(t, parked, chunk)
			if r.IntN(3) == 0 {
				read()
			}
		}
		plain.Close()
		res := parked.Close()
		if res.Text != "" || res.Head != "" {
			t.Fatalf("a Consumed stream's Result has texts: %+v", res)
		}
		parked.mu.Lock()
		kept := len(parked.park.tail) + len(parked.tail) + len(parked.head)
		on := parked.park.on
		parked.mu.Unlock()
		if !on || kept > ParkedBytes {
			t.Fatalf("round %d: parked %v, %d bytes kept in memory", round, on, kept)
		}
		read()
		read()
	}
}

func short(b []byte) string {
	if len(b) > 40 {
		return string(b[:20]) + "…" + string(b[len(b)-20:])
	}
	return string(b)
}

// TestParkMakesTheSpillFile: a stream that fit in memory but has more
// than ParkedBytes unread gets its spill file when it ends, whole.
func TestParkMakesTheSpillFile(t *testing.T) {
	c := consumed(t, 10000, spillDir(t))
	data := strings.Repeat("x", 5000)
	write(t, c, data)
	res := c.Close()
	if res.Truncated || res.SpillPath == "" {
		t.Fatalf("result %+v: want a spill file and no truncation", res)
	}
	if got, err := os.ReadFile(res.SpillPath); err != nil || string(got) != data {
		t.Fatalf("spill file: %d bytes, %v", len(got), err)
	}
	if got, lossy := c.ReadNew(); string(got) != data || lossy {
		t.Fatalf("read %d bytes, lossy %v", len(got), lossy)
	}
}

// TestParkSmallUnreadNeedsNoFile: a stream whose unread part is small
// stays in memory, without a spill file.
func TestParkSmallUnreadNeedsNoFile(t *testing.T) {
	dir := spillDir(t)
	c := consumed(t, 10000, dir)
	write(t, c, strings.Repeat("y", 4000))
	c.ReadNew()
	write(t, c, "tail\n")
	if res := c.Close(); res.SpillPath != "" || dir.Path() != "" {
		t.Fatalf("a spill file for 5 unread bytes: %+v", res)
	}
	if got, _ := c.ReadNew(); string(got) != "tail\n" {
		t.Fatalf("read %q", got)
	}
}

// TestParkedFileGone: a spill file deleted before the read makes the read
// lossy, with the tail kept in memory.
func TestParkedFileGone(t *testing.T) {
	c := consumed(t, 100000, spillDir(t))
	write(t, c, strings.Repeat("z", 5000)+"END")
	res := c.Close()
	if err := os.Remove(res.SpillPath); err != nil {
		t.Fatal(err)
	}
	got, lossy := c.ReadNew()
	if !lossy || len(got) != ParkedBytes || !strings.HasSuffix(string(got), "END") {
		t.Fatalf("read %d bytes, lossy %v", len(got), lossy)
	}
}

// TestNoReopenerKeepsTheRing: without a spill directory to read back
// from, a large unread part stays in memory and reads whole.
func TestNoReopenerKeepsTheRing(t *testing.T) {
	c := consumed(t, 10000, nil)
	data := strings.Repeat("w", 6000)
	write(t, c, data)
	c.Close()
	if got, lossy := c.ReadNew(); string(got) != data || lossy {
		t.Fatalf("read %d bytes, lossy %v", len(got), lossy)
	}
}

// TestParkedHeadStaysInTheFile: a finished stream that overflowed keeps
// its unread head in its spill file, not in memory (at most ParkedBytes
// there), and its lossy read still returns the head, as it would have
// running.
func TestParkedHeadStaysInTheFile(t *testing.T) {
	opts := Options{Stream: "stdout", MaxBytes: 64000, HeadBytes: 16000, MaxSpillBytes: 1 << 20, ContextBytes: 1, Spill: spillDir(t), Consumed: true}
	c, running := New(opts), New(opts)
	head := strings.Repeat("early error\n", 1000) // 12000 bytes
	for _, s := range []string{head, strings.Repeat("x", 200000)} {
		for _, w := range []*Collector{c, running} {
			if _, err := w.Write([]byte(s)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := running.ReadNewHead()
	running.Close()
	c.Close()
	c.mu.Lock()
	kept := len(c.park.tail) + len(c.park.head) + len(c.head) + len(c.tail)
	c.mu.Unlock()
	if kept > ParkedBytes {
		t.Errorf("a parked stream keeps %d bytes in memory, more than %d", kept, ParkedBytes)
	}
	r := c.ReadNewHead()
	if !r.Lossy || !strings.HasPrefix(string(r.Head), head) || string(r.Head) != string(want.Head) || r.Omitted != want.Omitted {
		t.Fatalf("read: lossy %v, head %d bytes (running: %d), omitted %d (running: %d)", r.Lossy, len(r.Head), len(want.Head), r.Omitted, want.Omitted)
	}
}
