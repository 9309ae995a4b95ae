package mcpserver

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures the streamable HTTP endpoint.
type HTTPOptions struct {
	// Token is the bearer token every request must carry.
	Token string
	// NoAuth serves without a token. Callers allow it only on a loopback
	// address (dsh serve refuses it elsewhere).
	NoAuth bool
	// IdleTimeout ends a session that made no request for that long;
	// zero means never.
	IdleTimeout time.Duration
}

// maxRequestBytes bounds one HTTP request body. The SDK's default (4 MiB)
// would refuse a large heredoc command that stdio accepts (16 MiB lines).
const maxRequestBytes = 16 << 20

// Handler returns the streamable HTTP endpoint, served at /mcp.
// Cross-origin browser requests get 403, whatever their method and before
// the token is looked at (net/http's CrossOriginProtection: Sec-Fetch-Site
// and Origin checks); requests without the bearer token get 401.
// Each MCP session is isolated: its own owner, tasks and cwd.
func (s *Server) Handler(opts HTTPOptions) (http.Handler, error) {
	if opts.Token == "" && !opts.NoAuth {
		return nil, errors.New("mcpserver: a bearer token is required unless NoAuth is set")
	}
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      opts.IdleTimeout,
		MaxRequestBodyBytes: maxRequestBytes,
		Logger:              s.log,
	})
	var h http.Handler = (&httpWatches{}).guard(streamable)
	if !opts.NoAuth {
		h = bearer(opts.Token, h)
	}
	h = sameOrigin(h)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux, nil
}

// sameOrigin refuses cross-origin browser requests of every method:
// CrossOriginProtection lets GET, HEAD and OPTIONS through, but a GET opens
// an MCP event stream, so each request is checked as if it were a POST.
func sameOrigin(next http.Handler) http.Handler {
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

// bearer refuses requests that do not carry the token. The scheme is
// case-insensitive (RFC 9110 §11.1); the token is compared in constant time.
func bearer(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimLeft(got, " ")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="dsh"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
