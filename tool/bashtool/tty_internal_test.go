package bashtool

import (
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/redact"
)

// TestRedactRows: a secret the terminal wrapped over two rows is
// redacted; rows without one are left as they are.
func TestRedactRows(t *testing.T) {
	r, err := redact.New(redact.Known)
	if err != nil {
		t.Fatal(err)
	}
	key := "AKIA" + "ABCDEFGHIJKLMNOP"
	line := strings.Repeat(" ", 70) + " x " + key // 93 characters on 80 columns
	rows := []string{"before", line[:80], line[80:], "after " + key}
	got := redactRows(rows, 80, r.Text)
	joined := strings.Join(got, "\n")
	if strings.Contains(joined, "ABCDEFGH") || strings.Count(joined, "[REDACTED:") != 2 || got[0] != "before" {
		t.Fatalf("%q", got)
	}
	plain := []string{"a", strings.Repeat("b", 80), "c"}
	if got := redactRows(plain, 80, r.Text); !slices.Equal(got, plain) {
		t.Errorf("rows without a secret changed: %q", got)
	}
}
