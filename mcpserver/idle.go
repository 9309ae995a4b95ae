package mcpserver

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// firstCalls ends an HTTP session that makes no tool call within a time of
// its initialize (serve.idleSessionMs, docs/spec.md §6.1): a client that
// opens sessions and leaves them (a probe, a crashed agent that never sent
// DELETE) would hold a serve.maxSessions slot for the whole idle timeout.
// A session that called once is left to the idle timeout.
type firstCalls struct {
	after time.Duration
	log   func(msg string, args ...any)
	name  func(id string) string        // a session's name in logs (sessionName)
	open  func(*mcp.ServerSession) bool // the session has not ended yet

	mu     sync.Mutex
	timers map[*mcp.ServerSession]*time.Timer
}

// middleware starts a session's timer when its initialize succeeds and
// stops it at its first tools/call.
func (f *firstCalls) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return next(ctx, method, req)
		}
		switch method {
		case "tools/call":
			f.called(ss)
		case "initialize":
			res, err := next(ctx, method, req)
			if err == nil {
				f.initialized(ss)
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// initialized starts ss's timer.
func (f *firstCalls) initialized(ss *mcp.ServerSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timers[ss] != nil {
		return
	}
	f.timers[ss] = time.AfterFunc(f.after, func() { f.expire(ss) })
}

// called stops ss's timer for good: its first call has come.
func (f *firstCalls) called(ss *mcp.ServerSession) {
	f.mu.Lock()
	t := f.timers[ss]
	delete(f.timers, ss)
	f.mu.Unlock()
	if t != nil {
		t.Stop()
	}
}

// expire ends ss, unless its first call came as the timer fired or it
// has ended already (a DELETE).
func (f *firstCalls) expire(ss *mcp.ServerSession) {
	f.mu.Lock()
	_, waiting := f.timers[ss]
	delete(f.timers, ss)
	f.mu.Unlock()
	if !waiting || !f.open(ss) {
		return
	}
	f.log("ending a session that made no call", "session", f.name(ss.ID()), "after", f.after.String())
	_ = ss.Close()
}

// expireUncalled makes sessions end that make no tool call within after
// of their initialize ([HTTPOptions.FirstCallTimeout]). The first handler
// that asks for it sets the time, for every handler of the server.
func (s *Server) expireUncalled(after time.Duration) {
	s.uncalled.Do(func() {
		f := &firstCalls{after: after, log: s.log.Info, name: s.sessionName, open: s.isOpen, timers: make(map[*mcp.ServerSession]*time.Timer)}
		s.mcp.AddReceivingMiddleware(f.middleware)
	})
}

// isOpen reports whether ss is one of the SDK's sessions still.
func (s *Server) isOpen(ss *mcp.ServerSession) bool {
	for open := range s.mcp.Sessions() {
		if open == ss {
			return true
		}
	}
	return false
}
