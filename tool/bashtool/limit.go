package bashtool

import (
	"strconv"
	"sync"

	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// tooManyInSession and tooManyOverall are the texts of a foreground call
// over its limit (exact, docs/spec.md §3.2).
func tooManyInSession(limit int) string {
	return "too many commands running in this session (limit " + strconv.Itoa(limit) + ")"
}

func tooManyOverall(limit int) string {
	return "too many commands running on this server (limit " + strconv.Itoa(limit) + ")"
}

// foregroundLimit counts the foreground commands that run, per session
// and in all, and refuses one over either limit: each command holds
// pipes, goroutines and a thread waiting for it, so a client that fires
// hundreds at once must not take the server down. Calls without a
// session count as one session.
type foregroundLimit struct {
	perSession, overall int

	mu        sync.Mutex
	all       int
	bySession map[*session.Session]int
}

// acquire takes a slot for a command of s, or returns the error result's
// error; release gives it back.
func (l *foregroundLimit) acquire(s *session.Session) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.bySession[s] >= l.perSession:
		return nil, &tool.Error{Code: tool.CodeFailed, Message: tooManyInSession(l.perSession)}
	case l.all >= l.overall:
		return nil, &tool.Error{Code: tool.CodeFailed, Message: tooManyOverall(l.overall)}
	}
	if l.bySession == nil {
		l.bySession = make(map[*session.Session]int)
	}
	l.bySession[s]++
	l.all++
	return func() { l.release(s) }, nil
}

func (l *foregroundLimit) release(s *session.Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all--
	if l.bySession[s]--; l.bySession[s] == 0 {
		delete(l.bySession, s) // nothing kept for a session that is done
	}
}
