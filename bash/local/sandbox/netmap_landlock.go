//go:build linux

package sandbox

// landlockNetMap says why the Landlock backend cannot do a network map
// here, "" when it can.
func (s *Sandbox) landlockNetMap() string {
	return "network by domain needs bwrap: Landlock has no network namespace to capture connections in"
}
