package main

// What differs on Linux (platform_darwin.go has macOS's): the ioctl that
// reads a terminal's attributes, how a Unix socket names its peer, and
// where the open descriptors are listed.

import "golang.org/x/sys/unix"

// ownFDs lists this process's open descriptors: /proc/self/fd.
const ownFDs = "/proc/self/fd"

// getTermios is the ioctl isTerminal asks.
const getTermios = unix.TCGETS

// socketPeerUID is the user id of the process at the other end of the
// connected Unix socket fd (SO_PEERCRED).
func socketPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
