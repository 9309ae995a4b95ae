package sshtest

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a server until Freeze, which stops
// every byte in both directions and closes nothing: neither side sees an
// end, a reset or an error, only silence.
type Proxy struct {
	// Port is where the proxy listens, on the server's host.
	Port int

	l      net.Listener
	mu     sync.Mutex
	frozen bool
	thaw   chan struct{} // closed when the test ends: copies blocked by Freeze give up
	conns  []net.Conn
	wg     sync.WaitGroup
}

// Proxy starts a proxy to s, stopped when t ends.
func (s *Server) Proxy(t testing.TB) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(s.Host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Port: l.Addr().(*net.TCPAddr).Port, l: l, thaw: make(chan struct{})}
	target := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	p.wg.Go(func() { p.accept(target) })
	t.Cleanup(p.stop)
	return p
}

// accept forwards each connection it accepts until the listener closes.
func (p *Proxy) accept(target string) {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Go(func() { p.copy(up, c) })
		p.wg.Go(func() { p.copy(c, up) })
	}
}

// copy copies src to dst chunk by chunk, holding each chunk once frozen.
func (p *Proxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.isFrozen() {
				<-p.thaw
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) isFrozen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frozen
}

// Freeze stops all traffic through the proxy, for good.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// stop closes the listener and every connection.
func (p *Proxy) stop() {
	_ = p.l.Close()
	close(p.thaw)
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
