package local

// Network by domain with the landlock backend (docs/spec.md §11.1): only
// proxy clients reach anything; every other connection fails closed.

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
)

// landlockNetSbx is a sandbox of the landlock backend b whose network is
// m, with its audit records; skipped where Landlock has no network rules.
func landlockNetSbx(t *testing.T, b string, m config.NetworkMap) (*sbx, func(n int) []gateway.Record) {
	t.Helper()
	if abi, _ := llsys.LandlockGetABIVersion(); abi < 4 {
		t.Skipf("SKIP-REASON: Landlock ABI %d has no network rules (needs 4, Linux 6.7)", abi)
	}
	log := &auditLog{}
	s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) {
		c.Sandbox.Network = &config.Network{Map: &m}
	}, WithNetwork(NetOptions{AskFallback: "deny", Audit: log.add}))
	return s, log.wait
}

// TestLandlockNetworkMapProxy: a proxy client reaches an allowed name,
// and a denied one is refused with 403, recorded for the call and in the
// audit.
func TestLandlockNetworkMapProxy(t *testing.T) {
	port := netServer(t, "allowed")
	for _, b := range []string{config.BackendLandlock, landlockHelper} {
		t.Run(b, func(t *testing.T) {
			s, records := landlockNetSbx(t, b, pinned("deny"))
			n := &bash.NetCall{ID: "c1"}
			res := s.runSpec(bash.Request{Command: fmt.Sprintf(clients[0], "allowed.test", port), Owner: s.owner, Net: n})
			if !strings.Contains(res.Stdout.Text, "hello from allowed") || len(refusedOf(n)) > 0 {
				t.Fatalf("allowed.test through the proxy: stdout %q stderr %q refused %q", res.Stdout.Text, res.Stderr.Text, refusedOf(n))
			}
			n = &bash.NetCall{ID: "c2"}
			res = s.runSpec(bash.Request{Command: fmt.Sprintf("curl -sS --max-time 5 -o /dev/null -w '%%{http_code}' http://denied.test:%d/", port), Owner: s.owner, Net: n})
			if res.Stdout.Text != "403" || len(refusedOf(n)) != 1 || refusedOf(n)[0] != "denied.test" {
				t.Errorf("denied.test through the proxy: stdout %q stderr %q refused %q", res.Stdout.Text, res.Stderr.Text, refusedOf(n))
			}
			recs := records(2)
			if len(recs) != 2 || recs[0].Decision != gateway.Allow || recs[0].Host != "allowed.test" || recs[0].Caller != "c1" || recs[0].BytesDown == 0 ||
				recs[1].Decision != gateway.Deny || recs[1].Rule != "deny: denied.test" || recs[1].Caller != "c2" {
				t.Errorf("audit records %+v", recs)
			}
		})
	}
}

// TestLandlockNetworkMapFailsClosed: a program that ignores the proxy
// variables reaches nothing, not even the host's loopback its map
// allows: a name does not resolve (no DNS), TCP connections are refused
// (EACCES), UDP, raw and MPTCP sockets cannot be made (EPERM); a server
// may still listen.
func TestLandlockNetworkMapFailsClosed(t *testing.T) {
	port := netServer(t, "loopback")
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	udp := pc.LocalAddr().(*net.UDPAddr).Port
	py := func(code string) string { return "/usr/bin/python3 -c '" + code + "'" }
	for _, b := range []string{config.BackendLandlock, landlockHelper} {
		t.Run(b, func(t *testing.T) {
			s, records := landlockNetSbx(t, b, pinned("deny"))
			for _, tc := range []struct{ cmd, want string }{
				{fmt.Sprintf("curl -sS --max-time 5 --noproxy '*' http://allowed.test:%d/", port), "Could not resolve host"},
				{fmt.Sprintf("curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:%d/", port), "Couldn't connect"},
				{fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port), "Permission denied"},
				{py(fmt.Sprintf(`import socket; socket.create_connection(("127.0.0.1", %d), 5)`, port)), "PermissionError"},
				{py(fmt.Sprintf(`import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", %d))`, udp)), "PermissionError"},
				{fmt.Sprintf("printf x >/dev/udp/127.0.0.1/%d", udp), "Operation not permitted"},
				{py(`import socket; socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 262)`), "PermissionError"},
				{py(`import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)`), "PermissionError"},
			} {
				res := s.run(tc.cmd)
				if exitCode(res) == "0" || strings.Contains(res.Stdout.Text, "hello") || !strings.Contains(res.Stderr.Text, tc.want) {
					t.Errorf("%s: exit %s stdout %q stderr %q, want a failure with %q", tc.cmd, exitCode(res), res.Stdout.Text, res.Stderr.Text, tc.want)
				}
			}
			_ = pc.SetReadDeadline(time.Now().Add(proctest.Scale(300 * time.Millisecond)))
			if n, from, err := pc.ReadFrom(make([]byte, 10)); err == nil {
				t.Errorf("a UDP packet arrived: %d bytes from %v", n, from)
			}
			if r := records(0); len(r) != 0 {
				t.Errorf("the gateway saw connections: %+v", r)
			}
			res := s.run(py(`import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print("listening")`))
			if !strings.Contains(res.Stdout.Text, "listening") {
				t.Errorf("a server could not listen: %q %q", res.Stdout.Text, res.Stderr.Text)
			}
		})
	}
}
