package ssh

import (
	"testing"

	"github.com/dsh-go/dsh/config"
)

// newExecutor makes an executor that is closed when the test ends.
func newExecutor(t *testing.T, cfg config.SSH) *Executor {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}
