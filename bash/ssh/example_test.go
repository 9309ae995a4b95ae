package ssh_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/ssh"
	"github.com/dsh-go/dsh/config"
)

// The SSH executor runs commands on a remote host with the local
// executor's contract: the same Request, Spec and Result. It needs a
// reachable sshd whose host key is in the known_hosts file, so this
// example is compiled, not run.
func Example() {
	exec, err := ssh.New(config.SSH{
		Host:       "build1.example.com",
		User:       "ci",
		KnownHosts: "/home/ci/.ssh/known_hosts",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer exec.Close()

	spec, err := exec.Resolve(bash.Request{Command: "uname -n", Workdir: "/srv/build"})
	if err != nil {
		log.Fatal(err)
	}
	// The first command dials, under ctx.
	res, err := bash.Run(context.Background(), exec, spec)
	if err != nil {
		log.Fatal(err) // "ssh: connection to build1.example.com lost", …
	}
	fmt.Print(res.Stdout.Text)
}
