package sshtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// netns is a network namespace with one end of a veth pair in it, the
// other in the test's namespace, each with an address of a /30 of its
// own.
type netns struct {
	name         string // the namespace, as ip netns names it
	outer, inner string // the addresses of the test's end and of the namespace's
	innerLink    string // the namespace's end of the pair
	outerLink    string
}

// newNetns makes a namespace for t, removed when t ends; t skips when it
// cannot be made (not root, no ip, a kernel without veth).
func newNetns(t testing.TB) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a network namespace needs root: the test of dropped packets runs as root only")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip is not installed (Debian: iproute2): the test of dropped packets needs it")
	}
	id := randomHex(t, 4)
	// A /30 of 10.213.0.0/16, picked at random: test binaries of other
	// packages may make namespaces at the same time.
	n, err := rand.Int(rand.Reader, big.NewInt(1<<14))
	if err != nil {
		t.Fatal(err)
	}
	base := int(n.Int64()) * 4
	ns := &netns{
		name:      "dsh-ssh-" + id,
		outer:     fmt.Sprintf("10.213.%d.%d", base>>8, base&0xff+1),
		inner:     fmt.Sprintf("10.213.%d.%d", base>>8, base&0xff+2),
		outerLink: "dsh" + id + "o",
		innerLink: "dsh" + id + "i",
	}
	if out, err := ip("netns", "add", ns.name); err != nil {
		t.Skipf("cannot make a network namespace here (ip netns add: %v: %s): the test of dropped packets needs one", err, out)
	}
	t.Cleanup(ns.remove)
	if out, err := ip("link", "add", ns.outerLink, "type", "veth", "peer", "name", ns.innerLink, "netns", ns.name); err != nil {
		t.Skipf("cannot make a veth pair here (ip link add: %v: %s): the test of dropped packets needs one", err, out)
	}
	for _, args := range [][]string{
		{"addr", "add", ns.outer + "/30", "dev", ns.outerLink},
		{"link", "set", ns.outerLink, "up"},
		{"-n", ns.name, "addr", "add", ns.inner + "/30", "dev", ns.innerLink},
		{"-n", ns.name, "link", "set", ns.innerLink, "up"},
		{"-n", ns.name, "link", "set", "lo", "up"},
	} {
		if out, err := ip(args...); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return ns
}

// remove deletes the pair (deleting one end deletes both) and the
// namespace.
func (ns *netns) remove() {
	_, _ = ip("link", "del", ns.outerLink)
	_, _ = ip("netns", "del", ns.name)
}

// CutNetwork takes the namespace's end of the veth pair down: from then on
// the kernel drops every packet between the test and a server started
// with Options.Netns, and closes nothing, as on a network that died.
func (s *Server) CutNetwork(t testing.TB) {
	t.Helper()
	if s.netns == nil {
		t.Fatal("CutNetwork needs a server started with Options.Netns")
	}
	if out, err := ip("-n", s.netns.name, "link", "set", s.netns.innerLink, "down"); err != nil {
		t.Fatalf("ip link set down: %v: %s", err, out)
	}
}

func ip(args ...string) (string, error) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
