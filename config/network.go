package config

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Network is local.sandbox.network (docs/spec.md §11.1): false, each
// session a network namespace with only lo; true, the host's network; or
// a map, the session's connections decided by name ([NetworkMap]). A nil
// *Network is unset: off for a [Local] built in Go, the default map
// (default: ask) in a [File].
type Network struct {
	// Host is network: true.
	Host bool
	// Map is network: {…}; nil with true or false.
	Map *NetworkMap
	// Implied marks the default map of a file that did not say: where a
	// map cannot be done, the network is off instead of dsh refusing to
	// start.
	Implied bool `yaml:"-"`
}

// NetworkMap decides each connection of a sandboxed command by the name
// it looked up: deny rules win, then allow rules, then Default.
type NetworkMap struct {
	// Allow and Deny are host rules: "host", "*.suffix" (the suffix's
	// subdomains, not the suffix itself), each with an optional ":port".
	Allow []string `yaml:"allow,omitempty"`
	Deny  []string `yaml:"deny,omitempty"`
	// Default is what a host no rule names gets: "ask" (the default) or
	// "deny".
	Default string `yaml:"default,omitempty"`
	// Hosts are pinned answers, as /etc/hosts: name → address.
	Hosts map[string]string `yaml:"hosts,omitempty"`
	// AllowAddresses are addresses or prefixes ("10.1.2.3/32") that may be
	// reached although private, loopback, link-local or multicast; a
	// connection to a literal address is decided by them alone.
	AllowAddresses []string `yaml:"allowAddresses,omitempty"`
	// ToolRegistries also allows the registries the user's own tools are
	// configured for.
	ToolRegistries bool `yaml:"toolRegistries,omitempty"`
}

// Network map defaults.
const (
	NetAsk  = "ask"
	NetDeny = "deny"
)

var netDefaults = []string{NetAsk, NetDeny}

// DefaultNetwork is the network of a sandbox a config file turns on
// without saying: connections decided by name, each unknown host asked.
func DefaultNetwork() *Network { return &Network{Map: &NetworkMap{Default: NetAsk}, Implied: true} }

// HostNetwork reports network: true.
func (n *Network) HostNetwork() bool { return n != nil && n.Host }

// ReachesHostLoopback reports whether commands may reach the host's
// loopback services: the host's network, or a map whose allowAddresses
// overlap loopback.
func (n *Network) ReachesHostLoopback() bool {
	if n.HostNetwork() {
		return true
	}
	for _, s := range n.Filter().addresses() {
		if p, err := ParsePrefix(s); err == nil && (p.Overlaps(netip.MustParsePrefix("127.0.0.0/8")) || p.Contains(netip.IPv6Loopback())) {
			return true
		}
	}
	return false
}

func (m *NetworkMap) addresses() []string {
	if m == nil {
		return nil
	}
	return m.AllowAddresses
}

// Filter is the map, or nil.
func (n *Network) Filter() *NetworkMap {
	if n == nil {
		return nil
	}
	return n.Map
}

// MarshalYAML writes n as the config says it: true, false or the map.
func (n Network) MarshalYAML() (any, error) {
	if n.Map != nil {
		return n.Map, nil
	}
	return n.Host, nil
}

// HostRule is one allow or deny rule of a network map.
type HostRule struct {
	// Host is the name, lower case; with Suffix, the suffix after "*.".
	Host   string
	Suffix bool
	// Port is 0 for any port.
	Port int
}

// ParseHostRule parses "host", "*.suffix", either with ":port".
func ParseHostRule(s string) (HostRule, error) {
	var r HostRule
	host := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		p, err := strconv.Atoi(s[i+1:])
		if err != nil || p < 1 || p > 65535 {
			return r, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		host, r.Port = s[:i], p
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, r.Suffix = rest, true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if _, err := netip.ParseAddr(host); err == nil {
		return r, fmt.Errorf("%q is an address: list addresses in allowAddresses", s)
	}
	if !ValidHostName(host) || r.Suffix && !strings.Contains(host, ".") {
		return r, fmt.Errorf("%q must be a host name or *.suffix (with two labels or more), with an optional :port", s)
	}
	r.Host = host
	return r, nil
}

// Matches reports whether the rule names host (lower case, no trailing
// dot) and port.
func (r HostRule) Matches(host string, port int) bool {
	if r.Port != 0 && r.Port != port {
		return false
	}
	if r.Suffix {
		return strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// String is the rule as written: "host", "*.suffix", with ":port".
func (r HostRule) String() string {
	s := r.Host
	if r.Suffix {
		s = "*." + s
	}
	if r.Port != 0 {
		s += ":" + strconv.Itoa(r.Port)
	}
	return s
}

// ValidHostName reports whether s is a DNS name: at most 253 bytes,
// labels of 1 to 63 letters, digits, hyphens or underscores.
func ValidHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// ParsePrefix parses an allowAddresses entry: an address or a prefix.
func ParsePrefix(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q must be an address or a prefix such as 10.1.2.3/32", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// validate reports the first entry of m that cannot be used.
func (m *NetworkMap) validate() error {
	const key = "sandbox.network"
	if m.Default != "" && !slices.Contains(netDefaults, m.Default) {
		return errOneOf(key+".default", m.Default, 0, netDefaults)
	}
	for _, l := range []struct {
		key   string
		rules []string
	}{{key + ".allow", m.Allow}, {key + ".deny", m.Deny}} {
		for _, s := range l.rules {
			if _, err := ParseHostRule(s); err != nil {
				return keyErr(l.key, 0, "entry %s", err)
			}
		}
	}
	for name, addr := range m.Hosts {
		if !ValidHostName(name) {
			return keyErr(key+".hosts", 0, "%q is not a host name", name)
		}
		if _, err := netip.ParseAddr(addr); err != nil {
			return keyErr(key+".hosts", 0, "%s: %q is not an address", name, addr)
		}
	}
	for _, s := range m.AllowAddresses {
		if _, err := ParsePrefix(s); err != nil {
			return keyErr(key+".allowAddresses", 0, "entry %s", err)
		}
	}
	return nil
}

// WithDefaults returns m with default: ask spelled out.
func (m NetworkMap) WithDefaults() NetworkMap {
	if m.Default == "" {
		m.Default = NetAsk
	}
	return m
}
