package lazyre_test

import (
	"fmt"

	"github.com/dsh-go/dsh/internal/lazyre"
)

var word = lazyre.New(`^[a-z]+$`) // not compiled yet

func Example() {
	fmt.Println(word().MatchString("dsh"), word().MatchString("d-s-h"), word() == word())
	// Output: true false true
}
