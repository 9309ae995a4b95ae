package lazyre_test

import (
	"fmt"

	"github.com/dsh-go/dsh/internal/lazyre"
)

var word = lazyre.New(`^[a-z]+$`) // not compiled yet

func Example() {
	first, again := word(), word() // compiled once: the same *Regexp
	fmt.Println(first.MatchString("dsh"), first.MatchString("d-s-h"), first == again)
	// Output: true false true
}
