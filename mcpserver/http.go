package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
)

// HTTPOptions configures the streamable HTTP endpoint.
type HTTPOptions struct {
	// Token is the bearer token every request must carry: at least
	// MinTokenLength characters ([CheckToken]).
	Token string
	// NoAuth serves without a token. Callers allow it only on a loopback
	// address (dsh serve refuses it elsewhere).
	NoAuth bool
	// IdleTimeout ends a session that made no request for that long;
	// zero means never.
	IdleTimeout time.Duration
	// FirstCallTimeout ends a session that made no tool call this long
	// after its initialize (serve.idleSessionMs); zero leaves it to
	// IdleTimeout. A server keeps the first non-zero value it is given.
	FirstCallTimeout time.Duration
	// ReadTimeout bounds the reading of a request, headers and body
	// ([Server.HTTPServer]); zero means a minute.
	ReadTimeout time.Duration
	// MaxPendingConns bounds the connections no request of which has
	// authenticated yet ([Server.HTTPServer]); zero means
	// DefaultMaxPendingConns.
	MaxPendingConns int
	// MaxSessions bounds the MCP sessions open at once; a request that
	// would open another gets 503. Zero means no limit.
	MaxSessions int
	// MaxRequestBytes bounds one request body (413 beyond); zero means
	// config.DefaultMaxRequestBytes (8 MiB: a 5 MiB heredoc command, as
	// JSON, still fits; the SDK's own 4 MiB would refuse it).
	MaxRequestBytes int64
	// Metrics, when set, is served at GET /metrics, behind the token
	// (unless NoAuth). GET /healthz and GET /readyz are always served,
	// without a token (docs/spec.md §15.2).
	Metrics http.Handler
}

// tooManySessions is the body of the 503 a request that would open a
// session over the limit gets (exact, docs/spec.md §6.1).
func tooManySessions(limit int) string {
	return "too many sessions (limit " + strconv.Itoa(limit) + "); try again when one has ended"
}

// MinTokenLength is the fewest characters a bearer token may have: a
// shorter one can be guessed by a client that simply tries.
const MinTokenLength = 16

// CheckToken refuses a bearer token shorter than MinTokenLength
// characters.
func CheckToken(token string) error {
	if n := utf8.RuneCountInString(token); n < MinTokenLength {
		return fmt.Errorf("the bearer token has %d characters, fewer than %d: use a random one (openssl rand -hex 32)", n, MinTokenLength)
	}
	return nil
}

// HTTPServer returns an http.Server for the endpoint of [Server.Handler],
// hardened against clients that never authenticate: headers must arrive
// within 10 s and a whole request within opts.ReadTimeout (its response
// is not bound: it streams as long as its command runs); an
// authenticated keep-alive connection idle for 2 minutes is closed; a
// connection no request of which carried the token is closed after its
// response (a 401 says "Connection: close"), and when more than
// opts.MaxPendingConns are open
// the oldest of them is closed, so a flood of idle connections can
// exhaust neither the server's file descriptors nor its patience with the
// next real client. Serve it on any listener.
func (s *Server) HTTPServer(opts HTTPOptions) (*http.Server, error) {
	g := newConnGuard(opts.MaxPendingConns)
	h, err := s.httpHandler(opts, g)
	if err != nil {
		return nil, err
	}
	return s.guarded(h, g, opts.ReadTimeout), nil
}

// HealthServer returns an http.Server for [Server.Health] on a listener of
// its own (dsh serve --metrics-addr), hardened as [Server.HTTPServer] is:
// the same timeouts, and the same bound of maxPending (0:
// DefaultMaxPendingConns) on connections no request has authenticated.
// Only a request to /metrics that carries the token authenticates its
// connection; with noAuth none does, so every connection there is closed
// after its response.
func (s *Server) HealthServer(metrics http.Handler, token string, noAuth bool, maxPending int) *http.Server {
	g := newConnGuard(maxPending)
	mux := http.NewServeMux()
	s.healthRoutes(mux, metrics, token, noAuth, g)
	return s.guarded(mux, g, 0)
}

// guarded is the http.Server of h whose connections g guards, with the
// timeouts of [Server.HTTPServer]; readTimeout 0 means a minute.
func (s *Server) guarded(h http.Handler, g *connGuard, readTimeout time.Duration) *http.Server {
	if readTimeout <= 0 {
		readTimeout = defaultReadTimeout
	}
	return &http.Server{
		Handler:           g.closeUnauthenticated(h),
		ReadHeaderTimeout: min(readHeaderTimeout, readTimeout),
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		ConnContext:       g.connContext,
		ConnState:         g.connState,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Handler returns the streamable HTTP endpoint, served at /mcp.
// Cross-origin browser requests get 403, whatever their method and before
// the token is looked at (net/http's CrossOriginProtection: Sec-Fetch-Site
// and Origin checks); requests without the bearer token get 401.
// Each MCP session is isolated: its own owner, tasks and cwd.
// [Server.HTTPServer] serves it with limits on connections.
func (s *Server) Handler(opts HTTPOptions) (http.Handler, error) {
	return s.httpHandler(opts, nil)
}

// httpHandler is Handler whose requests, once past the bearer check, tell g
// that their connection is authenticated; g may be nil.
func (s *Server) httpHandler(opts HTTPOptions, g *connGuard) (http.Handler, error) {
	if opts.Token == "" && !opts.NoAuth {
		return nil, errors.New("mcpserver: a bearer token is required unless NoAuth is set")
	}
	if !opts.NoAuth {
		if err := CheckToken(opts.Token); err != nil {
			return nil, fmt.Errorf("mcpserver: %w", err)
		}
	}
	maxBody := opts.MaxRequestBytes
	if maxBody <= 0 {
		maxBody = config.DefaultMaxRequestBytes
	}
	if opts.FirstCallTimeout > 0 {
		s.expireUncalled(opts.FirstCallTimeout)
	}
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      opts.IdleTimeout,
		MaxRequestBodyBytes: maxBody,
		Logger:              slog.New(sdkLog{s.log.Handler(), s.sessionName}),
	})
	ids := &httpIDs{s: s, bySession: make(map[string]*requestIDs)}
	watched := (&httpWatches{maxBody: maxBody}).guard(streamable)
	limited := s.refuseWhileDraining(s.sessionLimit(opts.MaxSessions, ids.guard(maxBody, watched)))
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authenticated(w, r, g)
		limited.ServeHTTP(w, r)
	})
	if !opts.NoAuth {
		h = bearer(opts.Token, h)
	}
	h = sameOrigin(h)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	s.healthRoutes(mux, opts.Metrics, opts.Token, opts.NoAuth, g)
	return mux, nil
}

// sessionLimit refuses, with 503, a request that would open an MCP
// session (one without an Mcp-Session-Id) while max sessions are open or
// being opened; max 0 is no limit.
//
// A request counts as opening only until its response starts: by then the
// SDK has initialized its session (or refused it), and the client may
// already open the next one while the SDK is still finishing this
// request. Counting it until the handler returned counted the new session
// twice, and refused a second session as if it were a third.
func (s *Server) sessionLimit(max int, next http.Handler) http.Handler {
	if max <= 0 {
		return next
	}
	var mu sync.Mutex
	opening := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		if s.openSessions()+opening >= max {
			mu.Unlock()
			w.Header().Set("Retry-After", "60")
			http.Error(w, tooManySessions(max), http.StatusServiceUnavailable)
			return
		}
		opening++
		mu.Unlock()
		ow := &openingWriter{ResponseWriter: w, done: func() {
			mu.Lock()
			opening--
			mu.Unlock()
		}}
		defer ow.started()
		next.ServeHTTP(ow, r)
	})
}

// openingWriter calls done once, when the response starts or the handler
// returns, whichever is first.
type openingWriter struct {
	http.ResponseWriter
	once sync.Once
	done func()
}

func (ow *openingWriter) started() { ow.once.Do(ow.done) }

func (ow *openingWriter) WriteHeader(code int) {
	ow.started()
	ow.ResponseWriter.WriteHeader(code)
}

func (ow *openingWriter) Write(p []byte) (int, error) {
	ow.started()
	return ow.ResponseWriter.Write(p)
}

func (ow *openingWriter) Flush() {
	ow.started()
	if f, ok := ow.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (ow *openingWriter) Unwrap() http.ResponseWriter { return ow.ResponseWriter }

// openSessions counts the SDK's open sessions that were initialized. A
// request without a session id makes the SDK open a session whatever its
// method, and a client that first tries a newer protocol's discovery
// request leaves such a session behind until that request's handler
// returns: it is not a session anyone can use.
func (s *Server) openSessions() int {
	n := 0
	for ss := range s.mcp.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

// sameOrigin refuses cross-origin browser requests of every method:
// CrossOriginProtection lets GET, HEAD and OPTIONS through, but a GET opens
// an MCP event stream, so each request is checked as if it were a POST.
func sameOrigin(next http.Handler) http.HandlerFunc {
	check := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := r.Clone(r.Context())
		probe.Method = http.MethodPost
		if err := check.Check(probe); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The 401 of a request without the token: the challenge (RFC 6750 §3) and
// one line saying which of the two went wrong, so that a user setting up a
// client can tell a header the client did not send from a token that
// differs. Saying which reveals nothing about the token.
const (
	authChallenge = `Bearer realm="dsh"`
	// MissingTokenBody is the body when no bearer token was sent (no
	// Authorization header, or another scheme).
	MissingTokenBody = "missing bearer token: send the header Authorization: Bearer <token>"
	// WrongTokenBody is the body when a bearer token was sent but is not
	// the server's.
	WrongTokenBody = "wrong bearer token: it is not the token dsh serve was started with"
)

// bearer refuses requests that do not carry the token. The scheme is
// case-insensitive (RFC 9110 §11.1); the token is compared in constant time.
func bearer(token string, next http.Handler) http.HandlerFunc {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got = strings.TrimLeft(got, " ")
		switch {
		case !strings.EqualFold(scheme, "Bearer") || got == "":
			unauthorized(w, MissingTokenBody)
		case !sameToken(got, token):
			unauthorized(w, WrongTokenBody)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// unauthorized writes the 401 with the challenge and body.
func unauthorized(w http.ResponseWriter, body string) {
	w.Header().Set("WWW-Authenticate", authChallenge)
	http.Error(w, body, http.StatusUnauthorized)
}

// sameToken compares two tokens in time that depends on neither their
// contents nor their lengths: subtle.ConstantTimeCompare returns at once
// for slices of different lengths, which tells a client probing the
// server how long the token is. The SHA-256 digests always have the same
// length.
func sameToken(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
