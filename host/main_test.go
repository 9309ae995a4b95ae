package host_test

import (
	"os"
	"testing"

	"github.com/dsh-go/dsh/internal/proctest"
)

// TestMain fails the run when a test leaves a goroutine or a process
// behind: a stack's Close must end everything it started.
func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }
