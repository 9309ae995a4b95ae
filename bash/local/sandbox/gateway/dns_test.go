package gateway

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// q describes a query for makeQuery.
type q struct {
	name  string
	typ   dnsmessage.Type
	class dnsmessage.Class // 0: IN
	id    uint16
	rd    bool
	edns  int // UDP size of an OPT record; 0: none
	extra []dnsmessage.Question
	hdr   func(*dnsmessage.Header)
}

func makeQuery(t testing.TB, in q) []byte {
	t.Helper()
	h := dnsmessage.Header{ID: in.id, RecursionDesired: in.rd}
	if in.hdr != nil {
		in.hdr(&h)
	}
	class := in.class
	if class == 0 {
		class = dnsmessage.ClassINET
	}
	b := dnsmessage.NewBuilder(nil, h)
	check := func(err error) {
		if err != nil {
			t.Fatalf("building %+v: %v", in, err)
		}
	}
	check(b.StartQuestions())
	check(b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(in.name), Type: in.typ, Class: class}))
	for _, x := range in.extra {
		check(b.Question(x))
	}
	check(b.StartAdditionals())
	if in.edns != 0 {
		var rh dnsmessage.ResourceHeader
		check(rh.SetEDNS0(in.edns, dnsmessage.RCodeSuccess, false))
		check(b.OPTResource(rh, dnsmessage.OPTResource{}))
	}
	msg, err := b.Finish()
	check(err)
	return msg
}

// rawQuery is a query for a name in wire labels, built by hand so that
// it may be one dnsmessage refuses to build.
func rawQuery(labels ...string) []byte {
	msg := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, l := range labels {
		msg = append(msg, byte(len(l)))
		msg = append(msg, l...)
	}
	return append(msg, 0, 0, 1, 0, 1) // root, type A, class IN
}

// parsed is a reply, taken apart.
type parsed struct {
	hdr dnsmessage.Header
	msg dnsmessage.Message
}

func parseReply(t testing.TB, b []byte) parsed {
	t.Helper()
	var m dnsmessage.Message
	if err := m.Unpack(b); err != nil {
		t.Fatalf("reply does not parse: %v", err)
	}
	return parsed{m.Header, m}
}

func (p parsed) addrs() []netip.Addr {
	var as []netip.Addr
	for _, r := range p.msg.Answers {
		if a, ok := r.Body.(*dnsmessage.AResource); ok {
			as = append(as, netip.AddrFrom4(a.A))
		}
	}
	return as
}

func refuseDenied(name string) bool {
	return name == "denied.example" || strings.HasSuffix(name, ".denied.example")
}

func TestAnswer(t *testing.T) {
	first := netip.MustParseAddr("198.18.0.1")
	for _, tc := range []struct {
		name    string
		query   q
		rcode   dnsmessage.RCode
		answers []netip.Addr
	}{
		{"A", q{name: "example.com.", typ: dnsmessage.TypeA}, dnsmessage.RCodeSuccess, []netip.Addr{first}},
		{"A mixed case", q{name: "ExAmPle.CoM.", typ: dnsmessage.TypeA}, dnsmessage.RCodeSuccess, []netip.Addr{first}},
		{"AAAA", q{name: "example.com.", typ: dnsmessage.TypeAAAA}, dnsmessage.RCodeSuccess, nil},
		{"MX", q{name: "example.com.", typ: dnsmessage.TypeMX}, dnsmessage.RCodeSuccess, nil},
		{"TXT", q{name: "example.com.", typ: dnsmessage.TypeTXT}, dnsmessage.RCodeSuccess, nil},
		{"SRV", q{name: "_http._tcp.example.com.", typ: dnsmessage.TypeSRV}, dnsmessage.RCodeSuccess, nil},
		{"HTTPS", q{name: "example.com.", typ: dnsmessage.TypeHTTPS}, dnsmessage.RCodeSuccess, nil},
		{"ANY", q{name: "example.com.", typ: dnsmessage.TypeALL}, dnsmessage.RCodeSuccess, nil},
		{"PTR", q{name: "1.0.18.198.in-addr.arpa.", typ: dnsmessage.TypePTR}, dnsmessage.RCodeSuccess, nil},
		{"root", q{name: ".", typ: dnsmessage.TypeNS}, dnsmessage.RCodeSuccess, nil},
		{"refused A", q{name: "denied.example.", typ: dnsmessage.TypeA}, dnsmessage.RCodeNameError, nil},
		{"refused AAAA", q{name: "www.denied.example.", typ: dnsmessage.TypeAAAA}, dnsmessage.RCodeNameError, nil},
		{"refused MX", q{name: "DENIED.example.", typ: dnsmessage.TypeMX}, dnsmessage.RCodeNameError, nil},
		{"odd bytes", q{name: "a b.example.", typ: dnsmessage.TypeA}, dnsmessage.RCodeNameError, nil},
		{"class CHAOS", q{name: "version.bind.", typ: dnsmessage.TypeTXT, class: dnsmessage.Class(3)}, dnsmessage.RCodeRefused, nil},
		{"two questions", q{name: "a.example.", typ: dnsmessage.TypeA, extra: []dnsmessage.Question{
			{Name: dnsmessage.MustNewName("b.example."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}},
			dnsmessage.RCodeFormatError, nil},
		{"opcode STATUS", q{name: "a.example.", typ: dnsmessage.TypeA, hdr: func(h *dnsmessage.Header) { h.OpCode = 2 }},
			dnsmessage.RCodeNotImplemented, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFakeIPs(16)
			var looked []string
			r := &Resolver{Names: f, Refuse: refuseDenied, Lookup: func(name string, _ netip.Addr) { looked = append(looked, name) }}
			tc.query.id, tc.query.rd = 0xbeef, true
			query := makeQuery(t, tc.query)
			b, ok := r.Answer(query)
			if !ok {
				t.Fatal("Answer dropped the query")
			}
			p := parseReply(t, b)
			h := p.hdr
			if h.ID != 0xbeef || !h.Response || !h.Authoritative || !h.RecursionDesired || !h.RecursionAvailable || h.Truncated {
				t.Errorf("header %+v: want ID echoed, QR, AA, RD echoed, RA, no TC", h)
			}
			if h.RCode != tc.rcode {
				t.Errorf("rcode %v, want %v", h.RCode, tc.rcode)
			}
			if got := p.addrs(); !slices.Equal(got, tc.answers) || len(p.msg.Answers) != len(tc.answers) {
				t.Errorf("answers %v, want %v", p.msg.Answers, tc.answers)
			}
			for _, a := range p.msg.Answers {
				if a.Header.TTL != 1 || a.Header.Name.String() != tc.query.name {
					t.Errorf("answer %v: want TTL 1 and the question's name", a.Header)
				}
			}
			if tc.rcode != dnsmessage.RCodeFormatError {
				if len(p.msg.Questions) != 1 || p.msg.Questions[0].Name.String() != tc.query.name || p.msg.Questions[0].Type != tc.query.typ {
					t.Errorf("questions %v: want the query's echoed", p.msg.Questions)
				}
			}
			if len(tc.answers) == 0 && f.Len() != 0 {
				t.Errorf("no answer, but the table holds %d names", f.Len())
			}
			// Lookup hears of every valid name asked about in class IN.
			wantLookup := tc.rcode == dnsmessage.RCodeSuccess && tc.query.name != "." || strings.HasPrefix(tc.name, "refused")
			if wantLookup {
				if len(looked) != 1 {
					t.Errorf("Lookup called with %q, want once", looked)
				}
			} else if len(looked) != 0 {
				t.Errorf("Lookup called with %q, want not at all", looked)
			}
		})
	}
}

func TestAnswerLookup(t *testing.T) {
	f, _ := newFakeIPs(16)
	type call struct {
		name string
		addr netip.Addr
	}
	var calls []call
	r := &Resolver{Names: f, Refuse: refuseDenied, Lookup: func(n string, a netip.Addr) { calls = append(calls, call{n, a}) }}
	for _, in := range []q{
		{name: "Example.com.", typ: dnsmessage.TypeA},
		{name: "example.com.", typ: dnsmessage.TypeAAAA},
		{name: "denied.example.", typ: dnsmessage.TypeA},
	} {
		if _, ok := r.Answer(makeQuery(t, in)); !ok {
			t.Fatalf("%+v dropped", in)
		}
	}
	want := []call{{"example.com", netip.MustParseAddr("198.18.0.1")}, {"example.com", netip.Addr{}}, {"denied.example", netip.Addr{}}}
	if !slices.Equal(calls, want) {
		t.Errorf("Lookup calls %v, want %v", calls, want)
	}
}

// TestAnswerBadNames sends names dnsmessage will not build: too long, a
// label too long, a dot inside a label, a zero byte. None may get an
// address or crash the resolver.
func TestAnswerBadNames(t *testing.T) {
	l63 := strings.Repeat("a", 63)
	for name, labels := range map[string][]string{
		"label of 64":    {l63 + "a", "com"},
		"name of 255":    {l63, l63, l63, l63[:61], "c"},
		"dot in a label": {"a.b", "com"},
		"zero byte":      {"a\x00b", "com"},
		"space":          {"a b", "com"},
		"label of 63":    {l63, "com"}, // valid, for contrast
	} {
		t.Run(name, func(t *testing.T) {
			f, _ := newFakeIPs(16)
			r := &Resolver{Names: f}
			b, ok := r.Answer(rawQuery(labels...))
			if !ok {
				t.Fatal("dropped")
			}
			p := parseReply(t, b)
			if name == "label of 63" {
				if p.hdr.RCode != dnsmessage.RCodeSuccess || len(p.addrs()) != 1 {
					t.Errorf("valid name: rcode %v, answers %v", p.hdr.RCode, p.msg.Answers)
				}
				return
			}
			if c := p.hdr.RCode; c != dnsmessage.RCodeFormatError && c != dnsmessage.RCodeNameError {
				t.Errorf("rcode %v, want FORMERR or NXDOMAIN", c)
			}
			if len(p.msg.Answers) != 0 || f.Len() != 0 {
				t.Errorf("answers %v, table %d: want none", p.msg.Answers, f.Len())
			}
		})
	}
}

func TestAnswerDrops(t *testing.T) {
	r := &Resolver{Names: NewFakeIPs(4)}
	response := makeQuery(t, q{name: "a.example.", typ: dnsmessage.TypeA, hdr: func(h *dnsmessage.Header) { h.Response = true }})
	for name, pkt := range map[string][]byte{
		"empty":    nil,
		"short":    {0x12, 0x34, 0x01},
		"11 bytes": make([]byte, 11),
		"response": response,
	} {
		if b, ok := r.Answer(pkt); ok || b != nil {
			t.Errorf("%s: answered %x, want dropped", name, b)
		}
	}
	// A header alone, or one whose question is cut short, is a query
	// that cannot be read: FORMERR, without a question.
	full := makeQuery(t, q{name: "a.example.", typ: dnsmessage.TypeA, id: 7})
	for _, n := range []int{12, 14, len(full) - 1} {
		b, ok := r.Answer(full[:n])
		if !ok {
			t.Fatalf("cut to %d: dropped", n)
		}
		p := parseReply(t, b)
		if p.hdr.RCode != dnsmessage.RCodeFormatError || p.hdr.ID != 7 || len(p.msg.Questions) != 0 {
			t.Errorf("cut to %d: %+v, want FORMERR, ID 7, no question", n, p.msg)
		}
	}
}

func TestAnswerEDNS(t *testing.T) {
	r := &Resolver{Names: NewFakeIPs(4)}
	for _, size := range []int{0, 100, 512, 4096} {
		b, ok := r.Answer(makeQuery(t, q{name: "a.example.", typ: dnsmessage.TypeA, edns: size}))
		if !ok {
			t.Fatal("dropped")
		}
		p := parseReply(t, b)
		var opts int
		for _, a := range p.msg.Additionals {
			if a.Header.Type == dnsmessage.TypeOPT {
				opts++
				if int(a.Header.Class) != ednsUDPSize || a.Header.ExtendedRCode(p.hdr.RCode) != dnsmessage.RCodeSuccess {
					t.Errorf("OPT %v", a.Header)
				}
			}
		}
		if want := min(size, 1); opts != want || len(p.addrs()) != 1 {
			t.Errorf("EDNS %d: %d OPT records, want %d; answers %v", size, opts, want, p.msg.Answers)
		}
	}
}

// TestAnswerTruncates checks a reply larger than the client accepts is
// cut to its question and marked TC. The resolver's replies never reach
// 512 bytes, so the limit is lowered by hand.
func TestAnswerTruncates(t *testing.T) {
	name := dnsmessage.MustNewName("a.example.")
	rp := newReply(dnsmessage.Header{ID: 9})
	rp.q = &dnsmessage.Question{Name: name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}
	rp.addr = netip.MustParseAddr("198.18.0.1")
	whole, ok := rp.pack()
	if !ok || len(whole) > minUDPSize {
		t.Fatalf("pack: %d bytes, %v", len(whole), ok)
	}
	rp.limit = len(whole) - 1
	b, ok := rp.pack()
	if !ok {
		t.Fatal("pack failed")
	}
	p := parseReply(t, b)
	if !p.hdr.Truncated || len(p.msg.Answers) != 0 || len(p.msg.Questions) != 1 || len(b) > rp.limit {
		t.Errorf("truncated reply: %+v (%d bytes), want TC, the question, no answer", p.msg, len(b))
	}
	// The largest name there is still fits in 512 bytes.
	l63 := strings.Repeat("a", 63)
	long := strings.Join([]string{l63, l63, l63, l63[:61]}, ".") + "."
	r := &Resolver{Names: NewFakeIPs(4)}
	b, ok = r.Answer(makeQuery(t, q{name: long, typ: dnsmessage.TypeA}))
	if p := parseReply(t, b); !ok || p.hdr.Truncated || len(p.addrs()) != 1 || len(b) > minUDPSize {
		t.Errorf("253-byte name: %d bytes, TC %v, answers %v", len(b), p.hdr.Truncated, p.msg.Answers)
	}
}

// TestAnswerTable sends 10,000 names through a table of 1024: SERVFAIL
// while every entry is recent, an address again once some are old, and
// never an answer that moves a held name.
func TestAnswerTable(t *testing.T) {
	f, c := newFakeIPs(1024)
	r := &Resolver{Names: f}
	held := make(map[netip.Addr]string)
	var servfail, answered int
	for i := range 10000 {
		name := fmt.Sprintf("n%d.example", i)
		p := parseReply(t, must(r.Answer(makeQuery(t, q{name: name + ".", typ: dnsmessage.TypeA}))))
		switch p.hdr.RCode {
		case dnsmessage.RCodeServerFailure:
			servfail++
			if len(p.msg.Answers) != 0 {
				t.Fatalf("SERVFAIL with answers %v", p.msg.Answers)
			}
		case dnsmessage.RCodeSuccess:
			answered++
			a := p.addrs()[0]
			if old, ok := held[a]; ok {
				t.Fatalf("%s got %v, held by a connection to %s", name, a, old)
			}
			if i%100 == 0 {
				if n, _, ok := f.Hold(a); !ok || n != name {
					t.Fatalf("Hold(%v) = %q, want %q", a, n, name)
				}
				held[a] = name
			}
		default:
			t.Fatalf("rcode %v", p.hdr.RCode)
		}
		if f.Len() > 1024 {
			t.Fatalf("Len %d", f.Len())
		}
		c.advance(2 * time.Millisecond)
	}
	if servfail == 0 || answered <= 1024 {
		t.Errorf("%d SERVFAIL, %d answered: want both, and reuse", servfail, answered)
	}
	for a, name := range held {
		if got := nameOf(f, a); got != name {
			t.Errorf("held %v maps to %q, want %q", a, got, name)
		}
	}
}

func TestAnswerNilNames(t *testing.T) {
	r := &Resolver{}
	p := parseReply(t, must(r.Answer(makeQuery(t, q{name: "a.example.", typ: dnsmessage.TypeA}))))
	if p.hdr.RCode != dnsmessage.RCodeServerFailure {
		t.Errorf("rcode %v, want SERVFAIL", p.hdr.RCode)
	}
	p = parseReply(t, must(r.Answer(makeQuery(t, q{name: "a.example.", typ: dnsmessage.TypeAAAA}))))
	if p.hdr.RCode != dnsmessage.RCodeSuccess {
		t.Errorf("AAAA rcode %v, want NOERROR", p.hdr.RCode)
	}
}

func must(b []byte, ok bool) []byte {
	if !ok {
		panic("query dropped")
	}
	return b
}

func FuzzAnswer(f *testing.F) {
	for _, in := range []q{
		{name: "example.com.", typ: dnsmessage.TypeA, rd: true},
		{name: "example.com.", typ: dnsmessage.TypeAAAA, edns: 1232},
		{name: "denied.example.", typ: dnsmessage.TypeMX},
		{name: "_sip._udp.example.", typ: dnsmessage.TypeSRV, class: dnsmessage.Class(3)},
		{name: ".", typ: dnsmessage.TypeNS},
		{name: "a.example.", typ: dnsmessage.TypeA, extra: []dnsmessage.Question{
			{Name: dnsmessage.MustNewName("b."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}},
	} {
		f.Add(makeQuery(f, in))
	}
	f.Add(rawQuery(strings.Repeat("x", 64), "com"))
	f.Add(rawQuery("a.b", "c"))
	f.Add([]byte{})
	f.Add(make([]byte, 12))
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1}) // a pointer to itself
	f.Add(append(rawQuery("a"), 0xff, 0xff, 0xff))                          // trailing bytes
	f.Fuzz(func(t *testing.T, query []byte) {
		names, _ := newFakeIPs(8)
		r := &Resolver{Names: names, Refuse: refuseDenied}
		b, ok := r.Answer(query)
		if !ok {
			if b != nil {
				t.Fatal("dropped with a reply")
			}
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(b); err != nil {
			t.Fatalf("reply does not parse: %v", err)
		}
		if len(query) < 12 || binary.BigEndian.Uint16(query) != m.ID || !m.Response || len(b) > minUDPSize {
			t.Fatalf("reply %+v to %x", m.Header, query)
		}
		if len(m.Questions) > 1 || len(m.Answers) > 1 || names.Len() > 1 {
			t.Fatalf("reply %+v: more than one question or answer", m)
		}
		if len(m.Answers) == 1 {
			a, isA := m.Answers[0].Body.(*dnsmessage.AResource)
			if !isA || !IsFake(netip.AddrFrom4(a.A)) || m.RCode != dnsmessage.RCodeSuccess {
				t.Fatalf("answer %v", m.Answers[0])
			}
		}
	})
}

func BenchmarkAnswer(b *testing.B) {
	r := &Resolver{Names: NewFakeIPs(0), Refuse: refuseDenied}
	query := makeQuery(b, q{name: "www.example.com.", typ: dnsmessage.TypeA, rd: true, edns: 1232})
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := r.Answer(query); !ok {
			b.Fatal("dropped")
		}
	}
}
