package acp_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/dsh-go/dsh/internal/proctest"
)

// exampleAgentEnv makes the test binary the example agent, serving ACP on
// stdin/stdout: `go test -c ./acp` builds the agent that .ci/run drives
// with the TypeScript ACP client.
const exampleAgentEnv = "DSH_ACP_EXAMPLE_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(exampleAgentEnv) == "1" {
		if err := serveExampleAgent(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// No process or goroutine outlives the tests.
	os.Exit(proctest.Main(m))
}
