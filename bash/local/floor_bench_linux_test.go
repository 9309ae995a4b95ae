package local

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
)

// BenchmarkSpawnFloor measures what cgroup containment costs the kernel,
// with nothing of dsh: the bare spawn of `bash -c true`, then the same
// with each thing a contained, captured command needs added in turn — a
// session of its own with a parent-death signal, stdout and stderr pipes
// read by two goroutines, a fresh cgroup made, cloned into with a cgroup
// namespace and removed — and, for comparison, a cgroup made once and
// cloned into every time. Each iteration does one of each, in a rotating
// order, and the metrics are each one's time over the bare spawn's: the floor
// under BenchmarkSpawnTrue's cgroup ratio (docs/performance.md).
func BenchmarkSpawnFloor(b *testing.B) {
	c, err := newContainment(config.ContainCgroup)
	if err != nil {
		b.Skipf("no cgroup: %v", err)
	}
	b.Cleanup(c.close)
	kept, keptFD, err := makeCommandCgroup(c.base, "kept")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = syscall.Close(keptFD); removeTree(kept) })

	steps := []struct {
		name string
		run  func(b *testing.B, n int)
	}{
		{"bare", func(b *testing.B, _ int) { spawnFloor(b, nil, false) }},
		{"session", func(b *testing.B, _ int) { spawnFloor(b, sessionAttr(-1), false) }},
		{"pipes", func(b *testing.B, _ int) { spawnFloor(b, sessionAttr(-1), true) }},
		{"cgroup", func(b *testing.B, n int) {
			dir, fd, err := makeCommandCgroup(c.base, "f"+strconv.Itoa(n))
			if err != nil {
				b.Fatal(err)
			}
			a := sessionAttr(fd)
			newCgroupNS(a)
			spawnFloor(b, a, true)
			_ = syscall.Close(fd)
			removeTree(dir)
		}},
		{"kept-cgroup", func(b *testing.B, _ int) {
			a := sessionAttr(keptFD)
			newCgroupNS(a)
			spawnFloor(b, a, true)
		}},
	}
	spent := make([]time.Duration, len(steps))
	n := 0
	for b.Loop() {
		// Each starts the round in turn: a step pays for the kernel's
		// deferred work of the one before it (a removed cgroup is freed
		// after rmdir returns).
		for k := range steps {
			i := (n + k) % len(steps)
			t0 := time.Now()
			steps[i].run(b, n)
			spent[i] += time.Since(t0)
		}
		n++
	}
	for i, s := range steps[1:] {
		b.ReportMetric(float64(spent[i+1])/float64(spent[0]), s.name+"/bare")
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(n), "bare-ns/op")
}

// sessionAttr starts the shell in a session of its own with a
// parent-death signal, and in the cgroup open as cgroupFD unless it is -1.
func sessionAttr(cgroupFD int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if cgroupFD >= 0 {
		a.UseCgroupFD, a.CgroupFD = true, cgroupFD
	}
	return a
}

// spawnFloor runs `bash -c true` with attr, its output into pipes read by
// two goroutines when piped (as a run's collectors read them), else to
// /dev/null.
func spawnFloor(b *testing.B, attr *syscall.SysProcAttr, piped bool) {
	cmd := exec.Command("bash", "-c", "true")
	cmd.SysProcAttr = attr
	if !piped {
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return
	}
	var readers sync.WaitGroup
	var ends []*os.File // the write ends, for the child
	for range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		ends = append(ends, w)
		readers.Go(func() { _, _ = io.Copy(io.Discard, r); _ = r.Close() })
	}
	cmd.Stdout, cmd.Stderr = ends[0], ends[1]
	err := cmd.Run()
	for _, w := range ends {
		_ = w.Close()
	}
	readers.Wait()
	if err != nil {
		b.Fatal(err)
	}
}
