package mcpserver

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
)

// Draining (docs/spec.md §15.3): a server about to stop takes no new
// sessions but lets the ones it has finish their work. [Server.Drain]
// turns /readyz to 503 and refuses a request that would open a session
// (one without an Mcp-Session-Id) with 503; the sessions it has keep
// calling. [Server.CallsRunning] says when their calls are done;
// [Server.AbortCalls] cuts the calls still running when the time is up, so
// that each returns `Error: command aborted` to its client before the
// sessions end.

// drainingBody is the body of the 503 a new session gets while the server
// drains (exact, docs/spec.md §15.3).
const drainingBody = "this server is shutting down and accepts no new sessions; connect again to reach another"

// calls tracks the tool calls in flight, to wait for and to cut them.
type calls struct {
	draining atomic.Bool
	mu       sync.Mutex
	next     uint64
	cancels  map[uint64]context.CancelFunc
	aborted  bool // AbortCalls was called: later calls are cut at once
}

// begin registers a call: its context is cancelled by AbortCalls, or at
// once after it; end must be called when it returned.
func (c *calls) begin(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	if c.aborted {
		cancel()
	}
	if c.cancels == nil {
		c.cancels = make(map[uint64]context.CancelFunc)
	}
	c.next++
	id := c.next
	c.cancels[id] = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.cancels, id)
		c.mu.Unlock()
		cancel()
	}
}

// Drain stops taking new sessions (see above); it cannot be undone.
func (s *Server) Drain() { s.calls.draining.Store(true) }

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.calls.draining.Load() }

// CallsRunning counts the tool calls in flight, in all sessions.
func (s *Server) CallsRunning() int {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return len(s.calls.cancels)
}

// AbortCalls cancels every call in flight, and every call that arrives
// after it (the sessions are about to end: a command started now would
// run for a client that gets no result): a foreground command is killed
// and its call returns `Error: command aborted`. It cannot be undone.
func (s *Server) AbortCalls() {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	s.calls.aborted = true
	for _, cancel := range s.calls.cancels {
		cancel()
	}
}

// Sessions counts the MCP sessions open now.
func (s *Server) Sessions() int { return s.openSessions() }

// refuseWhileDraining answers 503 to a request that would open a session
// while the server drains.
func (s *Server) refuseWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Draining() && r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Connection", "close")
			http.Error(w, drainingBody, http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// healthz answers 200 while the process serves.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers 200 while the server takes new sessions, 503 while it
// drains.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.Draining() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("draining\n"))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Health returns the handler of /healthz and /readyz (and /metrics when
// metrics is not nil, behind the token unless noAuth), for a listener of
// its own; [Server.HealthServer] serves it with limits on connections.
func (s *Server) Health(metrics http.Handler, token string, noAuth bool) http.Handler {
	mux := http.NewServeMux()
	s.healthRoutes(mux, metrics, token, noAuth, nil)
	return mux
}

// healthRoutes adds the health endpoints, which need no token, and
// /metrics, which does unless noAuth. A /metrics request that passed the
// token check tells g (which may be nil) that its connection is
// authenticated, so a scraper keeps it alive.
func (s *Server) healthRoutes(mux *http.ServeMux, metrics http.Handler, token string, noAuth bool, g *connGuard) {
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	if metrics == nil {
		return
	}
	if !noAuth {
		inner := metrics
		metrics = bearer(token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			authenticated(w, r, g)
			inner.ServeHTTP(w, r)
		}))
	}
	mux.Handle("GET /metrics", metrics)
}
