package tasktool_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
)

// newsProducer is a stream producer that signals each write.
type newsProducer struct {
	producer
	nmu  sync.Mutex
	news chan struct{}
}

func (p *newsProducer) run() (tasks.Hooks, error) {
	h, err := p.producer.run()
	p.news = make(chan struct{})
	h.Changed = func() <-chan struct{} {
		p.nmu.Lock()
		defer p.nmu.Unlock()
		return p.news
	}
	return h, err
}

func (p *newsProducer) say(s string) {
	p.write(s)
	p.nmu.Lock()
	close(p.news)
	p.news = make(chan struct{})
	p.nmu.Unlock()
}

// TestWaitFor: task_output with waitFor returns as soon as the new output
// (kept across reads) matches; without a match, at the timeout, with the
// exact no-match line, which is a marker opening.
func TestWaitFor(t *testing.T) {
	r := newRig(t, config.Tasks{})
	s := session.New("s", "")
	p := &newsProducer{producer: producer{stream: true}}
	snap, err := r.svc.Start(tasks.Spec{Kind: "bash", Label: "server", Owner: s, Run: p.run})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		p.say("starting\n")
		time.Sleep(50 * time.Millisecond)
		p.say("listening on :8080\n")
	}()
	res := r.call(s, "task_output", `{"task_id": "`+snap.ID+`", "waitFor": "listening on :\\d+", "timeout_ms": `+ms(proctest.Scale(10*time.Second))+`}`)
	if want := "starting\nlistening on :8080\n[status: running]"; res.Text() != want {
		t.Fatalf("got %q, want %q", res.Text(), want)
	}
	res = r.call(s, "task_output", `{"task_id": "`+snap.ID+`", "waitFor": "never", "timeout_ms": 100}`)
	text := res.Text()
	i := strings.Index(text, "[waitFor: no match after ")
	if !strings.HasPrefix(text, "(no new output)\n") || i < 0 || !strings.HasSuffix(text, " ms]\n[status: running]") || !marker.Is(text[i:]) {
		t.Fatalf("no match: %q", text)
	}
	res = r.call(s, "task_output", `{"task_id": "`+snap.ID+`", "waitFor": "("}`)
	if want := "Error: invalid waitFor: error parsing regexp: missing closing ): `(`"; res.Text() != want {
		t.Errorf("bad pattern: %q", res.Text())
	}
	res = r.call(s, "task_output", `{"task_id": "`+snap.ID+`", "screen": true}`)
	if want := "Error: task " + snap.ID + " has no terminal: only a bash task started with tty: true takes input"; res.Text() != want {
		t.Errorf("screen of a task without a terminal: %q", res.Text())
	}
	// A flood while waiting: the result keeps a head and a tail.
	stop := make(chan struct{})
	go func() {
		line := strings.Repeat("y", 99) + "\n"
		for {
			select {
			case <-stop:
				return
			default:
				p.say(strings.Repeat(line, 1000))
				time.Sleep(time.Millisecond)
			}
		}
	}()
	res = r.call(s, "task_output", `{"task_id": "`+snap.ID+`", "waitFor": "NOPE", "timeout_ms": 300}`)
	close(stop)
	if text := res.Text(); len(text) > 70<<10 || !strings.Contains(text, " bytes omitted …]\n") || !strings.Contains(text, "[waitFor: no match after ") {
		t.Errorf("a flood's wait returned %d bytes, ending %q", len(text), text[max(0, len(text)-200):])
	}
	p.finish(tasks.Outcome{Status: tasks.Completed, Detail: "exit code: 0"})
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
