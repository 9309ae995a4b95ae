package bashtool

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/tool"
)

// progressEvery is the least time between two progress reports (docs/spec.md
// §6.4: at most every 250 ms).
const progressEvery = 250 * time.Millisecond

// maxProgressLine bounds the message: the last non-empty output line.
const maxProgressLine = 200

// progressWatch reports a foreground run's progress: bytes of output so
// far (monotonic) and the last non-empty line, at most every
// progressEvery, and only when something changed. Its goroutine ends when
// stop is called.
type progressWatch struct {
	report tool.Progress
	// text makes output model-facing text ([Tool.modelPart]).
	text func(string) string

	mu    sync.Mutex
	bytes int64
	tail  []byte // the last bytes of output, both streams, for the line

	stop chan struct{}
	done chan struct{}
}

const progressTail = 1 << 10

func watchProgress(report tool.Progress, text func(string) string) *progressWatch {
	w := &progressWatch{report: report, text: text, stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// observe is the executor's Observe hook.
func (w *progressWatch) observe(_ string, p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bytes += int64(len(p))
	if len(p) >= progressTail {
		w.tail = append(w.tail[:0], p[len(p)-progressTail:]...)
		return
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > progressTail {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-progressTail:]...)
	}
}

func (w *progressWatch) loop() {
	defer close(w.done)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	var sent int64
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		n, line := w.bytes, lastLine(w.tail, w.bytes > int64(len(w.tail)), w.text)
		w.mu.Unlock()
		if n != sent {
			sent = n
			w.report(float64(n), line)
		}
	}
}

// close stops the reports and waits for the goroutine.
func (w *progressWatch) close() {
	close(w.stop)
	<-w.done
}

// lastLine is the last non-empty line of tail made model-facing by text,
// at most maxProgressLine characters, as valid UTF-8. When tail was cut
// from longer output, its first line is a fragment: it is left out, as a
// secret cut there would have lost the prefix redaction finds it by
// (docs/spec.md §14).
func lastLine(tail []byte, cut bool, text func(string) string) string {
	lines := strings.Split(text(capture.Text(tail)), "\n")
	first := 0
	if cut {
		first = 1
	}
	for i := len(lines) - 1; i >= first; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			if utf8.RuneCountInString(l) > maxProgressLine {
				l = string([]rune(l)[:maxProgressLine])
			}
			return l
		}
	}
	return ""
}
