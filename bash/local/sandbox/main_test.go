package sandbox

import (
	"os"
	"testing"

	"github.com/dsh-go/dsh/internal/proctest"
)

func TestMain(m *testing.M) { os.Exit(proctest.Main(m)) }
