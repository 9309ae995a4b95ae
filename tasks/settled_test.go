package tasks

import (
	"sync"
	"testing"

	"github.com/dsh-go/dsh/session"
)

// TestOnSettledSeesEveryEnd: unlike the finish listeners, the settled
// listeners see a task that ended by itself, by a kill, by its owner's end
// and by Close, with its Exit facts.
func TestOnSettledSeesEveryEnd(t *testing.T) {
	svc := New(Config{})
	detach := svc.AttachTools()
	defer detach()
	var mu sync.Mutex
	seen := map[string]Snapshot{}
	svc.OnSettled(func(s Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		seen[s.ID] = s
	})
	owner := session.New("o", "")
	code := 3
	byItself, killed, ownerEnd, closed := newFake(true), newFake(true), newFake(true), newFake(true)
	a := start(t, svc, "bash", "a", owner, byItself)
	b := start(t, svc, "bash", "b", owner, killed)
	c := start(t, svc, "bash", "c", owner, ownerEnd)
	d := start(t, svc, "bash", "d", nil, closed)
	if n := svc.Live(); n != 4 {
		t.Errorf("Live() = %d with four tasks running", n)
	}
	byItself.finish(Outcome{Status: Completed, Detail: "exit code: 3", Exit: Exit{Code: &code, StdoutBytes: 10, StderrBytes: 2}})
	settled(t, svc, a.ID)
	if _, _, err := svc.Kill(owner, b.ID); err != nil {
		t.Fatal(err)
	}
	settled(t, svc, b.ID)
	owner.End()
	svc.Close()
	if n := svc.Live(); n != 0 {
		t.Errorf("Live() = %d after Close", n)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, id := range []string{a.ID, b.ID, c.ID, d.ID} {
		s, ok := seen[id]
		if !ok || !s.Status.Terminal() || s.Finished.IsZero() {
			t.Errorf("task %s: settled listener saw %+v (%v)", id, s, ok)
		}
	}
	if e := seen[a.ID].Exit; e.Code == nil || *e.Code != 3 || e.StdoutBytes != 10 || e.StderrBytes != 2 || seen[a.ID].Owner != "o" {
		t.Errorf("task a: %+v", seen[a.ID])
	}
}

func TestOnSettledRemoved(t *testing.T) {
	svc := newService(t, Config{})
	calls := 0
	remove := svc.OnSettled(func(Snapshot) { calls++ })
	remove()
	f := newFake(true)
	s := start(t, svc, "bash", "x", nil, f)
	f.finish(Outcome{Status: Completed})
	settled(t, svc, s.ID)
	svc.Close() // the watcher has returned
	if calls != 0 {
		t.Errorf("a removed listener was called %d times", calls)
	}
}
