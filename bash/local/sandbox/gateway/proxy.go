package gateway

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// proxyReadTimeout bounds how long a proxy client may take to send its
// request line and headers.
const proxyReadTimeout = 30 * time.Second

// proxy serves a client that came to the listener itself, through
// HTTP_PROXY and the like: a CONNECT, or a plain HTTP request in absolute
// form. It is decided exactly as a captured connection to the same host
// and port.
func (g *Gateway) proxy(c *net.TCPConn, caller Caller) {
	start := time.Now()
	// The request line and headers are bounded: http.ReadRequest alone
	// would read headers for as long as the client sends them.
	head := &io.LimitedReader{R: c, N: maxProxyHeader}
	br := bufio.NewReaderSize(head, 4096)
	_ = c.SetReadDeadline(start.Add(proxyReadTimeout))
	req, err := http.ReadRequest(br)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		proxyReply(c, http.StatusBadRequest, "dsh: not an HTTP proxy request (or headers over 64 KiB)")
		return
	}
	head.N = math.MaxInt64 // a body, or the tunnel's first bytes
	host, port, err := proxyTarget(req)
	if err != nil {
		proxyReply(c, http.StatusBadRequest, "dsh: "+err.Error())
		return
	}
	rec := Record{Caller: caller.ID, Host: host, Port: port}
	var up net.Conn
	allowed := false
	if a, err := netip.ParseAddr(host); err == nil {
		up, allowed = g.connectLiteral(netip.AddrPortFrom(a, uint16(port)), &rec)
	} else {
		up, allowed = g.connect(caller, &rec)
	}
	if up == nil {
		code := http.StatusForbidden
		if allowed {
			code = http.StatusBadGateway
		} else if caller.Refused != nil {
			caller.Refused(host)
		}
		rec.Decision = map[bool]string{true: Allow, false: Deny}[allowed]
		rec.Duration = time.Since(start)
		g.audit(rec) // before the answer, which may end the command
		proxyReply(c, code, "dsh: network access to "+hostPort(host, port)+" refused ("+rec.Rule+")")
		return
	}
	if req.Method == http.MethodConnect {
		if _, err := c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
			up.Close()
			g.auditFailed(&rec, start, err)
			return
		}
		head, _ := br.Peek(br.Buffered())
		g.carry(c, head, up, &rec, start)
		return
	}
	// A plain request: sent on in origin form, the only one on this
	// connection (the next could be for another host).
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	var sent countingWriter
	sent.w = up
	if err := req.Write(&sent); err != nil {
		up.Close()
		rec.BytesUp = sent.n
		g.auditFailed(&rec, start, err)
		return
	}
	rec.BytesUp = sent.n
	g.carry(c, nil, up, &rec, start)
}

// maxProxyHeader bounds a proxy request's line and headers.
const maxProxyHeader = 64 << 10

// auditFailed records an allowed proxy connection that failed after the
// dial: what it sent still counts.
func (g *Gateway) auditFailed(rec *Record, start time.Time, err error) {
	rec.Decision = Allow
	rec.Rule += "; failed: " + err.Error()
	rec.Duration = time.Since(start)
	g.audit(*rec)
}

// proxyTarget is the host and port a proxy request is for: a name in
// the form the rules compare (lower case, no final dot), so that another
// spelling is neither another question nor another rule's match.
func proxyTarget(req *http.Request) (string, int, error) {
	host, port, err := proxyHostPort(req)
	if err != nil {
		return "", 0, err
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String(), port, nil
	}
	name, ok := canonical(host)
	if !ok {
		return "", 0, fmt.Errorf("%q is not a host name", host)
	}
	return name, port, nil
}

func proxyHostPort(req *http.Request) (string, int, error) {
	if req.Method == http.MethodConnect {
		host, p, err := net.SplitHostPort(req.Host)
		port, perr := strconv.Atoi(p)
		if err != nil || perr != nil || port < 1 || port > 65535 || host == "" {
			return "", 0, fmt.Errorf("CONNECT needs host:port, got %q", req.Host)
		}
		return host, port, nil
	}
	if req.URL.Scheme != "http" || req.URL.Host == "" {
		return "", 0, fmt.Errorf("a proxy request needs an http:// URL (use CONNECT for https), got %q", req.RequestURI)
	}
	port := 80
	if p := req.URL.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("bad port in %q", req.URL.Host)
		}
		port = n
	}
	return req.URL.Hostname(), port, nil
}

// proxyReply answers a proxy client with status and a one-line text, and
// ends the connection.
func proxyReply(c net.Conn, status int, text string) {
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		status, http.StatusText(status), len(text)+1, text)
}

// countingWriter counts what it passes on.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
