package gateway

import (
	"net/netip"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/config"
)

// Verdicts of the rules.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask"
)

// Rules are a network map made ready to decide: deny rules win, then
// allow rules, then the default.
type Rules struct {
	allow, deny []config.HostRule
	allowText   []string // allow's rules as written, for the audit
	denyText    []string
	def         string
	hosts       map[string]netip.Addr
	addrs       []netip.Prefix
	// registries are the tool registries' rules, read when first needed.
	registries func() []config.HostRule
}

// NewRules makes the rules of m (validated: see [config.Sandbox.Validate]).
// registries, when not nil, gives more allow rules (the tool
// registries'), called once, when a decision first needs them.
func NewRules(m config.NetworkMap, registries func() []string) (*Rules, error) {
	m = m.WithDefaults()
	r := &Rules{def: m.Default, hosts: make(map[string]netip.Addr, len(m.Hosts))}
	if registries == nil {
		registries = func() []string { return nil }
	}
	r.registries = sync.OnceValue(func() []config.HostRule {
		var out []config.HostRule
		for _, s := range registries() {
			if h, err := config.ParseHostRule(s); err == nil {
				out = append(out, h)
			}
		}
		return out
	})
	for _, s := range m.Allow {
		h, err := config.ParseHostRule(s)
		if err != nil {
			return nil, err
		}
		r.allow, r.allowText = append(r.allow, h), append(r.allowText, s)
	}
	for _, s := range m.Deny {
		h, err := config.ParseHostRule(s)
		if err != nil {
			return nil, err
		}
		r.deny, r.denyText = append(r.deny, h), append(r.denyText, s)
	}
	for name, a := range m.Hosts {
		addr, err := netip.ParseAddr(a)
		if err != nil {
			return nil, err
		}
		r.hosts[ruleName(name)] = addr.Unmap()
	}
	for _, s := range m.AllowAddresses {
		p, err := config.ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		r.addrs = append(r.addrs, p)
	}
	return r, nil
}

// ruleName is a name as the rules compare it: lower case, no final dot.
func ruleName(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// Decide decides a connection to host:port: a verdict and the rule that
// gave it ("deny: x", "allow: y", "default: ask").
func (r *Rules) Decide(host string, port int) (verdict, rule string) {
	host = ruleName(host)
	for i, d := range r.deny {
		if d.Matches(host, port) {
			return Deny, "deny: " + r.denyText[i]
		}
	}
	for i, a := range r.allow {
		if a.Matches(host, port) {
			return Allow, "allow: " + r.allowText[i]
		}
	}
	for _, a := range r.registries() {
		if a.Matches(host, port) {
			return Allow, "toolRegistries: " + a.String()
		}
	}
	return r.def, "default: " + r.def
}

// Refused reports whether no connection to host could be allowed on any
// port: its lookup is answered "no such name".
func (r *Rules) Refused(host string) bool {
	host = ruleName(host)
	for _, d := range r.deny {
		if d.Port == 0 && d.Matches(host, 0) {
			return true
		}
	}
	if r.def != Deny {
		return false
	}
	for _, rules := range [][]config.HostRule{r.allow, r.registries()} {
		for _, a := range rules {
			if a.Matches(host, a.Port) {
				return false
			}
		}
	}
	return true
}

// Pinned is the address hosts pins host to.
func (r *Rules) Pinned(host string) (netip.Addr, bool) {
	a, ok := r.hosts[ruleName(host)]
	return a, ok
}

// AddressAllowed reports whether a may be reached once its name was
// allowed: a public unicast address, or one allowAddresses lists.
func (r *Rules) AddressAllowed(a netip.Addr) bool {
	return Public(a) || r.Listed(a)
}

// Listed reports whether allowAddresses lists a; a connection to a
// literal address is decided by this alone.
func (r *Rules) Listed(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range r.addrs {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// special are the ranges that are not public beyond what netip's methods
// know: this network, shared address space (carrier NAT), the range the
// resolver's synthetic addresses come from, IPv4 reserved and broadcast,
// NAT64 and the documentation ranges.
var special = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// Public reports whether a is a public unicast address: not private,
// loopback, link-local (cloud metadata services), multicast, unspecified
// or one of the special ranges.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsMulticast() ||
		a.IsUnspecified() || a.IsInterfaceLocalMulticast() || a.IsLinkLocalMulticast() {
		return false
	}
	for _, p := range special {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
