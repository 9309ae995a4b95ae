package tasktool

// Waiting for what a task shows (docs/spec.md §4.2a): task_input and
// task_output return as soon as the new output, or with screen the
// rendered screen, matches waitFor, not after a fixed delay. Without
// waitFor, task_input returns once the output has been quiet a while.

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// The waits' defaults: a task_input without waitFor returns once output
// has been quiet for quietFor, or after quietMax.
const (
	quietFor = 300 * time.Millisecond
	quietMax = 5 * time.Second
	// pollEvery is how often a wait looks again at a task whose producer
	// cannot signal new output (a yielded command).
	pollEvery = 50 * time.Millisecond
)

// noMatchLine is the line that says waitFor did not match (exact).
func noMatchLine(d time.Duration) string {
	return marker.WaitForOpen + "no match after " + strconv.FormatInt(d.Milliseconds(), 10) + " ms]"
}

// compileWaitFor compiles the waitFor argument; "" is no pattern.
func compileWaitFor(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, &tool.Error{Code: tool.CodeInvalidArgs, Message: "invalid waitFor: " + err.Error()}
	}
	return re, nil
}

// watch is one wait on a task: what it reads, and until when.
type watch struct {
	svc    *tasks.Service
	caller *session.Session
	id     string
	start  time.Time
}

// seen is what a wait returns: the text read (the new output, or the
// screen), whether waitFor matched, and the snapshot last read.
type seen struct {
	text    string
	matched bool
	waited  time.Duration
	snap    tasks.Snapshot
}

// next waits until the task has news or finishes, ctx ends or until
// passes; false when the wait is over without news.
func (w watch) next(ctx context.Context, news, done <-chan struct{}, until time.Time) bool {
	d := time.Until(until)
	if d <= 0 {
		return false
	}
	if news == nil {
		d = min(d, pollEvery)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-news:
	case <-done:
	case <-ctx.Done():
		return false
	case <-timer.C:
		return news == nil && time.Now().Before(until)
	}
	return true
}

// output reads the new output until it matches re, the task ends, or
// timeout passes; the reads are kept, bounded (kept), and each is matched
// with the end of the one before, so a match across two reads is found.
func (w watch) output(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (seen, error) {
	until := w.start.Add(timeout)
	var s seen
	var k kept
	for {
		news, done, err := w.svc.Changed(w.caller, w.id)
		if err != nil {
			return s, err
		}
		text, snap, err := w.svc.Read(w.caller, w.id)
		if err != nil {
			return s, err
		}
		s.snap = snap
		s.matched = re.MatchString(k.end() + text)
		k.add(text)
		if s.matched || snap.Status.Terminal() || !w.next(ctx, news, done, until) {
			s.text, s.waited = k.text(), time.Since(w.start)
			return s, nil
		}
	}
}

// What a wait keeps of the output it reads: its first keptHead and last
// keptTail bytes (the model reads a wait's result as a call's, bounded),
// and matchBack bytes of one read to match with the next.
const (
	keptHead  = 16 << 10
	keptTail  = 48 << 10
	matchBack = 4 << 10
)

// kept is the output a wait read: a head, a tail, and what was left out
// between them.
type kept struct {
	head, tail string
	omitted    int64
}

func (k *kept) add(text string) {
	if room := keptHead - len(k.head); room > 0 && k.omitted == 0 && k.tail == "" {
		n := validStart(text, min(room, len(text))) // whole characters in each
		k.head, text = k.head+text[:n], text[n:]
	}
	k.tail += text
	if over := len(k.tail) - keptTail; over > 0 {
		cut := validStart(k.tail, over)
		k.tail, k.omitted = k.tail[cut:], k.omitted+int64(cut)
	}
}

// end is what ends the output kept, for a match across reads.
func (k *kept) end() string {
	all := k.head + k.tail
	if len(all) <= matchBack {
		return all
	}
	return all[validStart(all, len(all)-matchBack):]
}

func (k *kept) text() string {
	if k.omitted == 0 {
		return k.head + k.tail
	}
	head := k.head
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return head + marker.Omitted(k.omitted) + "\n" + k.tail
}

// validStart is the first character boundary of s at or after i.
func validStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// screen looks at the screen until it matches re, the task ends, or
// timeout passes.
func (w watch) screen(ctx context.Context, re *regexp.Regexp, timeout time.Duration) (seen, error) {
	until := w.start.Add(timeout)
	for {
		news, done, err := w.svc.Changed(w.caller, w.id)
		if err != nil {
			return seen{}, err
		}
		term, snap, err := w.svc.Terminal(w.caller, w.id)
		if err != nil {
			return seen{}, err
		}
		s := seen{text: term.Screen(), snap: snap}
		if s.matched = re == nil || re.MatchString(s.text); s.matched || snap.Status.Terminal() || !w.next(ctx, news, done, until) {
			s.waited = time.Since(w.start)
			return s, nil
		}
	}
}

// quiet waits until the task's output has been quiet for quietFor, it
// ends, or max passes, then reads its new output.
func (w watch) quiet(ctx context.Context, max time.Duration) (seen, error) {
	until := w.start.Add(max)
	for {
		news, done, err := w.svc.Changed(w.caller, w.id)
		if err != nil {
			return seen{}, err
		}
		limit := time.Now().Add(quietFor)
		if limit.After(until) {
			limit = until
		}
		if isDone(done) || !w.next(ctx, news, done, limit) {
			break
		}
	}
	text, snap, err := w.svc.Read(w.caller, w.id)
	return seen{text: text, snap: snap, matched: true, waited: time.Since(w.start)}, err
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// seenText renders what a wait saw: the text, the no-match line when
// waitFor did not match, then the status line.
func seenText(s seen, empty string) string {
	text := s.text
	if text == "" {
		text = empty
	}
	if text[len(text)-1] != '\n' {
		text += "\n"
	}
	if !s.matched {
		text += noMatchLine(s.waited) + "\n"
	}
	return text + StatusLine(s.snap)
}
