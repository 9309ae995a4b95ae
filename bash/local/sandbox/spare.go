//go:build linux

package sandbox

// A session's network (its namespace, and with a network map the route,
// nftables rules and gateway sockets in it) costs ~2.5 ms to make, which a
// session's first command would wait for. One is made ahead, off any
// command's path: when the executor's start-up is over (Prepare), and
// again a while after each one is taken. It is only a namespace with
// sockets nobody else can reach: a scope that takes it starts its own
// gateway on them, with its own rules and audit.

import (
	"sync"
	"time"
)

// spareNet holds the session network made ahead.
type spareNet struct {
	mu     sync.Mutex
	net    *sessionNet
	timer  *time.Timer
	making chan struct{} // closed when the one being made is there; nil when none is
	wanted bool          // Prepare was called: the executor makes spares
	closed bool
}

// Prepare makes a session network ahead, for the next scope, where
// sessions have one; it returns at once.
func (s *Sandbox) Prepare() {
	s.spare.mu.Lock()
	s.spare.wanted = true
	s.spare.mu.Unlock()
	s.spare.fill(s)
}

// Prepared waits until a session network being made ahead is there.
func (s *Sandbox) Prepared() {
	s.spare.mu.Lock()
	making := s.spare.making
	s.spare.mu.Unlock()
	if making != nil {
		<-making
	}
}

// fill makes the spare in the background unless there is one, or one is
// being made.
func (sp *spareNet) fill(s *Sandbox) {
	if s.net != netSetns && s.net != netHolder {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.closed || sp.making != nil || sp.net != nil {
		return
	}
	done := make(chan struct{})
	sp.making = done
	go func() {
		defer close(done)
		n, err := s.makeNet()
		sp.mu.Lock()
		defer sp.mu.Unlock()
		sp.making = nil
		if err != nil || sp.closed {
			n.close() // a failure shows when a scope makes its own
			return
		}
		sp.net = n
	}()
}

// take returns the spare, once one being made is there; nil without
// one. Where spares are made (Prepare was called), the next is made
// refillDelay later.
func (sp *spareNet) take(s *Sandbox) *sessionNet {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for sp.making != nil {
		making := sp.making
		sp.mu.Unlock()
		<-making
		sp.mu.Lock()
	}
	n := sp.net
	sp.net = nil
	if sp.wanted && !sp.closed && sp.timer == nil {
		sp.timer = time.AfterFunc(refillDelay, func() {
			sp.mu.Lock()
			sp.timer = nil
			sp.mu.Unlock()
			sp.fill(s)
		})
	}
	return n
}

// refillDelay is how long after a scope took the spare the next is made.
const refillDelay = 50 * time.Millisecond

// close ends the spare, and one being made.
func (sp *spareNet) close() {
	sp.mu.Lock()
	sp.closed = true
	if sp.timer != nil {
		sp.timer.Stop()
	}
	n := sp.net
	sp.net = nil
	making := sp.making
	sp.mu.Unlock()
	if making != nil {
		<-making // closes what it made: closed is set
	}
	n.close()
}

// makeNet makes a session's network, with the gateway's sockets where the
// network is a map.
func (s *Sandbox) makeNet() (*sessionNet, error) {
	n, err := s.newSessionNet()
	if err != nil || n == nil || s.netMap == nil || n.socks != nil || n.fd < 0 {
		return n, err
	}
	err = inNetns(n.fd, func() error {
		var err error
		n.socks, err = setupNetns(n.fd)
		return err
	})
	if err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}
