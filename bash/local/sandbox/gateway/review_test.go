package gateway

// Regression tests of an adversarial review: each performed its attack
// and failed before the fix it names.

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
)

// askGateway is a proxy-only gateway whose every unknown host is asked
// with ask.
func askGateway(t *testing.T, ask func(ctx context.Context, host string, port int) (bool, error)) string {
	t.Helper()
	rules, err := NewRules(config.NetworkMap{Default: Ask,
		Hosts: map[string]string{"unknown.test": "127.0.0.1"}, AllowAddresses: []string{"127.0.0.1/32"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := New(Config{Rules: rules, Names: NewFakeIPs(0), Caller: func() Caller { return Caller{ID: "c", Ask: ask} }})
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = g.Serve(l); close(done) }()
	t.Cleanup(func() { l.Close(); g.Close(); <-done })
	return l.Addr().String()
}

// A declined host is not asked again under another spelling (the proxy
// names a host as the rules compare it).
func TestDeclinedNotAskedAgainBySpelling(t *testing.T) {
	port := echoServer(t)
	var mu sync.Mutex
	var asked []string
	gw := askGateway(t, func(_ context.Context, host string, p int) (bool, error) {
		mu.Lock()
		asked = append(asked, fmt.Sprintf("%s:%d", host, p))
		mu.Unlock()
		return false, nil
	})
	for _, h := range []string{"unknown.test", "UNKNOWN.test", "unknown.test.", "Unknown.Test."} {
		if _, err := connectVia(t, gw, h, port); err == nil {
			t.Errorf("%s: a declined host reached", h)
		}
	}
	if len(asked) != 1 || asked[0] != fmt.Sprintf("unknown.test:%d", port) {
		t.Errorf("questions %q, want one, about unknown.test", asked)
	}
}

// One question of a session is open at a time, however many hosts a
// command tries at once.
func TestQuestionsOneAtATime(t *testing.T) {
	port := echoServer(t)
	var open, peak atomic.Int32
	gw := askGateway(t, func(ctx context.Context, host string, p int) (bool, error) {
		n := open.Add(1)
		for o := peak.Load(); n > o && !peak.CompareAndSwap(o, n); o = peak.Load() {
		}
		time.Sleep(time.Millisecond)
		open.Add(-1)
		return false, nil
	})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = connectVia(t, gw, fmt.Sprintf("h%d.test", i), port) }()
	}
	wg.Wait()
	if peak.Load() != 1 {
		t.Errorf("%d questions open at once, want 1", peak.Load())
	}
}

// A plain proxy request whose body ends short still leaves its audit
// line: what reached the host is never untraced.
func TestProxyShortBodyAudited(t *testing.T) {
	port := sinkServer(t)
	var mu sync.Mutex
	var recs []Record
	rules, _ := NewRules(config.NetworkMap{Allow: []string{"sink.test"}, Default: Deny,
		Hosts: map[string]string{"sink.test": "127.0.0.1"}, AllowAddresses: []string{"127.0.0.1/32"}}, nil)
	g := New(Config{Rules: rules, Names: NewFakeIPs(0), Audit: func(r Record) { mu.Lock(); recs = append(recs, r); mu.Unlock() }})
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = g.Serve(l); close(done) }()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 1<<20)
	fmt.Fprintf(c, "POST http://sink.test:%d/ HTTP/1.1\r\nHost: sink.test\r\nContent-Length: %d\r\n\r\n", port, len(body)+1)
	_, _ = c.Write(body)
	c.Close()
	// The line comes when the gateway has handled the connection, which
	// it may not even have accepted yet.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(recs)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.Close()
	g.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 1 || recs[0].Decision != Allow || recs[0].BytesUp < int64(len(body)) {
		t.Errorf("audit %+v, want one allow line with the bytes sent", recs)
	}
}

// A proxy client that sends headers without end is cut off at 64 KiB:
// the gateway's memory does not grow with it.
func TestProxyHeadersBounded(t *testing.T) {
	gw, _ := testGateway(t)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	var sent atomic.Int64
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp4", gw)
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "GET http://echo.test/ HTTP/1.1\r\nHost: echo.test\r\n")
			line := []byte(fmt.Sprintf("X-%d: ", i) + strings.Repeat("b", 4000) + "\r\n")
			for range 4096 { // 16 MiB each, unless cut off
				if _, err := c.Write(line); err != nil {
					return
				}
				sent.Add(int64(len(line)))
			}
		}()
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if sent.Load() >= 4*4096*4000 {
		t.Errorf("the gateway read %d MiB of headers", sent.Load()>>20)
	}
	if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 32<<20 {
		t.Errorf("the gateway allocated %d MiB for headers", grew>>20)
	}
}

// A session's connections are capped: past MaxConns a new one is reset
// at once and audited, so one command cannot take dsh's fds from the
// other sessions.
func TestConnectionCap(t *testing.T) {
	var limited atomic.Int32
	rules, _ := NewRules(config.NetworkMap{}, nil)
	g := New(Config{Rules: rules, Names: NewFakeIPs(0), Audit: func(r Record) {
		if strings.HasPrefix(r.Rule, "limit: ") {
			limited.Add(1)
		}
	}})
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = g.Serve(l); close(done) }()
	defer func() { l.Close(); g.Close(); <-done }()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range MaxConns + 10 { // idle proxy clients: one tracked conn each
		c, err := net.Dial("tcp4", l.Addr().String())
		switch {
		case err == nil:
			conns = append(conns, c)
		case i < MaxConns:
			t.Fatal(err)
		} // past the cap the gateway's reset may come before the dial returns
	}
	deadline := time.Now().Add(10 * time.Second)
	for limited.Load() < 10 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if limited.Load() != 10 {
		t.Errorf("%d connections refused past the cap, want 10", limited.Load())
	}
}
