package config

import (
	"strings"

	"github.com/dsh-go/dsh/internal/editdist"
)

// suggestWord returns the word of candidates closest to w when it is close
// enough to be a slip: the same word in another case or spelling
// (timeout_ms for timeoutMs), a prefix or an extension of it (timeout,
// timeoutMsec), or an edit distance of at most a third of its length.
func suggestWord(w string, candidates []string) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	best, bestD := "", 0
	for _, c := range candidates {
		a, b := norm(w), norm(c)
		d := editdist.Distance(a, b)
		if a == b || len(a) >= 4 && (strings.HasPrefix(a, b) || strings.HasPrefix(b, a)) {
			d = 0
		}
		if d <= min(2, max(1, len(b)/3)) && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}
