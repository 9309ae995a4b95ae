package term

import (
	"runtime"
	"strconv"
	"testing"
)

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The screen keeps the visible screen and nothing of what scrolled off it,
// on either screen buffer: x/vt as it comes keeps 10,000 lines of each, ~90
// MiB for the alternate screen at 80 columns.
func TestMemoryBounded(t *testing.T) {
	const bound = 4 << 20
	lines := func(n int) []byte {
		var b []byte
		for i := range n {
			b = append(b, "line "...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, " of some output that is long enough to look like a log line\r\n"...)
		}
		return b
	}
	mb := 100
	if raceEnabled || testing.Short() {
		mb = 10
	}
	for _, c := range []struct {
		name   string
		noSkip bool
		out    []byte // written after setup
		times  int
		setup  string
	}{
		{strconv.Itoa(mb) + " MB scrolling", false, scrollingOutput(1 << 20), mb, ""},
		{"20k lines, every line drawn", true, lines(20000), 1, ""},
		{"20k lines in the alternate screen", false, lines(20000), 1, "\x1b[?1049h"},
		{"20k lines in the alternate screen, every line drawn", true, lines(20000), 1, "\x1b[?1049h"},
		{"20k screens cleared in the alternate screen", true, []byte(repeat("\x1b[2J\x1b[Hframe\r\nrows\r\n", 20000)), 1, "\x1b[?1049h"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := heapAfterGC()
			s := newScreen(t, 80, 24, nil)
			s.noSkip = c.noSkip
			write(t, s, c.setup)
			fresh := heapAfterGC()
			for range c.times {
				for p := c.out; len(p) > 0; {
					n := min(len(p), 4096)
					_, _ = s.Write(p[:n])
					p = p[n:]
				}
			}
			_ = s.Text()
			after := heapAfterGC()
			t.Logf("fresh screen %d KiB; after %d MiB of output, %+d KiB", (fresh-before)>>10, len(c.out)*c.times>>20, (after-fresh)>>10)
			if after-fresh > bound {
				t.Errorf("the heap grew by %d KiB", (after-fresh)>>10)
			}
			runtime.KeepAlive(s)
		})
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}
