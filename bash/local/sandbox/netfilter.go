//go:build linux

package sandbox

// The namespace side of network by domain (docs/spec.md §11.1): in a
// session's network namespace, which has only lo, every address becomes
// local (a "local default" route), so a connection to any of them is
// made rather than refused as unreachable; nftables then redirects every
// TCP connection that is not to loopback to the gateway's listener, and
// drops every other packet not to loopback, UDP and ICMP included. The
// resolver listens on 127.0.0.1:53. Nothing can leave the namespace but
// through these two sockets, which dsh holds: the namespace has no other
// interface.

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// gatewaySockets are the listeners a session's gateway serves, opened in
// its namespace.
type gatewaySockets struct {
	tcp *net.TCPListener
	dns *net.UDPConn
}

func (g *gatewaySockets) close() {
	if g == nil {
		return
	}
	if g.tcp != nil {
		g.tcp.Close()
	}
	if g.dns != nil {
		g.dns.Close()
	}
}

// setupNetns prepares the namespace the calling thread is in (it holds
// CAP_NET_ADMIN there) and opens the gateway's sockets in it: the route,
// the listeners, then the rules that send connections to the listener.
// nsFD is that namespace, for the netlink sockets, or -1 for the one the
// thread is in (a holder's helper, which may not enter namespaces).
func setupNetns(nsFD int) (*gatewaySockets, error) {
	if err := addLocalDefault(nsFD); err != nil {
		return nil, fmt.Errorf("sandbox: network map: route: %w", err)
	}
	var g gatewaySockets
	var err error
	if g.tcp, err = net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		return nil, fmt.Errorf("sandbox: network map: gateway listener: %w", err)
	}
	if g.dns, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}); err != nil {
		g.close()
		return nil, fmt.Errorf("sandbox: network map: resolver: %w", err)
	}
	port := uint16(g.tcp.Addr().(*net.TCPAddr).Port)
	if err := addRules(nsFD, port); err != nil {
		g.close()
		return nil, fmt.Errorf("sandbox: network map: nftables: %w", err)
	}
	return &g, nil
}

// addLocalDefault adds "local default dev lo" to the namespace's local
// table: every IPv4 address is this host's, so connect() finds a route
// and the packet meets the redirect, which comes after routing.
func addLocalDefault(nsFD int) error {
	var cfg netlink.Config
	if nsFD >= 0 {
		cfg.NetNS = nsFD
	}
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	lo, err := net.InterfaceByName("lo") // the same index in every namespace
	if err != nil {
		return err
	}
	attrs, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.RTA_OIF, Data: binary.NativeEndian.AppendUint32(nil, uint32(lo.Index))},
	})
	if err != nil {
		return err
	}
	// struct rtmsg: family, dst_len 0 (default), src_len, tos, table,
	// protocol, scope, type, flags.
	hdr := []byte{unix.AF_INET, 0, 0, 0, unix.RT_TABLE_LOCAL, unix.RTPROT_STATIC, unix.RT_SCOPE_HOST, unix.RTN_LOCAL, 0, 0, 0, 0}
	_, err = c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_NEWROUTE, Flags: netlink.Request | netlink.Acknowledge | netlink.Create | netlink.Excl},
		Data:   append(hdr, attrs...),
	})
	return err
}

// addRules installs table ip dsh: a nat output chain that redirects TCP
// not to 127.0.0.0/8 to port, and a filter output chain that drops every
// packet but TCP not to 127.0.0.0/8 (UDP, ICMP).
func addRules(nsFD int, port uint16) error {
	var opts []nftables.ConnOption
	if nsFD >= 0 {
		opts = append(opts, nftables.WithNetNSFd(nsFD))
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return err
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: "dsh"})
	nat := c.AddChain(&nftables.Chain{Name: "redirect", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest})
	filter := c.AddChain(&nftables.Chain{Name: "drop", Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityFilter})
	p := make([]byte, 2)
	binary.BigEndian.PutUint16(p, port)
	c.AddRule(&nftables.Rule{Table: t, Chain: nat, Exprs: append(append(notLoopback(), isTCP()...),
		&expr.Immediate{Register: 1, Data: p},
		&expr.Redir{RegisterProtoMin: 1},
	)})
	// TCP passes: a captured connection goes to 127.0.0.1, and the
	// listener's replies go back to the address the command dialled.
	c.AddRule(&nftables.Rule{Table: t, Chain: filter, Exprs: append(append(notLoopback(),
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{unix.IPPROTO_TCP}}),
		&expr.Verdict{Kind: expr.VerdictDrop},
	)})
	return c.Flush()
}

// notLoopback matches a destination outside 127.0.0.0/8.
func notLoopback() []expr.Any {
	return []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{255, 0, 0, 0}, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{127, 0, 0, 0}},
	}
}

func isTCP() []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
	}
}
