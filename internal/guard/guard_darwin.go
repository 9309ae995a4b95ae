package guard

// The macOS half: there is no PR_SET_DUMPABLE nor sealed memfd, so Main
// changes nothing and [Current] says why. Decision: dsh on macOS keeps its
// credentials in its environment; doctor's self line says commands can
// reach them, and the sandbox (Linux only) is not there to help.

import "errors"

var errUnsupported = errors.New("macOS has no PR_SET_DUMPABLE nor sealed memfd: dsh's environment and memory stay open to its commands")

func setUndumpable() error { return errUnsupported }

func reexec(keep, remove []string) error { return errUnsupported }

func readHeld(s string) ([]string, error) { return nil, errUnsupported }
