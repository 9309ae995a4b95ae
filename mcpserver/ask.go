package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/tool"
)

// Asking the user (docs/spec.md §9.6). A client is asked when it declared
// elicitation with form mode, or with neither form nor url. Before
// protocol 2026-07-28 the question is an elicitation/create request sent
// from within the call, so nothing runs twice. From 2026-07-28 a server
// cannot send one while serving a request: the call ends with the
// question as an input request, and the client repeats the call with the
// answer and the request state, an HMAC (a key of this process) over the
// session, the arguments and the input the answer is about. A retry whose
// state does not verify is a new call, asked again.

// approvalInput is the key of the question in an input request.
const approvalInput = "approval"

// canElicit reports whether the client of ss can be asked with a form.
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// inputRequestsFrom is the first protocol version where a server asks
// with input requests, never with a request of its own.
const inputRequestsFrom = "2026-07-28"

// inputRequests reports whether a call is served at a protocol version
// where questions are input requests: such clients name the version in
// every request's _meta. (The initialize handshake never negotiates one.)
func inputRequests(params *mcp.CallToolParamsRaw) bool {
	v, _ := params.GetMeta()[mcp.MetaKeyProtocolVersion].(string)
	return v >= inputRequestsFrom
}

// serverRequests reports whether the SDK lets the server send ss a request
// of its own (elicitation/create, roots/list): it refuses when the client
// asked for 2026-07-28 or later at initialize, even when the handshake then
// agreed on an older version.
func serverRequests(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion < inputRequestsFrom
}

// asker is the call's asker: nil when the client cannot be asked. On a
// retry whose state verified (resumed), it answers with the client's
// answer.
func (s *Server) asker(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw, resumed bool) tool.Asker {
	if ss == nil || !canElicit(ss) {
		return nil
	}
	if !inputRequests(params) {
		if !serverRequests(ss) {
			return nil // neither form reaches this client: askFallback
		}
		return tool.AskerFunc(func(ctx context.Context, q tool.Question) (tool.Answer, error) {
			res, err := ss.Elicit(ctx, elicitParams(q))
			if err != nil {
				return tool.Answer{}, err
			}
			return answer(res), nil
		})
	}
	if res, ok := params.InputResponses[approvalInput].(*mcp.ElicitResult); ok && resumed {
		// The answer is to the question the call was suspended for, the
		// first asked again: any later one (a command's network question)
		// was never put to the user.
		var used atomic.Bool
		return tool.AskerFunc(func(context.Context, tool.Question) (tool.Answer, error) {
			if used.Swap(true) {
				return tool.Answer{}, tool.ErrSuspend
			}
			return answer(res), nil
		})
	}
	return tool.AskerFunc(func(context.Context, tool.Question) (tool.Answer, error) { return tool.Answer{}, tool.ErrSuspend })
}

// elicitParams is the form of a question: its message, and a remember
// checkbox when remembering is offered.
func elicitParams(q tool.Question) *mcp.ElicitParams {
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	if len(q.Remember) > 0 {
		schema.Properties["remember"] = &jsonschema.Schema{Type: "boolean", Title: q.RememberTitle()}
	}
	return &mcp.ElicitParams{Mode: "form", Message: q.Message, RequestedSchema: schema}
}

func answer(res *mcp.ElicitResult) tool.Answer {
	switch res.Action {
	case "accept":
		remember, _ := res.Content["remember"].(bool)
		return tool.Answer{Choice: tool.Accepted, Remember: remember}
	case "decline":
		return tool.Answer{Choice: tool.Declined}
	}
	return tool.Answer{Choice: tool.Dismissed}
}

// suspended is the result that asks q as an input request. Its state can
// be used once (a nonce the session keeps).
func (s *Server) suspended(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw, q *tool.Question) *mcp.CallToolResult {
	if q.Resume != nil {
		r := *q.Resume
		r.Nonce = s.newNonce(ss)
		q.Resume = &r
	}
	resume, _ := json.Marshal(q.Resume)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: elicitParams(*q)},
		RequestState:  base64.RawURLEncoding.EncodeToString(resume) + "." + s.mac(ss, params, resume),
	}
}

// mac signs what a suspended call settled (resume: the input after hooks,
// their advice) with the session, the tool and the arguments it was asked
// for.
func (s *Server) mac(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw, resume []byte) string {
	mac := hmac.New(sha256.New, s.stateKey)
	for _, part := range [][]byte{[]byte(ss.ID()), []byte(params.Name), params.Arguments, resume} {
		fmt.Fprintf(mac, "%d:", len(part))
		mac.Write(part)
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// resumed returns what a retry's request state says was settled, when this
// server gave that state for the same session, tool and arguments; ok is
// false for any other retry, which is a new call.
func (s *Server) resumed(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw) (r *tool.Resume, ok bool) {
	enc, sig, found := strings.Cut(params.RequestState, ".")
	if ss == nil || !found {
		return nil, false
	}
	resume, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !hmac.Equal([]byte(sig), []byte(s.mac(ss, params, resume))) {
		return nil, false
	}
	if json.Unmarshal(resume, &r) != nil || r == nil || !s.useNonce(ss, r.Nonce) {
		return nil, false
	}
	return r, true
}

// Nonces of suspended calls: a session keeps at most maxNonces, each for
// nonceLife, so that a client cannot replay an answered state (skipping
// the hooks that guard the call) beyond the one retry it was given for.
const (
	maxNonces = 64
	nonceLife = time.Hour
)

// newNonce records and returns a new nonce of ss, dropping the oldest
// when the session has too many.
func (s *Server) newNonce(ss *mcp.ServerSession) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	n := base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.nonces[ss]
	if m == nil {
		m = make(map[string]time.Time)
		s.nonces[ss] = m
	}
	if len(m) >= maxNonces {
		oldest := ""
		for k, t := range m {
			if oldest == "" || t.Before(m[oldest]) {
				oldest = k
			}
		}
		delete(m, oldest)
	}
	m[n] = time.Now()
	return n
}

// useNonce reports whether n is a live nonce of ss, and uses it up.
func (s *Server) useNonce(ss *mcp.ServerSession, n string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	made, ok := s.nonces[ss][n]
	delete(s.nonces[ss], n)
	return ok && time.Since(made) < nonceLife
}

// newStateKey is the per-process key of the request states.
func newStateKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return key
}
