package main

import "errors"

// attackGetfd: macOS has no pidfd_getfd (the attacks run on Linux only).
func attackGetfd(pid, fd, text string) error {
	return errors.New("pidfd_getfd is Linux only")
}
