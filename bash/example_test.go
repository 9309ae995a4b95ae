package bash_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
)

// A caller resolves a request against the executor's defaults, runs it, and
// reads an honest result: output per stream, exit code or signal, timeout.
func Example() {
	exec, err := local.New(config.Local{MaxOutputBytes: 1000})
	if err != nil {
		log.Fatal(err)
	}
	defer exec.Close()

	spec, err := exec.Resolve(bash.Request{Command: "echo hello; echo oops >&2; exit 3"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := bash.Run(context.Background(), exec, spec)
	if err != nil {
		log.Fatal(err) // nothing could be run: a bad workdir, no shell, …
	}
	fmt.Printf("%q exit=%d timeout=%v\n", bash.JoinStreams(res.Stdout.Text, res.Stderr.Text), *res.ExitCode, res.Timeout)

	timeout := 50.0
	spec, _ = exec.Resolve(bash.Request{Command: "sleep 60", TimeoutMs: &timeout})
	res, _ = bash.Run(context.Background(), exec, spec)
	fmt.Println("timed out:", res.TimedOut, "signal:", res.Signal)

	// In the background: a handle to read, wait for and kill.
	p, _ := exec.Start(context.Background(), spec)
	p.Kill()
	<-p.Done()
	fmt.Println(p.State().Status, p.State().Signal)
	// Output:
	// "hello\n[stderr]\noops\n" exit=3 timeout=2m0s
	// timed out: true signal: SIGTERM
	// killed SIGTERM
}

func ExampleJoinStreams() {
	fmt.Printf("%q\n", bash.JoinStreams("out", "err\n"))
	fmt.Printf("%q\n", bash.JoinStreams("", "err\n"))
	fmt.Printf("%q\n", bash.JoinStreams("out\n", ""))
	// Output:
	// "out\n[stderr]\nerr\n"
	// "[stderr]\nerr\n"
	// "out\n"
}
