//go:build linux

package sandbox

// Network by domain with Landlock (docs/spec.md §11.1): there is no
// namespace to capture connections in, so a session's gateway listens on
// the host's loopback and commands reach it through the proxy variables.
// Landlock's network rules (ABI 4) let a command connect over TCP only to
// that port; seccomp refuses every other IP socket (filterSpec.tcpOnly),
// which Landlock's rules do not cover. A program that ignores the proxy
// variables fails closed (EACCES) rather than reaching anything.

import (
	"fmt"
	"net"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// minLandlockNetABI is the first Landlock ABI with network rules.
const minLandlockNetABI = 4

// landlockNetMap says why the Landlock backend cannot do a network map
// here, "" when it can.
func (s *Sandbox) landlockNetMap() string { return s.landlock.netMapWhy() }

func (l *landlockBackend) netMapWhy() string {
	if l.abi >= minLandlockNetABI {
		return ""
	}
	return fmt.Sprintf("Landlock ABI %d has no network rules (needs ABI %d, Linux 6.7)", l.abi, minLandlockNetABI)
}

// landlockGatewaySockets is a session's gateway listener for Landlock: on
// the host's 127.0.0.1, a port of its own per session, so a command's
// Landlock rule names its own session's gateway only. No resolver: with
// no namespace, lookups cannot be steered to one, and a command's UDP
// socket is refused anyway; proxy clients leave names to the gateway.
func landlockGatewaySockets() (*gatewaySockets, error) {
	l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("sandbox: network map: gateway listener: %w", err)
	}
	return &gatewaySockets{tcp: l}, nil
}

// addNetRules lets c's ruleset, which handles TCP connect when the
// sandbox has a network map, connect to its session's gateway. A command
// without a session has no gateway and connects nowhere.
func (l *landlockBackend) addNetRules(ruleset int, c Command) error {
	if c.Scope == nil || c.Scope.gw == nil {
		return nil
	}
	attr := llsys.NetPortAttr{AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(c.Scope.gw.port)}
	if err := llsys.LandlockAddNetPortRule(ruleset, &attr, 0); err != nil {
		return fmt.Errorf("landlock: rule for the gateway's port %d: %w", c.Scope.gw.port, err)
	}
	return nil
}
