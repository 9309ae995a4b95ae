package bashtool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
)

// spillFiles lists the spill files under base.
func spillFiles(t *testing.T, base string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(base, "dsh-out-*", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFinishedTaskOutputParkedAndReleased: the unread output of a finished
// task waits in a spill file rather than in memory, reads whole, and its
// file goes as soon as the read took it all, since the model never saw
// its path.
func TestFinishedTaskOutputParkedAndReleased(t *testing.T) {
	base := t.TempDir()
	s := newStack(t, func(c *config.Local) { c.SpillDir = base })
	a := session.New("a", "")
	defer a.End()
	id := s.start(t, a, "head -c 5000 /dev/zero | tr '\\0' x; echo; echo end")
	s.awaitFinish(t, id)
	if files := spillFiles(t, base); len(files) != 1 {
		t.Fatalf("spill files of the finished task: %q, want its stdout's", files)
	}
	want := strings.Repeat("x", 5000) + "\nend\n[status: completed, exit code: 0]"
	if got := s.output(t, a, id); got != want {
		t.Fatalf("task_output: %d bytes, want %d", len(got), len(want))
	}
	if files := spillFiles(t, base); len(files) != 0 {
		t.Errorf("spill files after the whole output was read: %q", files)
	}
}

// TestShownSpillFileKept: a spill file a read named (output was dropped
// from memory) stays until the session ends.
func TestShownSpillFileKept(t *testing.T) {
	base := t.TempDir()
	s := newStack(t, func(c *config.Local) { c.SpillDir, c.MaxOutputBytes = base, 1000 })
	a := session.New("a", "")
	id := s.start(t, a, "seq 1 2000")
	s.awaitFinish(t, id)
	got := s.output(t, a, id)
	files := spillFiles(t, base)
	if len(files) != 1 || !strings.Contains(got, "[some output was dropped from memory; full output: "+files[0]+"]") {
		t.Fatalf("files %q, output ends %q", files, got[max(0, len(got)-200):])
	}
	a.End()
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Errorf("the spill file outlived its session: %v", err)
	}
}
