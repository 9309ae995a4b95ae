// Package lazyre compiles a regular expression on its first use instead of
// at package initialisation. Go initialises every package linked into a
// binary at each start, whatever the subcommand, so a regexp compiled in a
// package variable costs every `dsh mcp` cold start, even when the code
// that uses it (a config key that is not set, the command policy without
// rules) never runs.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call and returns
// the same *regexp.Regexp on every call. Like regexp.MustCompile, it
// panics if expr does not compile: the expressions are constants, and
// their tests use them.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
