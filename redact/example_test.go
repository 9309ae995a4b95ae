package redact_test

import (
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/redact"
)

// A command's output is redacted before the model reads it: the token
// goes, the name it was assigned to stays.
func Example() {
	r, err := redact.New(redact.Known)
	if err != nil {
		panic(err)
	}
	// Built here rather than written out, so that no scanner takes this
	// file for a leak.
	token := "ghp_" + strings.Repeat("R2x7Kq9LmP4v", 3)
	fmt.Println(r.Text("GITHUB_TOKEN=" + token + "\nHOME=/home/dev"))
	// Output:
	// GITHUB_TOKEN=[REDACTED:github-pat]
	// HOME=/home/dev
}
