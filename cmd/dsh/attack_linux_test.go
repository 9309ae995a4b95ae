package main

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// attackGetfd takes descriptor fd of pid with pidfd_getfd and writes text
// to it.
func attackGetfd(pid, fd, text string) error {
	p, _ := strconv.Atoi(pid)
	n, _ := strconv.Atoi(fd)
	pidfd, err := unix.PidfdOpen(p, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	got, err := unix.PidfdGetfd(pidfd, n, 0)
	if err != nil {
		return fmt.Errorf("pidfd_getfd: %w", err)
	}
	if _, err := unix.Write(got, []byte(text)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	fmt.Println("wrote to the descriptor")
	return nil
}
