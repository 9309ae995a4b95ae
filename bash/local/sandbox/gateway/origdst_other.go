//go:build !linux

package gateway

import (
	"errors"
	"net"
	"net/netip"
)

// originalDst: connections are redirected only on Linux; elsewhere every
// connection is a proxy client.
func originalDst(*net.TCPConn) (netip.AddrPort, error) {
	return netip.AddrPort{}, errors.New("no redirected connections here")
}
