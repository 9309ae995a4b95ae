package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

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

// inputRequests reports whether ss speaks a protocol where questions are
// input requests.
func inputRequests(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// asker is the call's asker: nil when the client cannot be asked.
func (s *Server) asker(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw) tool.Asker {
	if ss == nil || !canElicit(ss) {
		return nil
	}
	if !inputRequests(ss) {
		return tool.AskerFunc(func(ctx context.Context, q tool.Question) (tool.Answer, error) {
			res, err := ss.Elicit(ctx, elicitParams(q))
			if err != nil {
				return tool.Answer{}, err
			}
			return answer(res), nil
		})
	}
	if res, ok := params.InputResponses[approvalInput].(*mcp.ElicitResult); ok && s.verify(ss, params) {
		return tool.AskerFunc(func(context.Context, tool.Question) (tool.Answer, error) { return answer(res), nil })
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

// suspended is the result that asks q as an input request.
func (s *Server) suspended(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw, q *tool.Question) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: elicitParams(*q)},
		RequestState:  s.state(ss, params),
	}
}

// state is the request state of a suspended call: an HMAC over the
// session, the tool, its arguments and the input asked about (the same
// arguments until hooks may rewrite them).
func (s *Server) state(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw) string {
	mac := hmac.New(sha256.New, s.stateKey)
	for _, part := range [][]byte{[]byte(ss.ID()), []byte(params.Name), params.Arguments, params.Arguments} {
		fmt.Fprintf(mac, "%d:", len(part))
		mac.Write(part)
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// verify reports whether a retry's request state is the one this server
// gave for the same session and arguments.
func (s *Server) verify(ss *mcp.ServerSession, params *mcp.CallToolParamsRaw) bool {
	return params.RequestState != "" && hmac.Equal([]byte(params.RequestState), []byte(s.state(ss, params)))
}

// newStateKey is the per-process key of the request states.
func newStateKey() []byte {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return key
}
