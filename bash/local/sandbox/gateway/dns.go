package gateway

// The sandbox's resolver answers from the FakeIPs table and asks no one
// else, so looking a name up leaks nothing outside the sandbox. A name
// the command may connect to gets a synthetic address; when the command
// dials it, the gateway maps the address back to the name and decides
// the connection by name.

import (
	"errors"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

const (
	// minUDPSize is the reply size every DNS client accepts (RFC 1035).
	minUDPSize = 512
	// ednsUDPSize is the size the resolver's OPT record offers.
	ednsUDPSize = 1232
	// writeTimeout bounds a reply's write, so no client can stall Serve.
	writeTimeout = time.Second
	// maxReadBackoff bounds the pause after a failed read.
	maxReadBackoff = 250 * time.Millisecond
)

// Resolver is a DNS server for the sandbox's /etc/resolv.conf. It never
// forwards a query: every name it does not refuse is given an address
// from Names.
type Resolver struct {
	// Names gives each name its address. nil: every A query fails
	// (SERVFAIL).
	Names *FakeIPs

	// Refuse reports a name no connection could be allowed to (denied
	// on every port): answered NXDOMAIN. nil: none refused.
	Refuse func(name string) bool

	// Lookup, when set, is called with each valid name asked about, for
	// the audit: addr is the address answered, or the zero Addr when
	// there was none (a refused name, a type other than A, a full
	// table). It is called on Serve's goroutine, so it must be quick.
	Lookup func(name string, addr netip.Addr)
}

// Serve answers the queries pc receives until pc is closed, then returns
// nil. A packet that is not a query is dropped; a failed read is retried
// after a short pause.
func (r *Resolver) Serve(pc net.PacketConn) error {
	buf := make([]byte, 1<<16)
	var backoff time.Duration
	for {
		n, from, err := pc.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			backoff = min(max(2*backoff, 5*time.Millisecond), maxReadBackoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		reply, ok := r.Answer(buf[:n])
		if !ok {
			continue
		}
		// A write that fails is the client's loss (it asks again), and
		// the deadline keeps one client from stalling the others.
		_ = pc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, _ = pc.WriteTo(reply, from)
	}
}

// response is a reply being built.
type response struct {
	hdr   dnsmessage.Header
	q     *dnsmessage.Question // echoed; nil when the query's was unusable
	addr  netip.Addr           // the A record's, if any
	opt   bool                 // whether to add an OPT record
	limit int                  // the size the client accepts
}

// Answer returns the reply to a query. It does no I/O (it may give a
// name an address in r.Names). ok is false when the packet should be
// dropped: it is not a DNS query, or too short to be answered.
func (r *Resolver) Answer(query []byte) (reply []byte, ok bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil, false
	}
	rp := newReply(h)
	q, err := p.Question()
	if err != nil {
		rp.hdr.RCode = dnsmessage.RCodeFormatError // no question, or unreadable
		return rp.pack()
	}
	if _, err := p.Question(); !errors.Is(err, dnsmessage.ErrSectionDone) {
		rp.hdr.RCode = dnsmessage.RCodeFormatError // more than one
		return rp.pack()
	}
	rp.q = &q
	rp.readEDNS(&p)
	if h.OpCode != 0 {
		rp.hdr.RCode = dnsmessage.RCodeNotImplemented
		return rp.pack()
	}
	rp.hdr.RCode, rp.addr = r.resolve(q)
	return rp.pack()
}

func newReply(h dnsmessage.Header) *response {
	return &response{
		hdr: dnsmessage.Header{
			ID:                 h.ID,
			Response:           true,
			OpCode:             h.OpCode,
			Authoritative:      true,
			RecursionDesired:   h.RecursionDesired,
			RecursionAvailable: true,
		},
		limit: minUDPSize,
	}
}

// resolve answers q: its rcode, and the address of its A record if any.
func (r *Resolver) resolve(q dnsmessage.Question) (dnsmessage.RCode, netip.Addr) {
	if q.Class != dnsmessage.ClassINET {
		return dnsmessage.RCodeRefused, netip.Addr{}
	}
	text := q.Name.String()
	if text == "." {
		return dnsmessage.RCodeSuccess, netip.Addr{} // the root has no address
	}
	name, ok := canonical(text)
	if !ok {
		return dnsmessage.RCodeNameError, netip.Addr{}
	}
	rcode, addr := dnsmessage.RCodeSuccess, netip.Addr{}
	switch {
	case r.Refuse != nil && r.Refuse(name):
		rcode = dnsmessage.RCodeNameError
	case q.Type != dnsmessage.TypeA:
		// No answers: AAAA's makes clients fall back to IPv4, and no
		// other record would be of use to a program that cannot leave.
	case r.Names == nil:
		rcode = dnsmessage.RCodeServerFailure
	default:
		if addr, ok = r.Names.Addr(name); !ok {
			rcode = dnsmessage.RCodeServerFailure
		}
	}
	if r.Lookup != nil {
		r.Lookup(name, addr)
	}
	return rcode, addr
}

// readEDNS notes the query's OPT record, if it has one: the reply gets
// one too, and may be as large as the client says it accepts. Records
// that do not parse are ignored.
func (rp *response) readEDNS(p *dnsmessage.Parser) {
	if p.SkipAllAnswers() != nil || p.SkipAllAuthorities() != nil {
		return
	}
	for {
		h, err := p.AdditionalHeader()
		if err != nil {
			return
		}
		if h.Type == dnsmessage.TypeOPT {
			rp.opt = true
			rp.limit = max(minUDPSize, int(h.Class))
			return
		}
		if p.SkipAdditional() != nil {
			return
		}
	}
}

// pack returns the reply's wire form. One larger than the client accepts
// is sent without its answer and with TC set.
func (rp *response) pack() ([]byte, bool) {
	b, err := rp.build(true)
	if err == nil && len(b) > rp.limit {
		rp.hdr.Truncated = true
		b, err = rp.build(false)
	}
	return b, err == nil
}

func (rp *response) build(answer bool) ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, minUDPSize), rp.hdr)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if rp.q != nil {
		if err := b.Question(*rp.q); err != nil {
			return nil, err
		}
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if answer && rp.q != nil && rp.addr.Is4() {
		h := dnsmessage.ResourceHeader{Name: rp.q.Name, Type: dnsmessage.TypeA,
			Class: dnsmessage.ClassINET, TTL: uint32(RecordTTL / time.Second)}
		if err := b.AResource(h, dnsmessage.AResource{A: rp.addr.As4()}); err != nil {
			return nil, err
		}
	}
	if err := b.StartAdditionals(); err != nil {
		return nil, err
	}
	if rp.opt {
		var h dnsmessage.ResourceHeader
		_ = h.SetEDNS0(ednsUDPSize, dnsmessage.RCodeSuccess, false) // never fails
		if err := b.OPTResource(h, dnsmessage.OPTResource{}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
