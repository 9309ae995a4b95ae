package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/mcpserver"
	"github.com/dsh-go/dsh/permissions"
)

// askingServer is a server whose policy asks about every command but
// `true`; its questions go to answer.
func askingServer(t *testing.T, dir string, answer func(*mcp.ElicitRequest) *mcp.ElicitResult) (*mcp.ClientSession, *atomic.Int32) {
	t.Helper()
	cfg := config.File{Permissions: &config.Permissions{Default: "ask", Allow: []string{"true"}, ClaudeSettings: new(false)}}
	cfg.Local.Env.Set, cfg.Local.SpillDir, cfg.Local.GraceMs = proctest.Set(), t.TempDir(), 200
	st, err := host.Standard(cfg, host.WithPermissions(permissions.Options{Home: dir, ManagedDir: dir}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := mcpserver.New(mcpserver.Options{Tools: st.Tools, Prompt: st.Prompt, Workdir: dir, Version: "test"})
	t.Cleanup(s.Close)
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return answer(req), nil
		},
	})
	ct, stt := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(t.Context(), stt, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, &asked
}

// TestForgedRequestStateIsANewCall: a retry whose request state this
// server did not give is asked again, whatever answer it carries.
func TestForgedRequestStateIsANewCall(t *testing.T) {
	dir := t.TempDir()
	cs, asked := askingServer(t, dir, func(*mcp.ElicitRequest) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} })
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{
		Name:           "bash",
		Arguments:      map[string]any{"command": "touch forged", "description": "d"},
		InputResponses: mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept"}},
		RequestState:   "not-the-servers",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res); len(got) != 1 || got[0] != "Error: the user declined to run this command" || asked.Load() != 1 {
		t.Errorf("forged state: %q, asked %d times", got, asked.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "forged")); err == nil {
		t.Error("a forged answer ran the command")
	}
}

// TestAnsweredRetryRuns: the newest protocol's question and retry.
func TestAnsweredRetryRuns(t *testing.T) {
	dir := t.TempDir()
	cs, asked := askingServer(t, dir, func(*mcp.ElicitRequest) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "accept"} })
	if cs.InitializeResult().ProtocolVersion < "2026-07-28" {
		t.Fatalf("protocol %s: this test is about input requests", cs.InitializeResult().ProtocolVersion)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "touch answered", "description": "d"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res); len(got) != 1 || got[0] != "(no output)" || asked.Load() != 1 {
		t.Errorf("answered: %q, asked %d times", got, asked.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "answered")); err != nil {
		t.Error("the accepted command did not run")
	}
}
