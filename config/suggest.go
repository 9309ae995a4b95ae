package config

import "strings"

// suggestWord returns the word of candidates closest to w when it is close
// enough to be a slip: the same word in another case or spelling
// (timeout_ms for timeoutMs), a prefix or an extension of it (timeout,
// timeoutMsec), or an edit distance of at most a third of its length.
func suggestWord(w string, candidates []string) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	best, bestD := "", 0
	for _, c := range candidates {
		a, b := norm(w), norm(c)
		d := distance(a, b)
		if a == b || len(a) >= 4 && (strings.HasPrefix(a, b) || strings.HasPrefix(b, a)) {
			d = 0
		}
		if d <= min(2, max(1, len(b)/3)) && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes (keys
// are ASCII).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
