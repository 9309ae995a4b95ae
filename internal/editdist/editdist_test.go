package editdist_test

import (
	"fmt"
	"testing"

	"github.com/dsh-go/dsh/internal/editdist"
)

func Example() {
	fmt.Println(editdist.Distance("scrubs", "scrub"), editdist.Distance("timout", "timeout"), editdist.Distance("kitten", "sitting"))
	// Output: 1 1 3
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0},
		{"abc", "acb", 2}, {"flaw", "lawn", 2}, {"graceMs", "gracems", 1},
	} {
		if got := editdist.Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editdist.Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}
