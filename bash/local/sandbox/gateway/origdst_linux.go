package gateway

import (
	"encoding/binary"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// originalDst is where a redirected connection was going: the address
// netfilter's redirect replaced (SO_ORIGINAL_DST). A connection made to
// the listener itself gives the listener's own address.
func originalDst(c *net.TCPConn) (netip.AddrPort, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var sa *unix.IPv6Mreq // 20 bytes: room for a struct sockaddr_in
	var serr error
	err = raw.Control(func(fd uintptr) {
		sa, serr = unix.GetsockoptIPv6Mreq(int(fd), unix.SOL_IP, unix.SO_ORIGINAL_DST)
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return netip.AddrPort{}, err
	}
	b := sa.Multiaddr[:] // family (2), port (2, big endian), address (4)
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])), nil
}
