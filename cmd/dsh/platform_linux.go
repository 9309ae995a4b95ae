package main

// What differs on Linux (platform_darwin.go has macOS's): the ioctl that
// reads a terminal's attributes, and how a Unix socket names its peer.

import "golang.org/x/sys/unix"

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
