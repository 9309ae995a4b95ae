//lint:file-ignore SA1019 docs/spec.md §6.2: a session's cwd is the client's first file:// root (roots are deprecated, still served)

package mcpserver_test

import (
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/stacktest"
	"github.com/dsh-go/dsh/mcpserver"
)

func TestSessionCwd(t *testing.T) {
	t.Parallel()
	rootDir, workdir := t.TempDir(), t.TempDir()
	processCwd, _ := os.Getwd()
	pwd := func(s *mcpserver.Server, version string, roots ...*mcp.Root) string {
		client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
		client.AddRoots(roots...)
		cs := dial(t, s, client, &mcp.ClientSessionOptions{ProtocolVersion: version})
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
		// Commands on another machine (executor ssh): the roots name
		// nothing there; DefaultCwd (ssh.cwd) is next after --workdir.
		if got := pwd(newServerWith(t, mcpserver.Options{Remote: true, DefaultCwd: workdir}), version, root); got != workdir+"\n" {
			t.Errorf("protocol %q, remote with roots: %q, want DefaultCwd %s", version, got, workdir)
		}
	}
}

// TestRemoteSessionCwdIsTheExecutorsDefault: with Remote and neither
// --workdir nor DefaultCwd, a session has no cwd of its own, so commands
// run where the executor starts them (for the SSH executor the remote
// user's home; here the stack's executor's cwd), whatever the roots.
func TestRemoteSessionCwdIsTheExecutorsDefault(t *testing.T) {
	execCwd := t.TempDir()
	st := stacktest.Must(t, config.Local{Grace: 300 * time.Millisecond, Cwd: execCwd})
	s := mcpserver.New(mcpserver.Options{Tools: st.Tools, Prompt: st.Prompt, Version: "test", Remote: true})
	t.Cleanup(s.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	client.AddRoots(&mcp.Root{URI: "file://" + t.TempDir(), Name: "project"})
	cs := dial(t, s, client, nil)
	defer cs.Close()
	if got := texts(call(t, cs, "bash", map[string]any{"command": "pwd", "description": "print the directory"}))[0]; got != execCwd+"\n" {
		t.Fatalf("pwd %q, want the executor's default %s", got, execCwd)
	}
}
