package term

import (
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/charmbracelet/x/vt"
)

// The benchmarks write the way the executor does: what one read of a pty
// master returns, at most 4 KiB (the line discipline's buffer). Each op ends
// with Text, so that output the screen has not yet drawn is paid for.
const benchChunk = 4 << 10

// scrollingOutput is what seq prints through a pty: short lines, CR LF.
func scrollingOutput(n int) []byte {
	var b []byte
	for i := 1; len(b) < n; i++ {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '\r', '\n')
	}
	return b
}

// coloredOutput is a log with SGR colours, ~110 bytes a line.
func coloredOutput(n int) []byte {
	var b []byte
	levels := []string{"\x1b[32mINFO\x1b[0m ", "\x1b[33mWARN\x1b[0m ", "\x1b[1;31mERROR\x1b[0m"}
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, "%s 2026-12-04T19:%02d:%02dZ \x1b[1mapi\x1b[0m GET /v1/items/%d status=\x1b[36m%d\x1b[0m took=%dms\r\n",
			levels[i%3], i/60%60, i%60, i, 200+i%5, i%977)
	}
	return b
}

// fullScreenOutput is what top redraws: the cursor put on each row, the row
// rewritten, the rest of it erased, some rows highlighted.
func fullScreenOutput(n, cols, rows int) []byte {
	var b []byte
	for frame := 0; len(b) < n; frame++ {
		b = append(b, "\x1b[?25l\x1b[H"...)
		b = fmt.Appendf(b, "top - 19:%02d:%02d up 3 days,  load average: 0.%02d, 0.41, 0.39\x1b[K\r\n", frame/60%60, frame%60, frame%100)
		b = fmt.Appendf(b, "Tasks: %d total,   1 running, 211 sleeping\x1b[K\r\n", 212+frame%3)
		b = append(b, "\x1b[7m    PID USER      PR  NI    VIRT    RES  %CPU  %MEM     TIME+ COMMAND\x1b[m\x1b[K"...)
		for r := 4; r <= rows; r++ {
			b = fmt.Appendf(b, "\x1b[%d;1H", r)
			if r == 4 {
				b = append(b, "\x1b[1m"...)
			}
			line := fmt.Sprintf("%7d root      20   0 %7d %6d %5.1f %5.1f %3d:%02d.%02d proc-%d",
				1000+r*7+frame%11, 100000+r*frame%9999, 5000+r*13, float64((r*frame)%1000)/10, float64(r%50)/10, r, frame%60, frame%100, r)
			if len(line) > cols {
				line = line[:cols]
			}
			b = append(b, line...)
			if r == 4 {
				b = append(b, "\x1b[m"...)
			}
			b = append(b, "\x1b[K"...)
		}
		b = append(b, "\x1b[J\x1b[?25h"...)
	}
	return b
}

func benchScreen(b *testing.B, data []byte) {
	s := New(80, 24, nil)
	defer s.Close()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for p := data; len(p) > 0; {
			n := min(len(p), benchChunk)
			_, _ = s.Write(p[:n])
			p = p[n:]
		}
		_ = s.Text()
	}
}

func BenchmarkScreenWriteScrolling(b *testing.B) { benchScreen(b, scrollingOutput(256<<10)) }

// BenchmarkScreenWriteScrollingReadEach reads the screen after every write,
// as a model polling all the time would: the output held back is drawn 4 KiB
// at a time, a screenful of lines scrolled for each.
func BenchmarkScreenWriteScrollingReadEach(b *testing.B) {
	data := scrollingOutput(256 << 10)
	s := New(80, 24, nil)
	defer s.Close()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for p := data; len(p) > 0; {
			n := min(len(p), benchChunk)
			_, _ = s.Write(p[:n])
			_ = s.Text()
			p = p[n:]
		}
	}
}
func BenchmarkScreenWriteColored(b *testing.B) { benchScreen(b, coloredOutput(256<<10)) }
func BenchmarkScreenWriteFullScreen(b *testing.B) {
	benchScreen(b, fullScreenOutput(256<<10, 80, 24))
}

// BenchmarkVTDefault is x/vt as it comes, for comparison: scrollback of
// 10,000 lines on both screens, every byte through the parser as written.
func BenchmarkVTDefault(b *testing.B) {
	for _, w := range []struct {
		name string
		data []byte
	}{
		{"Scrolling", scrollingOutput(256 << 10)},
		{"Colored", coloredOutput(256 << 10)},
		{"FullScreen", fullScreenOutput(256<<10, 80, 24)},
	} {
		b.Run(w.name, func(b *testing.B) {
			e := vt.NewEmulator(80, 24)
			go func() { _, _ = io.Copy(io.Discard, e) }()
			defer e.Close()
			b.SetBytes(int64(len(w.data)))
			for b.Loop() {
				for p := w.data; len(p) > 0; {
					n := min(len(p), benchChunk)
					_, _ = e.Write(p[:n])
					p = p[n:]
				}
				_ = e.String()
			}
		})
	}
}
