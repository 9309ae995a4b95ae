package local_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
)

// A background command is started with the caller's context, which bounds
// the start only, and read as it goes: each Read returns what came since
// the previous one.
func Example() {
	exec, err := local.New(config.Local{})
	if err != nil {
		log.Fatal(err)
	}
	defer exec.Close()

	spec, err := exec.Resolve(bash.Request{
		Command: `read name; echo "hello $name"; echo "$GREETING" >&2`,
		Stdin:   []byte("dsh\n"),
		Env:     map[string]string{"GREETING": "from the env"},
	})
	if err != nil {
		log.Fatal(err)
	}
	p, err := exec.Start(context.Background(), spec)
	if err != nil {
		log.Fatal(err)
	}
	<-p.Done()
	fmt.Printf("%q\n", p.Read().Delta)
	st := p.State()
	fmt.Println(st.Status, *st.ExitCode)
	// Output:
	// "hello dsh\n[stderr]\nfrom the env\n"
	// completed 0
}
