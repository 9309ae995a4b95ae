package tasks

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/session"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a producer for the tests: a stream kind (with Read) or a
// final-output kind (without). It ends when the test calls finish or, by
// default, when it is cancelled (as killed).
type fake struct {
	stream bool
	done   chan Outcome
	once   sync.Once

	mu        sync.Mutex
	unread    string
	reasons   []string
	cancelErr error
	onCancel  func(reason string)
}

func newFake(stream bool) *fake {
	f := &fake{stream: stream, done: make(chan Outcome, 1)}
	f.onCancel = func(string) { f.finish(Outcome{Status: Killed, Detail: "signal: SIGTERM"}) }
	return f
}

func (f *fake) run() (Hooks, error) {
	h := Hooks{Cancel: f.cancel, Done: f.done}
	if f.stream {
		h.Read = f.read
	}
	return h, nil
}

func (f *fake) cancel(reason string) error {
	f.mu.Lock()
	f.reasons = append(f.reasons, reason)
	hook := f.onCancel
	f.mu.Unlock()
	if hook != nil {
		hook(reason)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cancelErr
}

func (f *fake) cancelReasons() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reasons...)
}

func (f *fake) write(s string) {
	f.mu.Lock()
	f.unread += s
	f.mu.Unlock()
}

func (f *fake) read() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.unread
	f.unread = ""
	return s
}

// finish delivers o; only the first call counts.
func (f *fake) finish(o Outcome) { f.once.Do(func() { f.done <- o }) }

// closeDone closes Done without an outcome.
func (f *fake) closeDone() { f.once.Do(func() { close(f.done) }) }

// newService returns a service with tools attached, closed at cleanup.
func newService(t *testing.T, cfg Config) *Service {
	t.Helper()
	svc := New(cfg)
	detach := svc.AttachTools()
	t.Cleanup(func() {
		svc.Close()
		detach()
	})
	return svc
}

func start(t *testing.T, svc *Service, kind, label string, owner *session.Session, f *fake) Snapshot {
	t.Helper()
	snap, err := svc.Start(Spec{Kind: kind, Label: label, Owner: owner, Run: f.run})
	if err != nil {
		t.Fatalf("Start(%s): %v", kind, err)
	}
	return snap
}

// settled blocks until task id has settled (its listeners may still run).
func settled(t *testing.T, svc *Service, id string) {
	t.Helper()
	svc.mu.Lock()
	tk := svc.tasks[id]
	svc.mu.Unlock()
	if tk == nil {
		t.Fatalf("no task %s", id)
	}
	<-tk.done
}

// captureLogs sends slog's default logger to a buffer for the test.
func captureLogs(t *testing.T) *lockedBuffer {
	t.Helper()
	buf := &lockedBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return buf
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
