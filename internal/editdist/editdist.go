// Package editdist is the Levenshtein distance between two words, for the
// "did you mean" hints of a mistyped config key or command-line flag: the
// config parser and the CLI share one implementation.
package editdist

// Distance is the number of single-byte insertions, deletions and
// substitutions that turn a into b (the words compared are ASCII keys and
// flag names).
func Distance(a, b string) int {
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
