package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
)

// echoServer echoes what it reads, on host loopback.
func echoServer(t testing.TB) (port int) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return l.Addr().(*net.TCPAddr).Port
}

// testGateway serves a gateway on host loopback (as a proxy only: nothing
// is redirected here) whose map allows echo.test, pinned to 127.0.0.1.
func testGateway(t testing.TB) (addr string, g *Gateway) {
	t.Helper()
	rules, err := NewRules(config.NetworkMap{Allow: []string{"echo.test"}, Default: Deny,
		Hosts: map[string]string{"echo.test": "127.0.0.1"}, AllowAddresses: []string{"127.0.0.1/32"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	g = New(Config{Rules: rules, Names: NewFakeIPs(0)})
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = g.Serve(l); close(done) }()
	t.Cleanup(func() { l.Close(); g.Close(); <-done })
	return l.Addr().String(), g
}

// connectVia opens a CONNECT tunnel to host:port through the gateway.
func connectVia(t testing.TB, gw, host string, port int) (net.Conn, error) {
	c, err := net.Dial("tcp4", gw)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", host, port, host, port)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if res.StatusCode != 200 {
		c.Close()
		return nil, fmt.Errorf("%s", res.Status)
	}
	return c, nil
}

func TestProxyConnect(t *testing.T) {
	port := echoServer(t)
	gw, _ := testGateway(t)
	c, err := connectVia(t, gw, "echo.test", port)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(c, "ping\n")
	if line, _ := bufio.NewReader(c).ReadString('\n'); line != "ping\n" {
		t.Errorf("echo: %q", line)
	}
	c.Close()
	if _, err := connectVia(t, gw, "other.test", port); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a name no rule allows: %v", err)
	}
	if _, err := connectVia(t, gw, "127.0.0.2", port); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a literal address not listed: %v", err)
	}
}

// TestProxyBadInput: garbage, a client that never sends its request, and
// 200 tunnels at once, one of them half-closed and one whose client never
// reads; the gateway goes on serving (goleak checks that Close ends all).
func TestProxyBadInput(t *testing.T) {
	port := echoServer(t)
	gw, _ := testGateway(t)
	for _, junk := range []string{"\x00\x01\x02\r\n\r\n", "GET / HTTP/1.1\r\n\r\n", "CONNECT nohost HTTP/1.1\r\n\r\n", strings.Repeat("A", 1<<20)} {
		c, err := net.Dial("tcp4", gw)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte(junk))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		// The huge one may see its connection reset before the answer.
		if !strings.HasPrefix(string(b), "HTTP/1.1 400") && len(junk) < 1<<20 {
			t.Errorf("%.20q: %.60q", junk, b)
		}
		c.Close()
	}
	silent, err := net.Dial("tcp4", gw) // never sends a request
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var conns []net.Conn
	for range 200 {
		c, err := connectVia(t, gw, "echo.test", port)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// A client that never reads: the echo fills the buffers, nothing grows.
	_, _ = conns[0].Write(make([]byte, 64<<10))
	// A half-closed one still gets its echo.
	fmt.Fprint(conns[1], "half\n")
	_ = conns[1].(*net.TCPConn).CloseWrite()
	if b, _ := io.ReadAll(conns[1]); string(b) != "half\n" {
		t.Errorf("half-closed: %q", b)
	}
	for i, c := range conns[2:] {
		fmt.Fprintf(c, "%d\n", i)
		if line, _ := bufio.NewReader(c).ReadString('\n'); line != fmt.Sprintf("%d\n", i) {
			t.Fatalf("connection %d: %q", i, line)
		}
	}
	for _, c := range conns {
		c.Close()
	}
}

// BenchmarkThroughput: 1 GiB through a CONNECT tunnel of the gateway and
// straight to the same server on host loopback (b.SetBytes: MB/s).
func BenchmarkThroughput(b *testing.B) {
	port := sinkServer(b)
	gw, _ := testGateway(b)
	buf := make([]byte, 1<<20)
	for _, via := range []string{"direct", "gateway"} {
		b.Run(via, func(b *testing.B) {
			b.SetBytes(1 << 30)
			for b.Loop() {
				c := dialVia(b, via, gw, port)
				for range 1024 {
					if _, err := c.Write(buf); err != nil {
						b.Fatal(err)
					}
				}
				_ = c.(interface{ CloseWrite() error }).CloseWrite()
				_, _ = io.Copy(io.Discard, c)
				c.Close()
			}
		})
	}
}

// dialVia connects to the server on port straight ("direct") or through
// a CONNECT tunnel of the gateway gw.
func dialVia(b *testing.B, via, gw string, port int) net.Conn {
	b.Helper()
	var c net.Conn
	var err error
	if via == "direct" {
		c, err = net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	} else {
		c, err = connectVia(b, gw, "echo.test", port)
	}
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// sinkServer reads and drops everything, then closes.
func sinkServer(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// BenchmarkConnect: a connection and one round trip, through the gateway
// (an allowed name, no ask) and direct; the difference is the added
// connect latency.
func BenchmarkConnect(b *testing.B) {
	port := echoServer(b)
	gw, _ := testGateway(b)
	for _, via := range []string{"direct", "gateway"} {
		b.Run(via, func(b *testing.B) {
			for b.Loop() {
				c := dialVia(b, via, gw, port)
				_, _ = c.Write([]byte("x"))
				_, _ = io.ReadFull(c, make([]byte, 1))
				c.Close()
			}
		})
	}
}

// BenchmarkIdleMemory reports the gateway's heap and stacks per idle
// tunnel, 200 of them (metric bytes/conn).
func BenchmarkIdleMemory(b *testing.B) {
	port := echoServer(b)
	gw, _ := testGateway(b)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var conns []net.Conn
		for range 200 {
			c, err := connectVia(b, gw, "echo.test", port)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = c.Write([]byte("x"))
			_, _ = io.ReadFull(c, make([]byte, 1))
			conns = append(conns, c)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		// Both ends are in this process: the test's clients and the echo
		// server count too, so this is an upper bound.
		b.ReportMetric(float64(int64(after.HeapInuse+after.StackInuse)-int64(before.HeapInuse+before.StackInuse))/200, "bytes/conn")
		for _, c := range conns {
			c.Close()
		}
	}
}
