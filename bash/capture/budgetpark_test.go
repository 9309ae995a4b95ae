package capture

import (
	"strings"
	"testing"
)

// TestSpentBudgetParksToo: a finished, unread stream whose spill file
// finds no room in the spill total keeps what a parked stream keeps (and
// its context), not its whole ring: 256 such tasks a session must not
// hold their output in memory. Its next read is lossy, from the end.
func TestSpentBudgetParksToo(t *testing.T) {
	dir := NewSpillDir(t.TempDir())
	t.Cleanup(func() { _ = dir.Remove() })
	budget := NewBudget(1)
	hog := New(Options{Stream: "stdout", MaxBytes: 4, MaxSpillBytes: 1000, Spill: dir, Budget: budget, Consumed: true})
	write(t, hog, "xxxxxx") // takes the whole budget
	c := New(Options{Stream: "stdout", MaxBytes: 64000, MaxSpillBytes: 1 << 26, ContextBytes: 16 << 10, Spill: dir, Budget: budget, Consumed: true})
	write(t, c, strings.Repeat("a", 59999)+"b")
	c.Close()
	c.mu.Lock()
	held := len(c.tail) + len(c.head) + len(c.park.tail)
	c.mu.Unlock()
	if held > ParkedBytes+16<<10 {
		t.Errorf("%d bytes held after close, want at most %d", held, ParkedBytes+16<<10)
	}
	data, lossy := c.ReadNew()
	if !lossy || !strings.HasSuffix(string(data), "ab") || len(data) > ParkedBytes {
		t.Errorf("the read after close: lossy %v, %d bytes ending %q", lossy, len(data), data[max(0, len(data)-2):])
	}
}
