//lint:file-ignore SA1019 docs/spec.md §6.2: a session's cwd is the client's first file:// root (roots are deprecated by protocol 2026-07-28, still served through the deprecation window)

package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rootsInput is the key of the roots request in a multi round-trip result.
const rootsInput = "roots"

// askRoots is the result that asks a client for its roots (SEP-2322).
func askRoots() *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{rootsInput: &mcp.ListRootsParams{}}}
}

// cwd picks a session's cwd: --workdir, else the client's first file://
// root if it is a directory on this machine, else DefaultCwd, else the
// server's cwd; with Remote, --workdir, else DefaultCwd, else "". ask
// reports that the roots must first be asked for with an input request.
func (s *Server) cwd(ctx context.Context, ss *mcp.ServerSession, params *mcp.CallToolParamsRaw) (cwd string, ask bool) {
	if s.opts.Workdir != "" {
		return s.opts.Workdir, false
	}
	if s.opts.Remote {
		return s.opts.DefaultCwd, false
	}
	wd := s.opts.DefaultCwd
	if wd == "" {
		wd, _ = os.Getwd()
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return wd, false
	}
	var roots *mcp.ListRootsResult
	if p.ProtocolVersion >= "2026-07-28" {
		answer, ok := params.InputResponses[rootsInput]
		if !ok {
			return "", true
		}
		if roots, ok = answer.(*mcp.ListRootsResult); !ok {
			s.log.Warn("mcpserver: the client answered the roots request with something else", "type", fmt.Sprintf("%T", answer))
			return wd, false
		}
	} else {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var err error
		if roots, err = ss.ListRoots(ctx, nil); err != nil {
			s.log.Warn("mcpserver: listing the client's roots", "err", err)
			return wd, false
		}
	}
	for _, r := range roots.Roots {
		if u, err := url.Parse(r.URI); err == nil && u.Scheme == "file" && u.Path != "" {
			// A root that is no directory here (a client on another
			// machine) would fail every call: fall back instead.
			if fi, err := os.Stat(u.Path); err != nil || !fi.IsDir() {
				s.log.Warn("mcpserver: the client's first file:// root is not a directory here; using the fallback cwd", "root", r.URI, "cwd", wd)
				return wd, false
			}
			return u.Path, false
		}
	}
	return wd, false
}
