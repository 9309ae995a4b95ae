package sandbox_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
)

// A program that may serve as local.sandbox.helper calls HelperMain first
// in main. New probes once which backend can confine commands here: an
// error wrapping ErrUnavailable says what this machine lacks, and
// Describe what the chosen backend does. (The local executor does all of
// this itself when its config has a sandbox; the example runs nowhere, as
// its output depends on the machine.)
func Example() {
	sandbox.HelperMain()

	private, err := os.MkdirTemp("", "dsh-example-") // mode 0700
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(private)
	dir := filepath.Join(private, "sandbox")
	if err := os.Mkdir(dir, 0o700); err != nil {
		log.Fatal(err)
	}
	sb, err := sandbox.New(config.Sandbox{Mode: config.SandboxReadOnly}, sandbox.Options{
		Cwd: private, Dir: dir, Private: private, Shell: "/bin/bash", Env: os.Environ(),
	})
	if errors.Is(err, sandbox.ErrUnavailable) {
		fmt.Println("commands cannot be confined here:", err)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	for _, line := range sb.Describe() {
		fmt.Println(line)
	}
}
