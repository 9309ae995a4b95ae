package mcpserver

import (
	"crypto/subtle"
	"errors"
	"net/http"
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

// Handler returns the streamable HTTP endpoint, served at /mcp. Requests
// without the bearer token get 401; cross-origin browser requests get 403
// (net/http's CrossOriginProtection: Sec-Fetch-Site and Origin checks).
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
	h := http.NewCrossOriginProtection().Handler(streamable)
	if !opts.NoAuth {
		h = bearer(opts.Token, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux, nil
}

// bearer refuses requests that do not carry the token.
func bearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="dsh"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
