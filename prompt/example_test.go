package prompt_test

import (
	"fmt"

	"github.com/dsh-go/dsh/prompt"
)

// Tools add their sections in any order; the text comes out by Order, and a
// section goes away with its tool.
func ExampleRegistry() {
	r := prompt.NewRegistry()
	_ = r.Add(prompt.Section{Name: "tool:tasks", Order: 106, Text: "Track task ids; do not busy-poll.\n"})
	_ = r.Add(prompt.Section{Name: "tool:bash", Order: 105, Text: "\nCheck the [exit code: N] marker on every bash result.\n\n"})
	fmt.Printf("%q\n", r.Text())

	fmt.Println(r.Add(prompt.Section{Name: "tool:bash", Order: 1, Text: "again"}))

	r.Remove("tool:tasks")
	for _, s := range r.Sections() {
		fmt.Println(s.Order, s.Name)
	}
	// Output:
	// "Check the [exit code: N] marker on every bash result.\n\nTrack task ids; do not busy-poll."
	// prompt: section "tool:bash" is already registered
	// 105 tool:bash
}
