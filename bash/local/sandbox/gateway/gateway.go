package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Caller is the command a connection is attributed to: the session's
// command that started last among those still running.
type Caller struct {
	// ID is the call's or task's id, for the audit.
	ID string
	// Done is closed when the command has ended: a question about its
	// connection is withdrawn then. nil: never.
	Done <-chan struct{}
	// Ask asks the user whether the command may reach host:port; nil, or
	// an error, when nobody can be asked (askFallback applies).
	Ask func(ctx context.Context, host string, port int) (accepted bool, err error)
	// Refused records a refused connection for the call's result.
	Refused func(host string)
}

// Record is what the audit log keeps of one connection.
type Record struct {
	Caller   string
	Host     string
	Port     int
	Address  string // the address reached or refused; "" when none
	Decision string // Allow or Deny
	// Rule is what decided: "allow: RULE", "deny: RULE", "default: deny",
	// "ask:accepted", "ask:declined", "ask:dismissed", "askFallback: …",
	// "address: …" (an allowed name's address refused).
	Rule      string
	BytesUp   int64
	BytesDown int64
	Duration  time.Duration
}

// Config is what a session's gateway needs.
type Config struct {
	Rules *Rules
	Names *FakeIPs
	// Caller attributes a new connection; nil: none.
	Caller func() Caller
	// AskTimeout dismisses an unanswered ask; AskFallback ("allow" or
	// "deny") decides when nobody can be asked.
	AskTimeout  time.Duration
	AskFallback string
	// Audit is called once per connection, when it ends; may be nil.
	Audit func(Record)
	// Lookup resolves an allowed name on the host (default: the host's
	// resolver); Dial connects (default: a net.Dialer). For tests.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial   func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	Log    *slog.Logger
}

// Gateway decides and carries one session's connections. Make one with
// New, serve its listener and resolver, Close it with the session.
type Gateway struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	remembered map[string]bool // host:port → the user's answer
	asking     map[string]*pending
	conns      map[net.Conn]struct{}
	closed     bool
	lastWarn   time.Time // of accept failures, at most one a second
	// questions lets one question of the session be open at a time.
	questions chan struct{}
}

// MaxConns bounds a session's connections through the gateway, the
// commands' and the upstream ones together (two per connection made): a
// command cannot take dsh's file descriptors from the other sessions.
// Past it a new connection is reset at once and audited as refused.
const MaxConns = 2048

// pending is a question being asked: connections to the same host:port
// wait for its answer.
type pending struct {
	done    chan struct{}
	allowed bool
	rule    string
}

// dialTimeout bounds each connect to an allowed address.
const dialTimeout = 15 * time.Second

// New makes a gateway.
func New(cfg Config) *Gateway {
	if cfg.Lookup == nil {
		cfg.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.Dial == nil {
		d := &net.Dialer{Timeout: dialTimeout}
		cfg.Dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", a.String())
		}
	}
	if cfg.Caller == nil {
		cfg.Caller = func() Caller { return Caller{} }
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	g := &Gateway{cfg: cfg, remembered: map[string]bool{}, asking: map[string]*pending{}, conns: map[net.Conn]struct{}{},
		questions: make(chan struct{}, 1)}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g
}

// Serve accepts the connections the namespace redirects to l, and proxy
// clients, until l is closed or the gateway is.
func (g *Gateway) Serve(l *net.TCPListener) error {
	for {
		c, err := l.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || g.ctx.Err() != nil {
				return nil
			}
			// Out of fds, say: wait rather than spin; the session goes on.
			g.warnAccept(err)
			select {
			case <-time.After(50 * time.Millisecond):
			case <-g.ctx.Done():
				return nil
			}
			continue
		}
		switch g.admit(c) {
		case closed:
			c.Close()
			return nil
		case full:
			g.overLimit(c)
			continue
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			defer g.untrack(c)
			g.handle(c)
		}()
	}
}

// ServeDNS answers the namespace's lookups on pc until it is closed.
func (g *Gateway) ServeDNS(pc net.PacketConn) error {
	r := &Resolver{Names: g.cfg.Names, Refuse: g.cfg.Rules.Refused}
	return r.Serve(pc)
}

// Close ends every connection and question, and waits for them.
func (g *Gateway) Close() {
	g.mu.Lock()
	g.closed = true
	for c := range g.conns {
		c.Close()
	}
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
}

// admission is what admit decided.
type admission int

const (
	admitted admission = iota
	closed
	full
)

// admit tracks a connection the command made, unless the gateway is
// closed or the session has MaxConns.
func (g *Gateway) admit(c net.Conn) admission {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed:
		return closed
	case len(g.conns) >= MaxConns:
		return full
	}
	g.conns[c] = struct{}{}
	return admitted
}

// track tracks an upstream connection; false when the gateway closed.
func (g *Gateway) track(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.conns[c] = struct{}{}
	return true
}

// overLimit resets a connection past MaxConns and audits it.
func (g *Gateway) overLimit(c *net.TCPConn) {
	_ = c.SetLinger(0)
	c.Close()
	g.audit(Record{Host: "?", Decision: Deny, Rule: "limit: " + strconv.Itoa(MaxConns) + " connections"})
}

// warnAccept logs a failed accept, at most once a second.
func (g *Gateway) warnAccept(err error) {
	g.mu.Lock()
	now := time.Now()
	warn := now.Sub(g.lastWarn) >= time.Second
	if warn {
		g.lastWarn = now
	}
	g.mu.Unlock()
	if warn {
		g.cfg.Log.Warn("network gateway: accept", "err", err)
	}
}

func (g *Gateway) untrack(c net.Conn) {
	g.mu.Lock()
	delete(g.conns, c)
	g.mu.Unlock()
	c.Close()
}

// handle serves one accepted connection: captured (its original
// destination is elsewhere) or a proxy client (it came to the listener).
func (g *Gateway) handle(c *net.TCPConn) {
	caller := g.cfg.Caller()
	orig, err := originalDst(c)
	if err != nil || orig == c.LocalAddr().(*net.TCPAddr).AddrPort() {
		g.proxy(c, caller)
		return
	}
	start := time.Now()
	rec := Record{Caller: caller.ID, Port: int(orig.Port())}
	var up net.Conn
	allowed := false
	if IsFake(orig.Addr()) {
		name, release, ok := g.cfg.Names.Hold(orig.Addr())
		if !ok {
			rec.Host, rec.Rule = orig.Addr().String(), "address: not from dsh's resolver"
			g.refuse(c, caller, &rec, start)
			return
		}
		defer release()
		rec.Host = name
		up, allowed = g.connect(caller, &rec)
	} else {
		rec.Host = orig.Addr().String()
		up, allowed = g.connectLiteral(orig, &rec)
	}
	switch {
	case up != nil:
		g.carry(c, nil, up, &rec, start)
	case allowed:
		g.failed(c, &rec, start)
	default:
		g.refuse(c, caller, &rec, start)
	}
}

// connect decides rec.Host:rec.Port and, when allowed, connects to the
// name's first address that may be reached. allowed is false when the
// name or all its addresses were refused (rec says why); true with a nil
// conn when connecting failed.
func (g *Gateway) connect(caller Caller, rec *Record) (up net.Conn, allowed bool) {
	ok, rule := g.decide(caller, rec.Host, rec.Port)
	rec.Rule = rule
	if !ok {
		return nil, false
	}
	addrs, err := g.addresses(rec.Host)
	if err != nil {
		rec.Rule += "; lookup failed: " + err.Error()
		return nil, true
	}
	var refused netip.Addr
	for _, a := range addrs {
		if !g.cfg.Rules.AddressAllowed(a) {
			refused = a
			continue
		}
		if up = g.dial(netip.AddrPortFrom(a, uint16(rec.Port)), rec); up != nil {
			return up, true
		}
	}
	if rec.Address == "" && refused.IsValid() {
		// The DNS-rebinding defence: a name allowed, an address not.
		rec.Address = refused.Unmap().String()
		rec.Rule = "address: " + rec.Address + " is not public and allowAddresses does not list it"
		return nil, false
	}
	return nil, true
}

// connectLiteral connects to an address the command dialled as such: it
// is decided by allowAddresses alone.
func (g *Gateway) connectLiteral(a netip.AddrPort, rec *Record) (net.Conn, bool) {
	rec.Address = a.Addr().Unmap().String()
	if !g.cfg.Rules.Listed(a.Addr()) {
		rec.Rule = "address: allowAddresses does not list it"
		return nil, false
	}
	rec.Rule = "allowAddresses"
	return g.dial(a, rec), true
}

// addresses are the addresses of an allowed name: pinned, or looked up on
// the host.
func (g *Gateway) addresses(host string) ([]netip.Addr, error) {
	if a, ok := g.cfg.Rules.Pinned(host); ok {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(g.ctx, dialTimeout)
	defer cancel()
	return g.cfg.Lookup(ctx, host)
}

func (g *Gateway) dial(a netip.AddrPort, rec *Record) net.Conn {
	rec.Address = a.Addr().Unmap().String()
	ctx, cancel := context.WithTimeout(g.ctx, dialTimeout)
	defer cancel()
	up, err := g.cfg.Dial(ctx, netip.AddrPortFrom(a.Addr().Unmap(), a.Port()))
	if err != nil {
		rec.Rule += "; connect failed: " + err.Error()
		return nil
	}
	return up
}

// refuse ends a refused connection with a reset, so that the command
// fails at once, and records it.
func (g *Gateway) refuse(c *net.TCPConn, caller Caller, rec *Record, start time.Time) {
	// Recorded before the reset: a command that waits for it ends after
	// its refusal is in the call's result.
	if caller.Refused != nil {
		caller.Refused(rec.Host)
	}
	rec.Decision = Deny
	rec.Duration = time.Since(start)
	g.audit(*rec)
	_ = c.SetLinger(0)
	c.Close()
}

// failed ends an allowed connection that could not be made, as the
// command would have seen it fail: a reset.
func (g *Gateway) failed(c *net.TCPConn, rec *Record, start time.Time) {
	_ = c.SetLinger(0)
	c.Close()
	rec.Decision = Allow
	rec.Duration = time.Since(start)
	g.audit(*rec)
}

func (g *Gateway) audit(r Record) {
	if g.cfg.Audit != nil {
		g.cfg.Audit(r)
	}
}

// carry joins the command's connection c (whose first bytes, read
// already, are head) and up, until both directions end, and records
// the connection.
func (g *Gateway) carry(c *net.TCPConn, head []byte, up net.Conn, rec *Record, start time.Time) {
	if !g.track(up) {
		up.Close()
		return
	}
	defer g.untrack(up)
	rec.Decision = Allow
	if len(head) > 0 {
		n, err := up.Write(head)
		rec.BytesUp += int64(n)
		if err != nil {
			rec.Duration = time.Since(start)
			g.audit(*rec)
			return
		}
	}
	upDone := make(chan int64, 1)
	go func() {
		n, err := io.Copy(up, c)
		halfClose(up, err, c)
		upDone <- n
	}()
	down, err := io.Copy(c, up)
	halfClose(c, err, up)
	rec.BytesUp += <-upDone
	rec.BytesDown = down
	rec.Duration = time.Since(start)
	g.audit(*rec)
}

// halfClose passes on the end of one direction: a clean end closes dst's
// writing side, so the other direction goes on (a half-open connection);
// a failure ends both.
func halfClose(dst net.Conn, err error, src net.Conn) {
	if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
		if cw.CloseWrite() == nil {
			return
		}
	}
	dst.Close()
	src.Close()
}

// hostPort is host:port as a map key and for questions.
func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
