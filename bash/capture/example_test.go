package capture_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/dsh-go/dsh/bash/capture"
)

// A collector keeps a bounded head and tail of a stream in memory and,
// once the stream outgrows them, the whole stream in a private spill file.
func Example() {
	spill := capture.NewSpillDir(os.TempDir())
	defer spill.Remove()
	c := capture.New(capture.Options{
		Stream:        "stdout",
		MaxBytes:      14,
		HeadBytes:     7,
		MaxSpillBytes: 1 << 20,
		Spill:         spill,
	})
	if _, err := c.ReadFrom(strings.NewReader("line 1\nline 2\nline 3\nline 4\n")); err != nil {
		log.Fatal(err)
	}
	res := c.Close()
	fmt.Printf("head %q, tail %q, %d of %d bytes omitted\n", res.Head, res.Text, res.OmittedBytes, res.TotalBytes)
	whole, err := os.ReadFile(res.SpillPath)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the spill file holds %d bytes\n", len(whole))
	// Output:
	// head "line 1\n", tail "line 4\n", 14 of 28 bytes omitted
	// the spill file holds 28 bytes
}
