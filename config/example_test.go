package config_test

import (
	"fmt"

	"github.com/dsh-go/dsh/config"
)

func ExampleParseLocal() {
	c, err := config.ParseLocal([]byte(`
timeoutMs: 900000   # above maxTimeoutMs: clamped by WithDefaults
graceMs: 0.5        # rounded up to 1ms by Millis
env:
  scrub: [MY_*]
  set: {DEBUG: 1}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	c = c.WithDefaults()
	fmt.Println(config.Millis(c.TimeoutMs), config.Millis(c.GraceMs), config.Bytes(c.MaxOutputBytes), c.Env.Set["DEBUG"])

	_, err = config.ParseLocal([]byte("graceMs: 0\n"))
	fmt.Println(err)
	_, err = config.ParseLocal([]byte("env:\n  scrubs: [MY_*]\n"))
	fmt.Println(err)
	// Output:
	// 10m0s 1ms 64000 1
	// bash-local: graceMs must be a positive finite number
	// bash-local: unknown key "env.scrubs" (line 2)
}
