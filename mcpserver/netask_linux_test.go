package mcpserver_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
)

// A client on the input-request protocol answers the command's question
// when it repeats the call; that answer must not also answer a network
// question the command raises while it runs (a client asked between
// requests cannot be asked then: askFallback, deny).
func TestResumedAnswerIsNotANetworkAnswer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: network by domain with bwrap is set up here as root; as another user it needs the dsh binary as its helper")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("SKIP-REASON: no curl")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello from host loopback") })}
	go srv.Serve(l)
	defer srv.Close()
	port := l.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	cfg := config.File{Permissions: &config.Permissions{Default: "ask", Allow: []string{"true"}, ClaudeSettings: new(false)}}
	cfg.Local.Sandbox = config.Sandbox{Mode: "workspace-write", Backend: "bwrap", Network: &config.Network{Map: &config.NetworkMap{
		Default: "ask", Hosts: map[string]string{"unknown.test": "127.0.0.1"}, AllowAddresses: []string{"127.0.0.1/32"}}}}
	var mu sync.Mutex
	var asked []string
	cs := serveFile(t, cfg, dir, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}, host.WithPermissions(permissions.Options{Home: dir, ManagedDir: dir}))
	cmd := fmt.Sprintf("curl -sS --max-time 5 --noproxy '*' http://unknown.test:%d/", port)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": cmd, "description": "d"}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, q := range asked {
		if strings.HasPrefix(q, "Allow network access") {
			t.Skip("SKIP-REASON: this client is asked within the call; the retry path is not taken")
		}
	}
	if got := strings.Join(texts(res), ""); strings.Contains(got, "hello from host loopback") || !strings.Contains(got, "[network: 1 connection refused: unknown.test]") {
		t.Errorf("the command's answer let it reach a host the user was never asked about: %q (questions %q)", got, asked)
	}
}
