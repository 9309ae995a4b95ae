package ssh

// The connection pool: connections dialled lazily, a channel per command,
// a new connection when the server refuses a channel (sshd's MaxSessions
// is 10 by default), keep-alives, and a connection declared lost as soon
// as it drops or stops answering.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// conn is one connection of the pool. Its goroutines, started by
// pool.add:
//
//   - the waiter: client.Wait, then fail (the transport ended: a closed
//     or reset TCP connection, a killed sshd);
//   - the keeper: a keep-alive every keepalive, failing the connection
//     when one goes unanswered for 3 intervals (a half-open connection
//     sends no reset).
//
// Both end once lost is closed, which fail does, and which closes the
// client.
type conn struct {
	p      *pool
	client *gossh.Client
	login  *login
	lost   chan struct{} // closed once the connection is gone
	once   sync.Once
	err    error // why it was lost; set before lost closes

	// Under p.mu.
	open  int // channels in use
	limit int // channels the server allows at once, once it refused one; 0 while unknown
}

// fail ends the connection for good: every channel on it fails, the pool
// forgets it, and a later command dials a new one.
func (c *conn) fail(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.lost)
		_ = c.client.Close()
		c.p.forget(c)
	})
}

// isLost reports whether the connection is gone.
func (c *conn) isLost() bool {
	select {
	case <-c.lost:
		return true
	default:
		return false
	}
}

// alive asks the server for a keep-alive's answer and fails the
// connection when none can come. A channel that ends without an exit
// status may be the first sign of a transport that just ended (its
// channels close before the waiter learns it); this tells the two apart.
// On a half-open connection the keeper's guard bounds the wait.
func (c *conn) alive() bool {
	if _, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		c.fail(fmt.Errorf("keep-alive: %w", err))
		return false
	}
	return true
}

// errUnanswered is why a connection that stopped answering was dropped.
var errUnanswered = errors.New("keep-alives unanswered for 3 intervals")

// keep sends keep-alives until the connection is lost. A keep-alive that
// gets no answer (any answer: sshd refuses the request, which is one)
// within 3 intervals fails the connection.
func (c *conn) keep(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.lost:
			return
		case <-t.C:
		}
		guard := time.AfterFunc(3*interval, func() { c.fail(errUnanswered) })
		_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
		guard.Stop()
		if err != nil {
			c.fail(fmt.Errorf("keep-alive: %w", err))
			return
		}
	}
}

// pool holds the connections to one host.
type pool struct {
	t         *target
	max       int
	keepalive time.Duration
	log       *slog.Logger

	mu      sync.Mutex
	conns   []*conn
	dialing int
	changed chan struct{} // closed, and replaced, when a channel or a connection frees up or comes
	closed  bool
	wg      sync.WaitGroup // the connections' goroutines
}

func newPool(t *target, maxConns int, keepalive time.Duration, log *slog.Logger) *pool {
	return &pool{t: t, max: maxConns, keepalive: keepalive, log: log, changed: make(chan struct{})}
}

// errPoolClosed is returned once the executor closed.
var errPoolClosed = errors.New(Name + ": executor closed")

// errNoChannel is returned by a non-waiting acquire when every connection
// is at its limit and no more may be dialled.
var errNoChannel = errors.New("no SSH channel free: every connection is at the server's session limit")

// session is an open session channel on a connection.
type session struct {
	c    *conn
	ch   gossh.Channel
	reqs <-chan *gossh.Request
}

// acquire opens a session channel: on a connection with room, else on a
// new one while fewer than max are open or being dialled, else, when wait
// is set, once a channel frees up (ctx bounds the wait and the dial). A
// channel the server refuses teaches the pool that connection's limit.
func (p *pool) acquire(ctx context.Context, wait bool) (*session, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errPoolClosed
		}
		if c := p.roomy(); c != nil {
			c.open++
			p.mu.Unlock()
			if s, err := p.open(c); s != nil || err != nil {
				return s, err
			}
			continue // refused: try the next connection
		}
		if len(p.conns)+p.dialing < p.max {
			p.dialing++
			p.mu.Unlock()
			if err := p.dialOne(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if !wait {
			p.mu.Unlock()
			return nil, errNoChannel
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// roomy is the live connection with the fewest channels open that is
// below its limit, or nil. Called with p.mu held.
func (p *pool) roomy() *conn {
	var best *conn
	for _, c := range p.conns {
		if c.limit > 0 && c.open >= c.limit {
			continue
		}
		if best == nil || c.open < best.open {
			best = c
		}
	}
	return best
}

// open opens a session channel on c, whose slot the caller took. It
// returns nil, nil when the server refused the channel (the slot is given
// back and c's limit learnt) or c turned out lost: the caller tries again.
func (p *pool) open(c *conn) (*session, error) {
	ch, reqs, err := c.client.OpenChannel("session", nil)
	if err == nil {
		return &session{c: c, ch: ch, reqs: reqs}, nil
	}
	var refused *gossh.OpenChannelError
	p.mu.Lock()
	c.open--
	if errors.As(err, &refused) {
		// sshd's MaxSessions: this connection holds no more than what is
		// open on it now (at least one, so that it stays usable).
		c.limit = max(c.open, 1)
		p.log.Debug("ssh: the server refused a channel; using another connection", "host", p.t.host, "open", c.open, "reason", refused.Message)
	}
	p.notify()
	p.mu.Unlock()
	if refused == nil {
		c.fail(fmt.Errorf("open a channel: %w", err))
	}
	return nil, nil
}

// release gives back a channel's slot once the channel is closed on both
// sides (the server has freed its session then).
func (p *pool) release(c *conn) {
	p.mu.Lock()
	c.open--
	p.notify()
	p.mu.Unlock()
}

// dialOne dials a connection and adds it to the pool; the caller counted
// it in p.dialing.
func (p *pool) dialOne(ctx context.Context) error {
	client, login, err := p.t.dial(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialing--
	p.notify()
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	if p.closed {
		_ = client.Close()
		return errPoolClosed
	}
	c := &conn{p: p, client: client, login: login, lost: make(chan struct{})}
	p.conns = append(p.conns, c)
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		err := client.Wait()
		if err == nil {
			err = errors.New("the server closed the connection")
		}
		c.fail(err)
	}()
	go func() {
		defer p.wg.Done()
		c.keep(p.keepalive)
	}()
	return nil
}

// forget drops a lost connection from the pool.
func (p *pool) forget(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.conns {
		if x == c {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			break
		}
	}
	p.notify()
	if !p.closed {
		p.log.Warn("ssh: connection lost", "host", p.t.host, "err", c.err)
	}
}

// notify wakes the acquires waiting for a change. Called with p.mu held.
func (p *pool) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// close closes every connection and waits for their goroutines. Channels
// still open fail.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	conns := append([]*conn(nil), p.conns...)
	p.mu.Unlock()
	for _, c := range conns {
		c.fail(errPoolClosed)
	}
	p.wg.Wait()
}
