//go:build darwin

package procfs

// Mark is a point in the process table's history; macOS reads the whole
// table in one sysctl, so it holds nothing.
type Mark struct{}

// NewMark returns the empty Mark.
func NewMark() Mark { return Mark{} }

// TableAfter is Table: one sysctl lists every process.
func TableAfter(int, Mark) ([]Proc, error) { return Table() }
