package term_test

import (
	"fmt"

	"github.com/dsh-go/dsh/bash/term"
)

// The model sees the screen as text, without the colours, with the cursor;
// it types keys by name.
func Example() {
	s := term.New(20, 5, func(answer []byte) { /* write to the program's input */ })
	defer s.Close()

	fmt.Fprint(s, "$ ls\r\n\x1b[1;34mbin\x1b[0m  docs\r\n$ ")
	fmt.Println(s.Text())

	keys, _ := s.Keys([]string{"Up", "Enter"})
	fmt.Printf("%q\n", keys)

	_, err := term.Keys([]string{"Space"})
	fmt.Println(err)
	// Output:
	// $ ls
	// bin  docs
	// $
	// [cursor: row 3, col 3]
	// "\x1b[A\r"
	// unknown key "Space"; keys are: Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, C-a…C-z, F1…F12
}
