package hooks

import (
	"testing"

	"github.com/dsh-go/dsh/internal/marker"
)

// TestNoteIsGuarded: a hook's note begins with an opening of package
// marker, so command output imitating one is guarded (docs/spec.md §3.4).
func TestNoteIsGuarded(t *testing.T) {
	if line := note("run the tests first"); !marker.Is(line) {
		t.Errorf("%q is not guarded: add its opening to package marker", line)
	}
}
