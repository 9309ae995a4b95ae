package capture

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// budgeted returns a collector of dir charged to b: 4 bytes in memory,
// files of up to 1000.
func budgeted(dir *SpillDir, b *Budget, consumed bool) *Collector {
	return New(Options{Stream: "stdout", MaxBytes: 4, MaxSpillBytes: 1000, Spill: dir, Budget: b, Consumed: consumed})
}

// exists reports whether path names a file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestBudgetReleasesReadStreamsThenCuts: streams share a budget of 10
// bytes. A new file first takes the room of finished and read streams'
// files, the oldest first; a consumed stream is read only once a read
// after its close took its last byte, and until then its file stays. With
// nothing left to release a file stops growing (capped, its bytes a prefix
// of the stream), and a stream that finds no room at all gets no file.
func TestBudgetReleasesReadStreamsThenCuts(t *testing.T) {
	dir := NewSpillDir(t.TempDir())
	t.Cleanup(func() { _ = dir.Remove() })
	b := NewBudget(10)
	spill := func(consumed bool, chunks ...string) (*Collector, Result) {
		c := budgeted(dir, b, consumed)
		write(t, c, chunks...)
		return c, c.Close() // a foreground result is read as it closes
	}

	_, first := spill(false, "aaaaa")
	_, second := spill(false, "bbbbb")
	if b.Used() != 10 || first.SpillCapped || second.SpillCapped {
		t.Fatalf("used %d, results %+v %+v", b.Used(), first, second)
	}
	task, unread := spill(true, "ccccc") // releases first, the older, only
	if exists(first.SpillPath) || !exists(second.SpillPath) || unread.SpillCapped || b.Used() != 10 {
		t.Fatalf("first %v, second %v, task %+v, used %d", exists(first.SpillPath), exists(second.SpillPath), unread, b.Used())
	}

	// Releases second; the unread task's file stays, and the file stops.
	_, cut := spill(false, "dd", "ddd", "dd")
	data, err := os.ReadFile(cut.SpillPath)
	if !cut.SpillCapped || cut.SpillBytes != 5 || string(data) != "ddddd" || err != nil || exists(second.SpillPath) || !exists(unread.SpillPath) {
		t.Fatalf("cut %+v (file %q, %v), second %v, task %v", cut, data, err, exists(second.SpillPath), exists(unread.SpillPath))
	}
	// Releases cut; then only unread streams hold the budget.
	_, unread2 := spill(true, "eeeee")
	if unread2.SpillBytes != 5 || exists(cut.SpillPath) {
		t.Fatalf("after releasing cut: %+v, cut's file %v", unread2, exists(cut.SpillPath))
	}
	_, spent := spill(false, "ffffff")
	if spent.SpillPath != "" || !spent.Truncated || !errors.Is(spent.SpillErr, ErrBudgetSpent) {
		t.Fatalf("no room at all: %+v", spent)
	}

	// Reading the task to its end makes its file releasable.
	if data, _ := task.ReadNew(); !strings.HasSuffix(string(data), "cccc") {
		t.Fatalf("task read %q", data)
	}
	if _, last := spill(false, "ggggg"); last.SpillBytes != 5 || last.SpillCapped || exists(unread.SpillPath) || !exists(unread2.SpillPath) {
		t.Fatalf("after reading the task: %+v, its file %v", last, exists(unread.SpillPath))
	}
}

// TestBudgetForget: a file its owner deletes gives its bytes back.
func TestBudgetForget(t *testing.T) {
	dir := NewSpillDir(t.TempDir())
	t.Cleanup(func() { _ = dir.Remove() })
	b := NewBudget(8)
	c := budgeted(dir, b, true) // consumed, never read: never released
	write(t, c, strings.Repeat("x", 8))
	r := c.Close()
	if b.Used() != 8 {
		t.Fatalf("used %d", b.Used())
	}
	b.Forget(r.SpillPath, "/not/charged")
	if b.Used() != 0 {
		t.Fatalf("used %d after Forget", b.Used())
	}
	next := budgeted(dir, b, false)
	write(t, next, strings.Repeat("y", 8))
	if r := next.Close(); r.SpillCapped || r.SpillBytes != 8 {
		t.Fatalf("after Forget: %+v", r)
	}
}
