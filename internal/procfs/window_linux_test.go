//go:build linux

package procfs

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

// TestTableAfter: a window opened by a mark before a first child holds
// that child and one forked after it (also when they are many pids
// apart), and leaves out this process, forked long before; a window too
// wide for the mark to bound, or no mark, is the whole table.
func TestTableAfter(t *testing.T) {
	if !windowUsable() {
		t.Skip("SKIP-REASON: /proc shows another pid namespace")
	}
	m := NewMark()
	if !m.ok {
		t.Fatal("no mark")
	}
	first := startSleep(t)
	for range 50 { // pids between first and second
		if err := exec.Command("true").Run(); err != nil {
			t.Fatal(err)
		}
	}
	second := startSleep(t)
	pids := func(procs []Proc) (out []int) {
		for _, p := range procs {
			out = append(out, p.Pid)
		}
		return out
	}
	got, err := TableAfter(first, m)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pids(got), first) || !slices.Contains(pids(got), second) {
		t.Fatalf("window after %d lacks it or %d: %v", first, second, pids(got))
	}
	if slices.Contains(pids(got), os.Getpid()) && os.Getpid() < first && first < second {
		t.Fatalf("window after %d holds this process %d", first, os.Getpid())
	}
	all, _ := Table()
	for name, m := range map[string]Mark{"no mark": {}, "a cycle of forks": {forks: m.forks - uint64(pidMax()), threads: m.threads, ok: true}} {
		got, err := TableAfter(first, m)
		if err != nil || !slices.Contains(pids(got), os.Getpid()) || len(got) < len(all)/2 {
			t.Fatalf("%s: not the whole table: %v %v", name, pids(got), err)
		}
	}
}

func startSleep(t *testing.T) int {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
