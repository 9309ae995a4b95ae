//lint:file-ignore SA1019 docs/spec.md §6.2: a session's cwd is the client's first file:// root (roots are deprecated, still served)

package mcpserver_test

import (
	"context"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/mcpserver"
)

func TestSessionCwd(t *testing.T) {
	rootDir, workdir := t.TempDir(), t.TempDir()
	processCwd, _ := os.Getwd()
	pwd := func(s *mcpserver.Server, version string, roots ...*mcp.Root) string {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.MCP().Connect(context.Background(), st, nil); err != nil {
			t.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
		client.AddRoots(roots...)
		cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		return texts(call(t, cs, "bash", map[string]any{"command": "pwd", "description": "print the directory"}))[0]
	}
	root := &mcp.Root{URI: "file://" + rootDir, Name: "project"}
	other := &mcp.Root{URI: "file://" + t.TempDir(), Name: "second"}
	web := &mcp.Root{URI: "https://example.invalid/repo", Name: "web"}
	// 2026-07-28 asks with a multi round-trip input request, older
	// versions with roots/list inside the call.
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		if got := pwd(newServer(t, ""), version, web, root, other); got != rootDir+"\n" {
			t.Errorf("protocol %q, with roots: %q, want the first file:// root %s", version, got, rootDir)
		}
		if got := pwd(newServer(t, workdir), version, root); got != workdir+"\n" {
			t.Errorf("protocol %q, with --workdir and roots: %q, want the workdir %s", version, got, workdir)
		}
		if got := pwd(newServer(t, ""), version); got != processCwd+"\n" {
			t.Errorf("protocol %q, without roots: %q, want the server's cwd", version, got)
		}
		if got := pwd(newServer(t, ""), version, web); got != processCwd+"\n" {
			t.Errorf("protocol %q, without a file:// root: %q, want the server's cwd", version, got)
		}
		missing := &mcp.Root{URI: "file:///nonexistent/remote/project", Name: "remote"}
		if got := pwd(newServerWith(t, mcpserver.Options{DefaultCwd: workdir}), version, missing, root); got != workdir+"\n" {
			t.Errorf("protocol %q, first root not a directory here: %q, want the fallback %s", version, got, workdir)
		}
		if got := pwd(newServerWith(t, mcpserver.Options{DefaultCwd: workdir}), version); got != workdir+"\n" {
			t.Errorf("protocol %q, DefaultCwd and no roots: %q, want %s", version, got, workdir)
		}
	}
}
