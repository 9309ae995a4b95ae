package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseNetworkMap(t *testing.T) {
	f, err := Parse([]byte(`local:
  sandbox:
    mode: workspace-write
    network:
      allow: ["*.example.com", "git.example.org:22"]
      deny: [tracker.example.com]
      default: deny
      hosts: {git.internal: 10.1.2.3}
      allowAddresses: [10.1.2.3/32]
      toolRegistries: true
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &NetworkMap{Allow: []string{"*.example.com", "git.example.org:22"}, Deny: []string{"tracker.example.com"},
		Default: "deny", Hosts: map[string]string{"git.internal": "10.1.2.3"}, AllowAddresses: []string{"10.1.2.3/32"}, ToolRegistries: true}
	if diff := cmp.Diff(want, f.Local.Sandbox.Network.Filter()); diff != "" {
		t.Error(diff)
	}
	for doc, host := range map[string]bool{"true": true, "false": false} {
		f, err := Parse([]byte("local:\n  sandbox:\n    network: " + doc + "\n"))
		if err != nil || f.Local.Sandbox.Network.HostNetwork() != host || f.Local.Sandbox.Network.Filter() != nil {
			t.Errorf("network: %s: %+v, %v", doc, f.Local.Sandbox.Network, err)
		}
	}
}

func TestNetworkDefault(t *testing.T) {
	f, err := Parse([]byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	n := f.WithDefaults().Local.Sandbox.Network
	if m := n.Filter(); m == nil || m.Default != NetAsk || !n.Implied {
		t.Errorf("default network = %+v, want the implied map with default: ask", n)
	}
	if n := (Local{}).WithDefaults().Sandbox.Network; n.Filter() != nil || n.HostNetwork() {
		t.Errorf("a Local built in Go: network %+v, want off", n)
	}
}

func TestNetworkMapRefused(t *testing.T) {
	for _, tc := range []struct{ doc, err string }{
		{"default: allow", `"allow" is not one of`},
		{"allow: ['*.com:99999']", "the port must be a number from 1 to 65535"},
		{"allow: ['10.0.0.1']", "is an address: list addresses in allowAddresses"},
		{"allow: ['*.com']", "must be a host name or *.suffix"},
		{"deny: ['bad host']", "must be a host name or *.suffix"},
		{"hosts: {x.test: nowhere}", `"nowhere" is not an address`},
		{"allowAddresses: [10.0.0.0/33]", "must be an address or a prefix"},
		{"allowed: []", "unknown key"},
	} {
		f, err := Parse([]byte("local:\n  sandbox:\n    network: {" + tc.doc + "}\n"))
		if err == nil {
			err = f.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.doc, err, tc.err)
		}
	}
}

func TestHostRule(t *testing.T) {
	for _, tc := range []struct {
		rule, host string
		port       int
		want       bool
	}{
		{"example.com", "example.com", 443, true},
		{"example.com", "www.example.com", 443, false},
		{"*.example.com", "www.example.com", 1, true},
		{"*.example.com", "example.com", 1, false},
		{"*.example.com", "badexample.com", 1, false},
		{"git.example.org:22", "git.example.org", 22, true},
		{"git.example.org:22", "git.example.org", 443, false},
		{"Example.COM.", "example.com", 80, true},
	} {
		r, err := ParseHostRule(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Matches(tc.host, tc.port); got != tc.want {
			t.Errorf("%s matches %s:%d = %v", tc.rule, tc.host, tc.port, got)
		}
	}
}
