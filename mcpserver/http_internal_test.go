package mcpserver

import "testing"

// TestSameToken: equal tokens match; a prefix, an extension, a token of
// another length and the empty string do not.
func TestSameToken(t *testing.T) {
	const want = "0123456789abcdef0123"
	for got, ok := range map[string]bool{
		want: true, want[:19]: false, want + "0": false, "": false,
		"0123456789abcdef0124": false, "x": false,
	} {
		if sameToken(got, want) != ok {
			t.Errorf("sameToken(%q, %q) = %v, want %v", got, want, !ok, ok)
		}
	}
}
