// Package mcpserver is dsh's MCP front end: a thin adapter from the Model
// Context Protocol (the official Go SDK) to the tool registry.
//
// Every tool of the registry is registered with the SDK's raw
// [mcp.Server.AddTool], which leaves argument validation to the caller:
// the registry validates, so the exact messages of SPEC.md §3.2 reach the
// client as error results rather than as protocol errors. A result's first
// content block is the model-facing text; the tool's notes and the
// session's pending finish notices follow as further text blocks (oldest
// first, each once); structuredContent carries the tool's structured facts.
// The prompt sections are the server's instructions.
//
// Each MCP session is one owner ([session.Session]). Its cwd is the
// server's --workdir, else the first file:// root the client offers (asked
// once, when the session starts, if the client supports roots), else the
// server's cwd. On protocol version 2026-07-28 a server may not send
// roots/list while it serves a request (SEP-2322 wants multi round-trip
// input requests instead), and the SDK refuses it; such sessions fall back
// to the server's cwd, with a warning in the log. When the MCP session ends (stdio EOF, HTTP DELETE, the
// idle timeout) the owner ends: its tasks are killed and awaited, its
// records and spill files dropped. [Server.Close] does that for every
// session.
//
// Progress: a call that carries a progress token gets, while a foreground
// bash command runs, notifications at most every 250 ms with the bytes of
// output so far and the last non-empty output line.
//
// Cancellation: the SDK cancels a call's context on notifications/cancelled
// (and when an HTTP request goes away); the bash tool kills the foreground
// command's group at once.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/url"
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
	Version string
	Logger  *slog.Logger
}

// Server serves the registry's tools over MCP.
type Server struct {
	opts Options
	mcp  *mcp.Server
	log  *slog.Logger

	mu       sync.Mutex
	owners   map[*mcp.ServerSession]*ownerEntry
	closed   bool
	watchers sync.WaitGroup
	nextID   uint64
}

// New returns a Server exposing every tool registered in opts.Tools now.
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{opts: opts, log: log, owners: make(map[*mcp.ServerSession]*ownerEntry)}
	instructions := ""
	if opts.Prompt != nil {
		instructions = opts.Prompt.Text()
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "dsh", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       log,
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			s.entry(req.Session)
		},
	})
	for _, t := range opts.Tools.List() {
		s.mcp.AddTool(mcpTool(t), s.handler(t.Name))
	}
	return s
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

// handler adapts one registry tool to the SDK.
func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		owner := s.owner(ctx, req.Session)
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			ctx = tool.WithProgress(ctx, func(progress float64, message string) {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Message: message})
				if err != nil {
					s.log.Debug("mcpserver: progress notification", "err", err)
				}
			})
		}
		res := s.opts.Tools.Execute(ctx, tool.Call{Name: name, Args: req.Params.Arguments, Session: owner})
		return s.result(res, owner), nil
	}
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

// owner returns the owner session of an MCP session, waiting until it is
// ready; see entry.
func (s *Server) owner(ctx context.Context, ss *mcp.ServerSession) *session.Session {
	e := s.entry(ss)
	if e == nil {
		return nil
	}
	select {
	case <-e.ready:
		return e.owner
	case <-ctx.Done():
		return nil
	}
}

// entry returns the owner entry of an MCP session, making it on first use:
// the owner is made, with its cwd, on a goroutine of its own (so the roots
// request is not sent from within a request's handling, which newer
// protocol versions refuse), and ended when the MCP session ends.
func (s *Server) entry(ss *mcp.ServerSession) *ownerEntry {
	if ss == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.owners[ss]; ok || s.closed {
		return e
	}
	s.nextID++
	id := ss.ID()
	if id == "" {
		id = "mcp-" + itoa(s.nextID)
	}
	e := &ownerEntry{ready: make(chan struct{})}
	s.owners[ss] = e
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		e.owner = session.New(id, s.cwd(ss))
		close(e.ready)
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.owners, ss)
		s.mu.Unlock()
		e.owner.End()
	}()
	return e
}

// ownerEntry is a session's owner, ready once its cwd is known.
type ownerEntry struct {
	ready chan struct{}
	owner *session.Session
}

// cwd picks a session's cwd: --workdir, else the client's first file://
// root, else the server's cwd.
func (s *Server) cwd(ss *mcp.ServerSession) string {
	if s.opts.Workdir != "" {
		return s.opts.Workdir
	}
	// Roots are deprecated by protocol version 2026-07-28 but still served
	// through the deprecation window; SPEC.md §6.2 asks for them.
	//lint:ignore SA1019 SPEC.md §6.2: the client's first file:// root
	if p := ss.InitializeParams(); p != nil && p.Capabilities != nil && p.Capabilities.RootsV2 != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		//lint:ignore SA1019 see above
		if roots, err := ss.ListRoots(ctx, nil); err == nil {
			for _, r := range roots.Roots {
				if u, err := url.Parse(r.URI); err == nil && u.Scheme == "file" && u.Path != "" {
					return u.Path
				}
			}
		} else {
			s.log.Warn("mcpserver: listing the client's roots", "err", err)
		}
	}
	wd, _ := os.Getwd()
	return wd
}

// RunStdio serves one session over stdin/stdout until EOF or ctx is done,
// then ends the session (its tasks are killed and awaited). A line that is
// not JSON gets a parse error and the session goes on.
func (s *Server) RunStdio(ctx context.Context) error {
	return s.RunLines(ctx, os.Stdin, os.Stdout)
}

// RunLines is RunStdio over any reader and writer.
func (s *Server) RunLines(ctx context.Context, in io.Reader, out io.Writer) error {
	err := s.mcp.Run(ctx, lineTransport(in, out))
	s.Close()
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
