package config_test

import (
	"fmt"

	"github.com/dsh-go/dsh/config"
)

func ExampleParse() {
	f, err := config.Parse([]byte(`
local:
  timeoutMs: 900000   # above maxTimeoutMs: clamped by WithDefaults
  graceMs: 0.5        # rounded up to a whole millisecond
  env:
    scrub: [MY_*]
    set: {DEBUG: 1}
tools: [bash]         # no task tools: no background runs
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	f = f.WithDefaults()
	c := f.Local
	fmt.Println(c.Timeout, c.Grace, c.MaxOutputBytes, c.Env.Set["DEBUG"])
	fmt.Println(f.Tools, f.Bash.Background())

	_, err = config.Parse([]byte("local:\n  graceMs: 0\n"))
	fmt.Println(err)
	_, err = config.Parse([]byte("local:\n  env:\n    scrubs: [MY_*]\n"))
	fmt.Println(err)
	// Output:
	// 10m0s 1ms 64000 1
	// [bash] false
	// local.graceMs must be a positive finite number (line 2)
	// local.env.scrubs: unknown key (line 3); did you mean local.env.scrub?
}
