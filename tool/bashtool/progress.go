package bashtool

import (
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/redact"
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
	// text makes output model-facing text ([Tool.modelPart]): s, with
	// before, the output just before it, as the redaction's context.
	text func(before, s string) string

	mu    sync.Mutex
	bytes int64
	tail  []byte // the last bytes of output, both streams: the line's, and context before them

	stop chan struct{}
	done chan struct{}
}

// progressTail is where the line is looked for; progressContext more
// bytes before it let the redaction find a secret that began there (the
// base64 lines of a private key, whose BEGIN line is further up).
const (
	progressTail    = 1 << 10
	progressContext = redact.Window
	progressKept    = progressTail + progressContext
)

func watchProgress(report tool.Progress, text func(before, s string) string) *progressWatch {
	w := &progressWatch{report: report, text: text, stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// observe is the executor's Observe hook.
func (w *progressWatch) observe(_ string, p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bytes += int64(len(p))
	if len(p) >= progressKept {
		w.tail = append(w.tail[:0], p[len(p)-progressKept:]...)
		return
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > progressKept {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-progressKept:]...)
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
		n, line := w.bytes, lastLine(w.tail, w.bytes > int64(min(len(w.tail), progressTail)), w.text)
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

// lastLine is the last non-empty line of the last progressTail bytes of
// tail made model-facing by text, with the bytes before them as context,
// at most maxProgressLine characters, as valid UTF-8. When those bytes
// were cut from longer output, their first line is a fragment: it is
// left out (docs/spec.md §14).
func lastLine(tail []byte, cut bool, text func(before, s string) string) string {
	at := max(0, len(tail)-progressTail)
	for at > 0 && at < len(tail) && !utf8.RuneStart(tail[at]) {
		at++ // a character is not split between context and line
	}
	lines := strings.Split(text(capture.Text(tail[:at]), capture.Text(tail[at:])), "\n")
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
