//go:build linux

package sandbox

// holderNetMap says why a session namespace held by a holder process
// (dsh not root) cannot have a network map here, "" when it can.
func (s *Sandbox) holderNetMap() string {
	return "network by domain needs dsh to enter each session's network namespace (dsh running as root)"
}
