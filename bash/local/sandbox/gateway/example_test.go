package gateway_test

import (
	"fmt"

	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/config"
)

// Deny rules win, then allow rules, then the default; an allowed name's
// address is checked once it is resolved.
func ExampleRules() {
	r, err := gateway.NewRules(config.NetworkMap{
		Allow: []string{"*.example.com", "git.example.org:22"},
		Deny:  []string{"ads.example.com"},
	}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Decide("pkg.example.com", 443))
	fmt.Println(r.Decide("ads.example.com", 443))
	fmt.Println(r.Decide("git.example.org", 443))
	fmt.Println(r.Refused("ads.example.com"))
	// Output:
	// allow allow: *.example.com
	// deny deny: ads.example.com
	// ask default: ask
	// true
}
