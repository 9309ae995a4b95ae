package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-go/dsh/acp"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// exampleAgent is a minimal ACP agent: each prompt's text is run as one
// foreground bash command, shown to the client as a tool call.
type exampleAgent struct {
	conn  *acpsdk.AgentSideConnection
	tools *tool.Registry

	mu       sync.Mutex
	caps     acpsdk.ClientCapabilities
	sessions map[acpsdk.SessionId]*exampleSession
	calls    int
}

type exampleSession struct {
	owner     *session.Session   // the bash tool's session: its cwd
	presenter *acp.Presenter     // the client's capability, snapshotted
	log       []acp.Entry        // what was rendered, for session/load
	cancel    context.CancelFunc // the running prompt's
}

func (a *exampleAgent) Initialize(_ context.Context, req acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	a.mu.Lock()
	a.caps = req.ClientCapabilities
	a.mu.Unlock()
	return acpsdk.InitializeResponse{ProtocolVersion: acpsdk.ProtocolVersionNumber}, nil
}

func (a *exampleAgent) NewSession(_ context.Context, req acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := acpsdk.SessionId(fmt.Sprintf("sess-%d", len(a.sessions)+1))
	onError := func(err error) { slog.Error("presenter", "err", err) }
	a.sessions[id] = &exampleSession{
		owner:     session.New(string(id), req.Cwd),
		presenter: acp.NewPresenter(a.tools, acp.Session{ID: id, Cwd: req.Cwd, Capabilities: a.caps}, onError),
	}
	return acpsdk.NewSessionResponse{SessionId: id}, nil
}

func (a *exampleAgent) Prompt(ctx context.Context, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	a.mu.Lock()
	s, ok := a.sessions[req.SessionId]
	a.calls++
	callID := fmt.Sprintf("call-%d", a.calls)
	ctx, cancel := context.WithCancel(ctx)
	if ok {
		s.cancel = cancel
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

	// The call, the run, the result: each rendered update goes to the client.
	if err := a.conn.SessionUpdate(ctx, s.presenter.Call("bash", callID, args)); err != nil {
		return acpsdk.PromptResponse{}, err
	}
	res := a.tools.Execute(ctx, tool.Call{Name: "bash", Args: args, Session: s.owner})
	if err := a.conn.SessionUpdate(ctx, s.presenter.Result("bash", callID, args, res)); err != nil {
		return acpsdk.PromptResponse{}, err
	}
	a.mu.Lock()
	s.log = append(s.log, acp.Entry{Name: "bash", CallID: callID, Args: string(args)}, acp.Entry{Name: "bash", CallID: callID, Args: string(args), Result: &res})
	a.mu.Unlock()
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

// serveExampleAgent composes dsh's bash tool and serves the agent over
// in/out until in closes; then every session's processes are ended.
func serveExampleAgent(in io.Reader, out io.Writer) error {
	exec, err := local.New(config.Local{})
	if err != nil {
		return err
	}
	defer exec.Close()
	h := host.New()
	defer h.Close()
	tools := tool.NewRegistry()
	err = errors.Join(
		h.Provide(host.Executor, exec),
		h.Provide(host.Tools, tools),
		h.Provide(host.Prompt, prompt.NewRegistry()),
		h.Load(bashtool.Plugin(bashtool.Config{})),
	)
	if err != nil {
		return err
	}
	agent := &exampleAgent{tools: tools, sessions: make(map[acpsdk.SessionId]*exampleSession)}
	agent.conn = acpsdk.NewAgentSideConnection(agent, out, in)
	<-agent.conn.Done()
	agent.mu.Lock()
	defer agent.mu.Unlock()
	for _, s := range agent.sessions {
		s.owner.End()
	}
	return nil
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
