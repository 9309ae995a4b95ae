package mcpserver

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// The timeouts of [Server.HTTPServer]'s connections.
const (
	// readHeaderTimeout bounds the reading of a request's headers, so a
	// client that opens a connection and sends nothing (or a byte a
	// second) holds it for this long at most.
	readHeaderTimeout = 10 * time.Second
	// defaultReadTimeout bounds the reading of a whole request, its body
	// included. It does not bound the response, which streams for as long
	// as its command runs: net/http lifts the deadline once the body has
	// been read.
	defaultReadTimeout = time.Minute
	// idleTimeout ends an authenticated keep-alive connection that waits
	// this long for its next request. An unauthenticated one is closed as
	// soon as it is idle.
	idleTimeout = 2 * time.Minute
	// DefaultMaxPendingConns bounds the connections that have not yet sent
	// a request with the token.
	DefaultMaxPendingConns = 256
)

// connGuard tracks the connections of an http.Server that no request has
// authenticated yet ("pending"), so that strangers cannot exhaust the
// server's file descriptors: a pending connection is closed once it is
// idle (after a 401 or a 404), and when more than max are pending the
// oldest is closed to make room for the newest, so a client that connects
// after a flood of idle connections is still served. A connection is
// authenticated by the first request that passes the bearer check (any
// request reaching the endpoint, without a token).
type connGuard struct {
	max int

	mu      sync.Mutex
	pending list.List // of net.Conn, oldest first
	where   map[net.Conn]*list.Element
}

func newConnGuard(max int) *connGuard {
	if max <= 0 {
		max = DefaultMaxPendingConns
	}
	return &connGuard{max: max, where: make(map[net.Conn]*list.Element)}
}

// connKey is the context key of a request's connection.
type connKey struct{}

// connContext is the http.Server's ConnContext: it records each request's
// connection, for authenticated.
func (g *connGuard) connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connState is the http.Server's ConnState hook.
func (g *connGuard) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		if evicted := g.add(c); evicted != nil {
			_ = evicted.Close()
		}
	case http.StateIdle:
		if g.isPending(c) {
			_ = c.Close() // no second try on the same connection
		}
	case http.StateHijacked, http.StateClosed:
		g.forget(c)
	}
}

// add records c as pending and returns the oldest pending connection when
// there are now more than max.
func (g *connGuard) add(c net.Conn) (evicted net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.where[c] = g.pending.PushBack(c)
	if g.pending.Len() <= g.max {
		return nil
	}
	oldest := g.pending.Front()
	g.pending.Remove(oldest)
	evicted = oldest.Value.(net.Conn)
	delete(g.where, evicted)
	return evicted
}

func (g *connGuard) isPending(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.where[c]
	return ok
}

// forget stops tracking c (it was authenticated, closed or hijacked).
func (g *connGuard) forget(c net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.where[c]; ok {
		g.pending.Remove(e)
		delete(g.where, c)
	}
}

// closeUnauthenticated answers every request of a pending connection with
// "Connection: close" unless the request authenticates (authenticated
// takes the header back): the server closes such a connection after the
// response, and a client told so does not send its next request on a
// connection that is being closed.
func (g *connGuard) closeUnauthenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok && g.isPending(c) {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// authenticated marks the connection of r as authenticated: it is no
// longer pending, and stays open for the next request.
func authenticated(w http.ResponseWriter, r *http.Request, g *connGuard) {
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok && g != nil {
		g.forget(c)
		w.Header().Del("Connection")
	}
}
