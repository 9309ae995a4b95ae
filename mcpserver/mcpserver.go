// Package mcpserver is dsh's MCP front end: a thin adapter from the Model
// Context Protocol (the official Go SDK) to the tool registry.
//
// Every tool of the registry is registered with the SDK's raw
// [mcp.Server.AddTool], which leaves argument validation to the caller:
// the registry validates, so the exact messages of docs/spec.md §3.2 reach the
// client as error results rather than as protocol errors. A result's first
// content block is the model-facing text; the tool's notes and the
// session's pending finish notices follow as further text blocks (oldest
// first, each once); structuredContent carries the tool's structured facts.
// The prompt sections are the server's instructions. A call to a tool the
// server does not list is a protocol error (-32602, `unknown tool "<name>"`,
// from the SDK), as MCP specifies for unknown tools, rather than the
// registry's `Error: unknown tool "<name>"` result.
//
// Each MCP session is one owner ([session.Session]), made on the session's
// first tool call. Its cwd is the server's --workdir, else the first
// file:// root the client offers (if it supports roots; when that root is
// no directory on this machine, the fallback is used), else DefaultCwd
// (dsh sets the config's local.cwd), else the server's cwd. With Remote
// (executor ssh) the roots and the server's cwd are left out: Workdir, else
// DefaultCwd (ssh.cwd), else the remote user's home. Clients on
// protocol 2026-07-28 or later are asked for their roots
// with a multi round-trip input request (SEP-2322: the first call's result
// asks for the roots, the client repeats the call with them); older clients
// get a roots/list request within the first call, and a client that does not
// answer it within 5 s gets the fallback. When the MCP session ends
// (stdio EOF, HTTP DELETE, the idle timeout) the owner ends: its tasks are
// killed and awaited, its records and spill files dropped. [Server.Close]
// does that for every session. An HTTP session that makes no tool call
// within [HTTPOptions.FirstCallTimeout] of its initialize is ended (idle.go). Over stdio, EOF ends the session only once
// every call read has been answered, and a request dsh sent the client
// that is still unanswered then gets an error on the client's behalf
// (drain.go), so a session piped from a file is answered in full.
//
// Progress: a call that carries a progress token gets, from its arrival
// to its result, notifications at most every 250 ms and at least every
// second ([tool.Heartbeat], docs/spec.md §6.4, §12): progress = the bytes of
// output so far + the notifications already sent, message = the last
// non-empty output line or `running for Ns`. A client that resets its
// timeout on progress so waits through hooks, asks and quiet commands.
//
// Yielding: every call may yield ([tool.AllowYield], from its arrival): a
// foreground bash command still running after bash.yieldAfterMs goes on
// as a background task, and the call returns the output so far.
//
// Cancellation: the SDK cancels a call's context on notifications/cancelled
// (and when an HTTP request goes away); the bash tool kills the foreground
// command's group at once. The SDK would still send the call's response,
// which MCP says the receiver should not, and clients log; dsh drops it,
// and the call's progress notifications, in the transports it owns
// (cancel.go): the stdio line transport and each POST's event stream.
package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// Options configures a Server.
type Options struct {
	Tools  *tool.Registry
	Prompt *prompt.Registry
	// Workdir, when set, is every session's cwd.
	Workdir string
	// DefaultCwd is the cwd of a session that gets no root from its
	// client; "" means the server's cwd.
	DefaultCwd string
	// Remote says that commands run on another machine (executor ssh,
	// docs/spec.md §13): the client's roots and the server's cwd name
	// nothing there, so a session's cwd is Workdir, else DefaultCwd, else
	// "" (the executor's default: the remote user's home).
	Remote  bool
	Version string
	Logger  *slog.Logger
	// OnIdle, when set, is called after a session's owner ended and no
	// other owner is left (dsh serve returns freed memory to the system
	// then).
	OnIdle func()
}

// Server serves the registry's tools over MCP.
type Server struct {
	opts Options
	mcp  *mcp.Server
	log  *slog.Logger

	mu       sync.Mutex
	owners   map[*mcp.ServerSession]*session.Session
	closed   bool
	watchers sync.WaitGroup
	nextID   uint64
	stateKey []byte                                      // signs the request states of suspended calls
	nameKey  []byte                                      // of sessionName
	nonces   map[*mcp.ServerSession]map[string]time.Time // of suspended calls, under mu
	calls    calls                                       // in flight, for draining
	uncalled sync.Once                                   // expireUncalled's middleware, added once
}

// New returns a Server exposing every tool registered in opts.Tools now.
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{opts: opts, log: log, owners: make(map[*mcp.ServerSession]*session.Session), stateKey: newStateKey(), nameKey: newStateKey(),
		nonces: make(map[*mcp.ServerSession]map[string]time.Time)}
	instructions := ""
	if opts.Prompt != nil {
		instructions = opts.Prompt.Text()
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "dsh", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(sdkLog{log.Handler(), s.sessionName}),
		GetSessionID: rand.Text, // 130 random bits
	})
	all := opts.Tools.List()
	for _, t := range all {
		s.mcp.AddTool(mcpTool(t), s.handler(t.Name))
	}
	s.mcp.AddReceivingMiddleware(s.observeUnknownTools, (&listedTools{}).middleware(all))
	return s
}

// observeUnknownTools shows the registry a call of a tool the server does
// not list, which the SDK refuses before any handler: the registry refuses
// it too (invalid, nothing runs), and its observers (the audit log, the
// metrics) see it, since every call writes a line (docs/spec.md §15.1).
// The client still gets the SDK's error.
func (s *Server) observeUnknownTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		arrived := time.Now()
		res, err := next(ctx, method, req)
		r, ok := req.(*mcp.CallToolRequest)
		if err == nil || method != "tools/call" || !ok || r.Params == nil {
			return res, err
		}
		if _, known := s.opts.Tools.Lookup(r.Params.Name); known {
			return res, err // refused for another reason, before the handler
		}
		s.mu.Lock()
		owner := s.owners[r.Session] // nil before the session's first call
		s.mu.Unlock()
		s.opts.Tools.Execute(ctx, tool.Call{Name: r.Params.Name, Args: r.Params.Arguments, Session: owner,
			Client: clientName(r.Session), Started: arrived})
		return res, err
	}
}

// sdkLog is the SDK's logger: dsh's, except that a run ended by its
// context (dsh mcp on SIGINT/SIGTERM, a normal shutdown) is not an error,
// and a session's id is logged by its name (sessionName).
type sdkLog struct {
	slog.Handler
	name func(id string) string
}

func (h sdkLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError && r.Message == "server run cancelled" {
		r.Level = slog.LevelInfo
	}
	named := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		named.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, named)
}

func (h sdkLog) attr(a slog.Attr) slog.Attr {
	if a.Key == "session_id" {
		return slog.String(a.Key, h.name(a.Value.String()))
	}
	return a
}

func (h sdkLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	named := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		named[i] = h.attr(a)
	}
	return sdkLog{h.Handler.WithAttrs(named), h.name}
}

func (h sdkLog) WithGroup(name string) slog.Handler { return sdkLog{h.Handler.WithGroup(name), h.name} }

// sessionName is what dsh calls an MCP session in its audit log, its
// logs, its tasks and hooks' input: a keyed hash of the session's id,
// stable while this server runs. The id itself, with the token, lets one
// post in the session, so it is written nowhere a command can read it.
func (s *Server) sessionName(id string) string {
	mac := hmac.New(sha256.New, s.nameKey)
	mac.Write([]byte(id))
	return "s-" + hex.EncodeToString(mac.Sum(nil)[:8])
}

// MCP returns the SDK server, for transports this package does not wrap.
func (s *Server) MCP() *mcp.Server { return s.mcp }

func mcpTool(t tool.Schema) *mcp.Tool {
	destructive, openWorld := t.Annotations.Destructive, t.Annotations.OpenWorld
	out := &mcp.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: t.Parameters,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    t.Annotations.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Annotations.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
	if t.OutputSchema != nil {
		out.OutputSchema = t.OutputSchema
	}
	return out
}

// listedTools is tools/list's answer with every schema marshalled once:
// the SDK would marshal each *jsonschema.Schema again on every tools/list
// (most of that call's cost), while a json.RawMessage it copies. The
// tools are registered with their *jsonschema.Schema all the same (the
// SDK checks those cheaply, and marshals anything else once more to
// check it: at start, before the handshake), and marshalled here on the
// first tools/list.
type listedTools struct {
	once  sync.Once
	tools map[string]*mcp.Tool // by name, schemas as JSON
}

// middleware answers tools/list as the SDK does (its pagination and all),
// each tool swapped for its copy with marshalled schemas.
func (l *listedTools) middleware(all []tool.Schema) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if err != nil || !ok || method != "tools/list" {
				return res, err
			}
			l.once.Do(func() { l.tools = marshalledTools(all) })
			for i, t := range list.Tools {
				if m := l.tools[t.Name]; m != nil {
					list.Tools[i] = m
				}
			}
			return res, nil
		}
	}
}

// marshalledTools is each tool of all with its schemas as JSON; one whose
// schemas do not marshal is left out (the SDK lists it as it is).
func marshalledTools(all []tool.Schema) map[string]*mcp.Tool {
	out := make(map[string]*mcp.Tool, len(all))
	for _, t := range all {
		m := mcpTool(t)
		in, err := json.Marshal(t.Parameters)
		if err != nil {
			continue
		}
		m.InputSchema = json.RawMessage(in)
		if t.OutputSchema != nil {
			o, err := json.Marshal(t.OutputSchema)
			if err != nil {
				continue
			}
			m.OutputSchema = json.RawMessage(o)
		}
		out[t.Name] = m
	}
	return out
}

// handler adapts one registry tool to the SDK.
func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		arrived := time.Now()
		ctx, end := s.calls.begin(ctx) // a drain waits for it, or cuts it
		defer end()
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			// From the call's arrival to its result, the asks for roots
			// and approvals and the hooks included (docs/spec.md §12).
			reqCtx := ctx // ctx itself gains values below
			hb := tool.StartHeartbeat(func(progress float64, message string) {
				if reqCtx.Err() != nil {
					return // cancelled: the client forgot the token
				}
				err := req.Session.NotifyProgress(reqCtx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Message: message})
				if err != nil {
					s.log.Debug("mcpserver: progress notification", "err", err)
				}
			}, arrived)
			defer hb.Stop() // before the SDK sends the result
			ctx = tool.WithProgress(ctx, hb.Report)
		}
		// A foreground bash call past bash.yieldAfterMs goes on as a task
		// rather than outlive the client's request timeout.
		ctx = tool.AllowYield(ctx, arrived)
		owner, ask := s.owner(ctx, req.Session, req.Params)
		if ask != nil {
			return ask, nil
		}
		resume, resumed := s.resumed(req.Session, req.Params)
		call := tool.Call{Name: name, Args: req.Params.Arguments, Session: owner, Asker: s.asker(req.Session, req.Params, resumed), Resume: resume,
			Client: clientName(req.Session), Started: arrived}
		res := s.opts.Tools.Execute(ctx, call)
		if res.Question != nil {
			return s.suspended(req.Session, req.Params, res.Question), nil
		}
		return s.result(res, owner), nil
	}
}

// clientName is the session's MCP clientInfo as "name/version" (the
// audit log's client); "" before an initialize.
func clientName(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	p := ss.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		return ""
	}
	if p.ClientInfo.Version == "" {
		return p.ClientInfo.Name
	}
	return p.ClientInfo.Name + "/" + p.ClientInfo.Version
}

// result converts a registry result, adding the owner's pending notices.
func (s *Server) result(res tool.Result, owner *session.Session) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{}}
	for _, c := range res.Content {
		out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
	}
	for _, n := range res.Notes {
		out.Content = append(out.Content, &mcp.TextContent{Text: n})
	}
	if owner != nil {
		for _, n := range owner.TakeNotices() {
			out.Content = append(out.Content, &mcp.TextContent{Text: n})
		}
	}
	if res.Structured != nil && !res.IsError {
		out.StructuredContent = res.Structured
	}
	return out
}

// owner returns the owner session of an MCP session, making it on the
// session's first tool call. When the owner's cwd needs the client's roots
// and the client speaks protocol 2026-07-28 or later, owner returns no
// session but the input request to send back (SEP-2322): the client
// answers it and repeats the call with the roots in params.InputResponses.
// Older clients are asked with roots/list from within the call.
func (s *Server) owner(ctx context.Context, ss *mcp.ServerSession, params *mcp.CallToolParamsRaw) (*session.Session, *mcp.CallToolResult) {
	if ss == nil {
		return nil, nil
	}
	s.mu.Lock()
	owner, ok := s.owners[ss]
	closed := s.closed
	s.mu.Unlock()
	if ok || closed {
		return owner, nil
	}
	cwd, ask := s.cwd(ctx, ss, params)
	if ask {
		return nil, askRoots()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if owner, ok := s.owners[ss]; ok || s.closed {
		return owner, nil // a concurrent first call won, or the server closed
	}
	s.nextID++
	id := "mcp-" + itoa(s.nextID) // stdio
	if ss.ID() != "" {
		id = s.sessionName(ss.ID())
	}
	owner = session.New(id, cwd, session.WithLogger(s.log))
	s.owners[ss] = owner
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.owners, ss)
		delete(s.nonces, ss)
		s.mu.Unlock()
		owner.End()
		s.mu.Lock()
		idle := len(s.owners) == 0
		s.mu.Unlock()
		if idle && s.opts.OnIdle != nil {
			s.opts.OnIdle()
		}
	}()
	return owner, nil
}

// RunStdio serves one session over stdin/stdout until EOF or ctx is done,
// then ends the session (its tasks are killed and awaited). A line that is
// not JSON gets a parse error and the session goes on.
func (s *Server) RunStdio(ctx context.Context) error {
	return s.RunLines(ctx, os.Stdin, os.Stdout)
}

// RunLines is RunStdio over any reader and writer. When it returns
// before the end of in (ctx done), its reading of in ends too if in has
// read deadlines (an *os.File pipe, a net.Conn); a reader without them is
// read once more, until its next return.
func (s *Server) RunLines(ctx context.Context, in io.Reader, out io.Writer) error {
	t, stop := lineTransport(in, out)
	err := s.mcp.Run(ctx, t)
	s.Close()
	stop()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Close ends every session and waits until their tasks are gone.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	// Every SDK session, also those that never initialized (and so have no
	// owner yet): nothing of a session may outlive the server.
	var sessions []*mcp.ServerSession
	for ss := range s.mcp.Sessions() {
		sessions = append(sessions, ss)
	}
	for _, ss := range sessions {
		_ = ss.Close()
	}
	s.watchers.Wait()
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
