package main

// What differs on macOS (platform_linux.go has Linux's): the ioctl that
// reads a terminal's attributes, how a Unix socket names its peer, and
// where the open descriptors are listed.

import "golang.org/x/sys/unix"

// ownFDs lists this process's open descriptors: /dev/fd (fdesc: this process's own).
const ownFDs = "/dev/fd"

// getTermios is the ioctl isTerminal asks.
const getTermios = unix.TIOCGETA

// socketPeerUID is the user id of the process at the other end of the
// connected Unix socket fd (LOCAL_PEERCRED).
func socketPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
