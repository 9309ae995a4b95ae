package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ContentType is the media type of OTLP/HTTP's binary protobuf encoding.
const ContentType = "application/x-protobuf"

// Retries of a failed export: the first wait, its growth's cap.
const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 5 * time.Second
	reportEvery  = time.Minute // logging failures after the first
)

// ClientConfig is where and how a [Client] posts.
type ClientConfig struct {
	// URL is the signal's whole URL (…/v1/traces).
	URL string
	// Headers are sent with every request (an API key).
	Headers map[string]string
	// Gzip compresses the bodies.
	Gzip bool
	// Timeout bounds one export, retries included; 0 is 10 s.
	Timeout time.Duration
	// Logger receives failures; nil is slog.Default().
	Logger *slog.Logger
	// TLS configures https receivers; nil is Go's default (the system's
	// roots).
	TLS *tls.Config
}

// Client posts one signal's requests to an OTLP/HTTP receiver. A request
// that fails with a status the protocol calls retryable (429, 502, 503,
// 504) or without a response is sent again, with a growing wait (or the
// receiver's Retry-After), until the export's timeout; a failure is
// logged, the first at once and then at most one a minute with the count
// of exports lost.
type Client struct {
	cfg  ClientConfig
	http *http.Client
	// life ends at Close, and with it any post under way.
	life context.Context
	kill context.CancelFunc

	mu       sync.Mutex
	closed   bool
	final    bool // Final was called: one attempt, no retries
	failing  bool // since the last export that went through
	lost     int  // exports lost since the last report
	reported time.Time
}

// NewClient returns the client cfg describes.
func NewClient(cfg ClientConfig) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS
	}
	c := &Client{cfg: cfg, http: &http.Client{Transport: tr}}
	c.life, c.kill = context.WithCancel(context.Background())
	return c
}

// errShutdown is an export after Shutdown.
var errShutdown = errors.New("otlp: exporter is shut down")

// Post sends body, a whole request, retrying as the protocol allows.
func (c *Client) Post(ctx context.Context, body []byte) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return errShutdown
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	body, enc := c.encode(body)
	wait := firstBackoff
	for {
		retryAfter, err := c.send(ctx, body, enc)
		if err == nil {
			c.recovered()
			return nil
		}
		if retryAfter < 0 || c.isFinal() {
			return c.failed(err)
		}
		if retryAfter == 0 {
			retryAfter, wait = wait, min(2*wait, maxBackoff)
		}
		t := time.NewTimer(retryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return c.failed(fmt.Errorf("%w (last: %w)", ctx.Err(), err))
		case <-t.C:
		}
	}
}

// encode compresses body when configured; enc is its Content-Encoding.
func (c *Client) encode(body []byte) (out []byte, enc string) {
	if !c.cfg.Gzip {
		return body, ""
	}
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write(body)
	_ = w.Close()
	return b.Bytes(), "gzip"
}

// send makes one request. retryAfter is <0 when the failure is final,
// 0 when it may be retried after the backoff, else the receiver's wait.
func (c *Client) send(ctx context.Context, body []byte, enc string) (retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	req.Header.Set("Content-Type", ContentType)
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if retryable(err) {
			return 0, err
		}
		return -1, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		return 0, nil
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(max(secs, 0)) * time.Second, fmt.Errorf("otlp: %s answered %s", c.cfg.URL, resp.Status)
	}
	return -1, fmt.Errorf("otlp: %s answered %s", c.cfg.URL, resp.Status)
}

// failed logs err as the protocol's failure policy says, and returns it.
func (c *Client) failed(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lost++
	now := time.Now()
	if !c.failing || now.Sub(c.reported) >= reportEvery {
		c.cfg.Logger.Warn("otel: export failed", "url", c.cfg.URL, "err", err, "lost", c.lost)
		c.failing, c.reported, c.lost = true, now, 0
	}
	return err
}

// recovered forgets the failures counted, and logs those not yet
// reported.
func (c *Client) recovered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failing && c.lost > 0 {
		c.cfg.Logger.Warn("otel: exports resumed", "url", c.cfg.URL, "lost", c.lost)
	}
	c.failing, c.lost = false, 0
}

// Final makes every post from now on one attempt: at exit a receiver that
// is down must not hold dsh for the whole flush.
func (c *Client) Final() {
	c.mu.Lock()
	c.final = true
	c.mu.Unlock()
}

func (c *Client) isFinal() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.final
}

// retryable reports whether a request that got no response may get one
// when sent again: the network failed (refused, reset, timed out, cut
// short), not the request (a header HTTP cannot carry, a certificate
// not trusted).
func retryable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Close ends the client: a post under way is cut, and a later one fails.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.kill()
	c.http.CloseIdleConnections()
}
