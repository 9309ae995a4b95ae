package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-go/dsh/acp"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// exampleAgent is a minimal ACP agent: each prompt's text is run as one
// foreground bash command, shown to the client as a tool call. It keeps
// each session's log in memory and replays it on session/load.
type exampleAgent struct {
	conn  *acpsdk.AgentSideConnection
	tools *tool.Registry

	mu       sync.Mutex
	caps     acpsdk.ClientCapabilities // from the latest initialize
	sessions map[acpsdk.SessionId]*exampleSession
	made     int // sessions made: ids are never reused
	calls    int
}

// session/load is optional in ACP: the SDK serves it for an agent that
// implements AgentLoader (and the agent advertises it in Initialize).
var _ acpsdk.AgentLoader = (*exampleAgent)(nil)

type exampleSession struct {
	owner     *session.Session   // the bash tool's session: its cwd
	presenter *acp.Presenter     // the client's capability, snapshotted
	log       []acp.Entry        // what was rendered, for session/load
	cancel    context.CancelFunc // the running prompt's
}

// presenterError logs what a presenter reports (the card fell back).
func presenterError(err error) { slog.Error("presenter", "err", err) }

func (a *exampleAgent) Initialize(_ context.Context, req acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	a.mu.Lock()
	a.caps = req.ClientCapabilities
	a.mu.Unlock()
	return acpsdk.InitializeResponse{
		ProtocolVersion:   acpsdk.ProtocolVersionNumber,
		AgentCapabilities: acpsdk.AgentCapabilities{LoadSession: true},
	}, nil
}

func (a *exampleAgent) NewSession(_ context.Context, req acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.made++
	id := acpsdk.SessionId(fmt.Sprintf("sess-%d", a.made))
	a.sessions[id] = &exampleSession{
		owner:     session.New(string(id), req.Cwd),
		presenter: acp.NewPresenter(a.tools, acp.Session{ID: id, Cwd: req.Cwd, Capabilities: a.caps}, presenterError),
	}
	return acpsdk.NewSessionResponse{SessionId: id}, nil
}

// LoadSession replays a session's log to the client, rendered for the
// capability of the latest initialize, which the session keeps from now on.
func (a *exampleAgent) LoadSession(ctx context.Context, req acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	a.mu.Lock()
	s, ok := a.sessions[req.SessionId]
	var loaded acp.Session
	var log []acp.Entry
	if ok {
		// The session's own cwd, which its commands ran in: the replay
		// renders what the live session did.
		loaded = acp.Session{ID: req.SessionId, Cwd: s.owner.Cwd(), Capabilities: a.caps}
		log = slices.Clone(s.log)
		s.presenter = acp.NewPresenter(a.tools, loaded, presenterError)
	}
	a.mu.Unlock()
	if !ok {
		return acpsdk.LoadSessionResponse{}, acpsdk.NewInvalidParams(map[string]any{"sessionId": req.SessionId})
	}
	for _, n := range acp.Replay(a.tools, loaded, log, presenterError) {
		if err := a.conn.SessionUpdate(ctx, n); err != nil {
			return acpsdk.LoadSessionResponse{}, err
		}
	}
	return acpsdk.LoadSessionResponse{}, nil
}

func (a *exampleAgent) Prompt(ctx context.Context, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	a.mu.Lock()
	s, ok := a.sessions[req.SessionId]
	a.calls++
	callID := fmt.Sprintf("call-%d", a.calls)
	ctx, cancel := context.WithCancel(ctx)
	var presenter *acp.Presenter
	if ok {
		s.cancel = cancel
		presenter = s.presenter
	}
	a.mu.Unlock()
	defer cancel()
	if !ok {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]any{"sessionId": req.SessionId})
	}
	var command strings.Builder
	for _, block := range req.Prompt {
		if block.Text != nil {
			command.WriteString(block.Text.Text)
		}
	}
	args, _ := json.Marshal(map[string]any{"command": command.String(), "description": "Run the prompt"})
	record := func(e acp.Entry) {
		a.mu.Lock()
		s.log = append(s.log, e)
		a.mu.Unlock()
	}
	// session/cancel cancels ctx (the SDK does, and Cancel below), yet the
	// client must still see the call end: the updates are sent regardless.
	send := context.WithoutCancel(ctx)

	// The call, the run, the result: each rendered update is logged, then
	// sent to the client.
	call := presenter.Call("bash", callID, args)
	record(acp.Entry{Name: "bash", CallID: callID, Args: string(args)})
	if err := a.conn.SessionUpdate(send, call); err != nil {
		presenter.Forget(callID) // no result will follow
		return acpsdk.PromptResponse{}, err
	}
	// The command policy asks the user with session/request_permission.
	asker := acp.NewAsker(a.conn, req.SessionId, callID)
	res := a.tools.Execute(ctx, tool.Call{Name: "bash", Args: args, Session: s.owner, Asker: asker})
	result := presenter.Result("bash", callID, args, res)
	record(acp.Entry{Name: "bash", CallID: callID, Args: string(args), Result: acp.StoreResult(res)})
	if err := a.conn.SessionUpdate(send, result); err != nil {
		return acpsdk.PromptResponse{}, err
	}
	if ctx.Err() != nil {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	}
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}

func (a *exampleAgent) Cancel(_ context.Context, n acpsdk.CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sessions[n.SessionId]; ok && s.cancel != nil {
		s.cancel() // the bash tool kills the command's processes
	}
	return nil
}

func (a *exampleAgent) CloseSession(_ context.Context, req acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	a.mu.Lock()
	s, ok := a.sessions[req.SessionId]
	delete(a.sessions, req.SessionId)
	a.mu.Unlock()
	if ok {
		s.owner.End()
	}
	return acpsdk.CloseSessionResponse{}, nil
}

// What this agent does not offer.
var errUnsupported = errors.New("not supported by this example agent")

func (a *exampleAgent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}
func (a *exampleAgent) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, errUnsupported
}
func (a *exampleAgent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, errUnsupported
}
func (a *exampleAgent) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, errUnsupported
}
func (a *exampleAgent) SetSessionMode(context.Context, acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	return acpsdk.SetSessionModeResponse{}, errUnsupported
}

// serveExampleAgent composes dsh's bash tool (host.Standard) and serves the
// agent over in/out until in closes; then every session's processes are
// ended. Its policy asks before any touch (an ask rule: no remember) and
// before any command no rule allows (remember offered); read-only
// commands and exit run unasked.
func serveExampleAgent(in io.Reader, out io.Writer) error {
	no := false
	st, err := host.Standard(config.File{
		Tools:       []string{config.ToolBash},
		Permissions: &config.Permissions{Default: "ask", Allow: []string{"exit *"}, Ask: []string{"touch *"}, ClaudeSettings: &no},
	})
	if err != nil {
		return err
	}
	defer st.Close()
	agent := &exampleAgent{tools: st.Tools, sessions: make(map[acpsdk.SessionId]*exampleSession)}
	// The SDK starts serving inside NewAgentSideConnection, before it (and
	// the agent) has the connection: hold the input back until both do.
	ready := make(chan struct{})
	agent.conn = acpsdk.NewAgentSideConnection(agent, out, heldReader{in, ready})
	close(ready)
	<-agent.conn.Done()
	agent.mu.Lock()
	defer agent.mu.Unlock()
	for _, s := range agent.sessions {
		s.owner.End()
	}
	return nil
}

// heldReader reads nothing until ready is closed.
type heldReader struct {
	r     io.Reader
	ready <-chan struct{}
}

func (h heldReader) Read(p []byte) (int, error) {
	<-h.ready
	return h.r.Read(p)
}

// A Go ACP agent that runs a bash call per prompt: the client (here, raw
// JSON-RPC lines) advertises terminal_output and gets a terminal card.
func Example() {
	clientOut, agentIn := io.Pipe()
	agentOut, clientIn := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveExampleAgent(clientOut, clientIn) }()

	send := func(line string) { fmt.Fprintln(agentIn, line) }
	lines := bufio.NewScanner(agentOut)
	// await prints each session/update's params until the response to id.
	await := func(id int) {
		for lines.Scan() {
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(lines.Bytes(), &msg) == nil && msg.Method == "session/update" {
				fmt.Println(string(msg.Params))
			}
			if msg.ID != nil && *msg.ID == id {
				return
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"terminal_output":true}}}}`)
	await(1)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	await(2)
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"echo hello; exit 3"}]}}`)
	await(3)
	agentIn.Close()
	if err := <-done; err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"sessionId":"sess-1","update":{"_meta":{"terminal_info":{"cwd":"/","terminal_id":"call-1"}},"content":[{"content":{"text":"Run the prompt","type":"text"},"type":"content"},{"terminalId":"call-1","type":"terminal"}],"kind":"execute","rawInput":"echo hello; exit 3","sessionUpdate":"tool_call","status":"in_progress","title":"echo hello; exit 3","toolCallId":"call-1"}}
	// {"sessionId":"sess-1","update":{"_meta":{"terminal_exit":{"exit_code":3,"terminal_id":"call-1"},"terminal_output":{"data":"hello\n[exit code: 3]","terminal_id":"call-1"}},"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"call-1"}}
}
