package local

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/config"
)

// netServer is an HTTP server on host loopback answering "hello from
// NAME".
func netServer(t *testing.T, name string) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", name)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// netSbx is a bwrap sandbox whose network is m, with its audit records.
func netSbx(t *testing.T, m config.NetworkMap) (*sbx, func() []gateway.Record) {
	t.Helper()
	var mu sync.Mutex
	var recs []gateway.Record
	s := newSbx(t, config.BackendBwrap, config.SandboxWorkspaceWrite, func(c *config.Local) {
		c.Sandbox.Network = &config.Network{Map: &m}
	}, WithNetwork(NetOptions{AskFallback: "deny", Audit: func(_ string, r gateway.Record) {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	}}))
	return s, func() []gateway.Record {
		mu.Lock()
		defer mu.Unlock()
		return append([]gateway.Record(nil), recs...)
	}
}

func TestNetworkMapReachesAllowedName(t *testing.T) {
	port := netServer(t, "allowed")
	s, records := netSbx(t, config.NetworkMap{
		Allow: []string{"allowed.test"}, Default: "deny",
		Hosts: map[string]string{"allowed.test": "127.0.0.1"}, AllowAddresses: []string{"127.0.0.1/32"},
	})
	for _, cmd := range []string{
		"curl -sS http://allowed.test:%d/",
		"curl -sS --noproxy '*' http://allowed.test:%d/",
		"exec 3<>/dev/tcp/allowed.test/%d; printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3",
	} {
		net := &bash.NetCall{ID: "c1"}
		res := s.runSpec(bash.Request{Command: fmt.Sprintf(cmd, port), Owner: s.owner, Net: net})
		if !strings.Contains(res.Stdout.Text, "hello from allowed") {
			t.Errorf("%s: stdout %q stderr %q", cmd, res.Stdout.Text, res.Stderr.Text)
		}
	}
	t.Logf("%+v", records())
}
