package gateway

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// serve starts r on a UDP socket on 127.0.0.1 and returns the socket;
// the test ends by closing it and checking Serve returned nil.
func serve(t *testing.T, r *Resolver) net.PacketConn {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Serve(pc) }()
	t.Cleanup(func() {
		pc.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v after Close, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return pc
}

// goResolver is Go's own resolver, asking only the server at addr.
func goResolver(addr net.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr.String())
	}}
}

func lookup(t *testing.T, r *net.Resolver, host string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, host)
	if err != nil {
		t.Fatalf("LookupHost(%q): %v", host, err)
	}
	return addrs
}

func TestServe(t *testing.T) {
	names := NewFakeIPs(16)
	pc := serve(t, &Resolver{Names: names, Refuse: refuseDenied})

	// Garbage first, from a client that then goes away: none of it may
	// stop the server.
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	response := makeQuery(t, q{name: "a.example.", typ: dnsmessage.TypeA, hdr: func(h *dnsmessage.Header) { h.Response = true }})
	for _, pkt := range [][]byte{
		{}, {1}, make([]byte, 12), make([]byte, 60000), response,
		rawQuery("a.b", "c"), makeQuery(t, q{name: "gone.example.", typ: dnsmessage.TypeA})[:20],
		makeQuery(t, q{name: "gone.example.", typ: dnsmessage.TypeA}), // answered to a closed port
	} {
		if _, err := c.Write(pkt); err != nil {
			t.Fatalf("writing %d bytes: %v", len(pkt), err)
		}
	}
	c.Close()

	r := goResolver(pc.LocalAddr())
	addrs := lookup(t, r, "Gateway-Test.example.")
	a, _ := names.Addr("gateway-test.example")
	if !slices.Equal(addrs, []string{a.String()}) || !IsFake(a) {
		t.Errorf("LookupHost = %v, want [%v]", addrs, a)
	}
	if n, release, ok := names.Hold(netip.MustParseAddr(addrs[0])); !ok || n != "gateway-test.example" {
		t.Errorf("Hold(%s) = %q, %v", addrs[0], n, ok)
	} else {
		release()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = r.LookupHost(ctx, "www.denied.example.")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("LookupHost(refused name) error %v, want not found", err)
	}
	if mx, err := r.LookupMX(ctx, "example.com."); len(mx) != 0 || err == nil {
		t.Errorf("LookupMX = %v, %v; want no records", mx, err)
	}
}

// TestServeConcurrent has many clients ask at once.
func TestServeConcurrent(t *testing.T) {
	names := NewFakeIPs(256)
	pc := serve(t, &Resolver{Names: names})
	r := goResolver(pc.LocalAddr())
	var wg sync.WaitGroup
	got := make([][]string, 64)
	for i := range got {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var err error
			if got[i], err = r.LookupHost(ctx, "host"+string(rune('a'+i%26))+".example."); err != nil {
				t.Errorf("lookup %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i, addrs := range got {
		if len(addrs) != 1 || addrs[0] != got[i%26][0] {
			t.Errorf("lookup %d: %v, want the same address as lookup %d, %v", i, addrs, i%26, got[i%26])
		}
	}
	if names.Len() != 26 {
		t.Errorf("Len = %d, want 26", names.Len())
	}
}

// TestServeReadErrors makes reads fail for a while (a deadline in the
// past): Serve retries them and then answers.
func TestServeReadErrors(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- (&Resolver{Names: NewFakeIPs(4)}).Serve(pc) }()
	time.Sleep(100 * time.Millisecond) // several failed reads
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v on a read timeout", err)
	default:
	}
	if err := pc.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if addrs := lookup(t, goResolver(pc.LocalAddr()), "after-errors.example."); len(addrs) != 1 {
		t.Errorf("LookupHost = %v", addrs)
	}
	pc.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v after Close, want nil", err)
	}
}

func TestServeClosedFirst(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc.Close()
	if err := (&Resolver{}).Serve(pc); err != nil {
		t.Errorf("Serve on a closed conn = %v, want nil", err)
	}
}
