package mcpserver_test

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/mcpserver"
)

// The stack of a config file served over MCP, here to an in-memory client
// of the official Go SDK; dsh mcp does the same over stdio (RunStdio) and
// dsh serve over HTTP (Handler).
func Example() {
	st, err := host.Standard(config.File{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	srv := mcpserver.New(mcpserver.Options{Tools: st.Tools, Prompt: st.Prompt, Workdir: os.TempDir(), Version: "example"})
	defer srv.Close() // ends every session: its tasks and spill files

	ctx := context.Background()
	clientEnd, serverEnd := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, serverEnd, nil); err != nil {
		fmt.Println(err)
		return
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "echo building; echo 'main.go:3: undefined: x' >&2; exit 2", "description": "Build the project",
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println("isError:", res.IsError)
	// Output:
	// building
	// [stderr]
	// main.go:3: undefined: x
	// [exit code: 2]
	// isError: false
}
