//go:build linux

package procfs

import (
	"fmt"
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

// TestWindowProbe: a narrow window read pid by pid holds the processes
// forked in it and leaves out the threads, whose ids /proc answers for
// too though it does not list them.
func TestWindowProbe(t *testing.T) {
	if !windowUsable() {
		t.Skip("SKIP-REASON: /proc shows another pid namespace")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP-REASON: no python3 to start a thread with")
	}
	m := NewMark()
	first := startSleep(t)
	cmd := exec.Command("python3", "-c", `import threading, time
e = threading.Event()
threading.Thread(target=lambda: (print(threading.get_native_id(), flush=True), e.wait())).start()
time.sleep(5)`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var tid int
	if _, err := fmt.Fscan(out, &tid); err != nil || tid == cmd.Process.Pid {
		t.Fatalf("no thread id (%d): %v", tid, err)
	}
	w, ok := windowOf(first, m)
	if !ok || !w.in(tid) {
		t.Fatalf("no window from %d holding %d: %+v", first, tid, w)
	}
	procs, ok := w.probe()
	if !ok {
		t.Skip("SKIP-REASON: no pidfds here to tell threads from processes")
	}
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.Pid)
	}
	if !slices.Contains(pids, first) || !slices.Contains(pids, cmd.Process.Pid) || slices.Contains(pids, tid) {
		t.Fatalf("probe of %+v: %v; want %d and %d, not the thread %d", w, pids, first, cmd.Process.Pid, tid)
	}
}

// TestWindowCount: a window that wrapped counts the pids on both sides
// of the wrap.
func TestWindowCount(t *testing.T) {
	for _, c := range []struct {
		w    window
		want int
	}{
		{window{first: 500, last: 500, size: 4096}, 1},
		{window{first: 500, last: 531, size: 4096}, 32},
		{window{first: 4094, last: reservedPids + 1, size: 4096}, 4},
	} {
		if got := c.w.count(); got != c.want {
			t.Errorf("%+v: %d pids, want %d", c.w, got, c.want)
		}
	}
}
