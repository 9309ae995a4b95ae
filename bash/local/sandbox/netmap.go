//go:build linux

package sandbox

// Network by domain (docs/spec.md §11.1): with bwrap, each session's
// namespace gets a gateway (package gateway) that its commands' lookups
// and TCP connections reach, whether or not they honour HTTP_PROXY; with
// Landlock, the gateway is on the host's loopback and only proxy clients
// reach anything (netmap_landlock.go).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
)

// netGateway is one session's gateway: the sockets it serves in the
// session's namespace, and the commands its connections are attributed
// to.
type netGateway struct {
	gw     *gateway.Gateway
	socks  *gatewaySockets
	port   int
	resolv string // the session's resolv.conf, naming the resolver
	wg     sync.WaitGroup

	mu      sync.Mutex
	callers []*gateway.Caller // the running commands, in the order they started
}

var errCannotAsk = errors.New("nobody can be asked")

// resolvConfText points a command's resolver at the gateway's.
const resolvConfText = "nameserver 127.0.0.1\noptions timeout:2 attempts:2\n"

// newNetGateway starts the gateway of a scope, when the network is a
// map; nil otherwise.
func (s *Sandbox) newNetGateway(sc *Scope, owner string) (*netGateway, error) {
	socks, err := s.gatewaySockets(sc)
	if socks == nil || err != nil {
		return nil, err
	}
	ng := &netGateway{socks: socks, port: socks.tcp.Addr().(*net.TCPAddr).Port, resolv: filepath.Join(sc.dir, "resolv.conf")}
	if err := os.WriteFile(ng.resolv, []byte(resolvConfText), 0o444); err != nil {
		socks.close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	rules, err := gateway.NewRules(*s.netMap, s.registries())
	if err != nil {
		socks.close()
		return nil, err
	}
	ng.gw = gateway.New(gateway.Config{
		Rules: rules, Names: gateway.NewFakeIPs(0), Caller: ng.current,
		AskTimeout: s.askTimeout, AskFallback: s.askFallback, Log: s.log,
		Audit: func(r gateway.Record) {
			if s.netAudit != nil {
				s.netAudit(owner, r)
			}
		},
	})
	ng.wg.Add(1)
	go func() { defer ng.wg.Done(); _ = ng.gw.Serve(socks.tcp) }()
	if socks.dns != nil { // none with Landlock
		ng.wg.Add(1)
		go func() { defer ng.wg.Done(); _ = ng.gw.ServeDNS(socks.dns) }()
	}
	return ng, nil
}

// gatewaySockets opens the listeners of sc's gateway: in its namespace
// sc.net (bwrap; a holder opened them already), or on the host's
// loopback (Landlock, which has none); nil without a map, or without a
// namespace to capture connections in.
func (s *Sandbox) gatewaySockets(sc *Scope) (*gatewaySockets, error) {
	switch {
	case s.netMap == nil:
		return nil, nil
	case s.landlock != nil:
		return landlockGatewaySockets()
	case sc.net == nil:
		return nil, nil
	case sc.net.socks != nil:
		return sc.net.socks, nil // a holder set its namespace up
	}
	var socks *gatewaySockets
	err := inNetns(sc.net.fd, func() error {
		var err error
		socks, err = setupNetns(sc.net.fd)
		return err
	})
	return socks, err
}

// registries is the lazily read list of the tool registries' allow
// rules, when the map asks for them: reading runs the user's tools, which
// must not delay a session's first command unless it connects somewhere.
// They are the user's and the system's configuration, read once per
// sandbox; never a project's: its .npmrc or .cargo/config.toml is the
// sandbox's to write, so a command could allow itself a host.
func (s *Sandbox) registries() func() []string {
	if !s.netMap.ToolRegistries {
		return nil
	}
	s.regsOnce.Do(func() {
		s.regs = sync.OnceValue(func() []string {
			var rules []string
			for _, r := range gateway.ToolRegistries(context.Background(), gateway.RegistryEnv{Env: s.env, Home: s.home}) {
				rules = append(rules, r.Rule())
			}
			return rules
		})
	})
	go s.regs()
	return s.regs
}

func (ng *netGateway) close() {
	if ng == nil {
		return
	}
	ng.socks.close()
	ng.gw.Close()
	ng.wg.Wait()
}

// enter makes a starting command the one new connections are attributed
// to until it ends (leave).
func (ng *netGateway) enter(n *bash.NetCall) (leave func()) {
	if ng == nil {
		return func() {}
	}
	done := make(chan struct{})
	c := &gateway.Caller{Done: done}
	if n != nil {
		c.ID, c.Refused = n.ID, n.Refuse
		if n.Ask != nil {
			c.Ask = func(ctx context.Context, host string, port int) (bool, error) {
				switch n.Ask(ctx, host, port) {
				case bash.NetAccepted:
					return true, nil
				case bash.NetDeclined:
					return false, nil
				case bash.NetDismissed:
					return false, gateway.ErrDismissed
				}
				return false, errCannotAsk
			}
		}
	}
	ng.mu.Lock()
	ng.callers = append(ng.callers, c)
	ng.mu.Unlock()
	return func() {
		ng.mu.Lock()
		defer ng.mu.Unlock()
		select {
		case <-done:
			return // left already
		default:
			close(done) // its open question is withdrawn
		}
		for i, x := range ng.callers {
			if x == c {
				ng.callers = append(ng.callers[:i], ng.callers[i+1:]...)
				return
			}
		}
	}
}

// current is the command a new connection is attributed to: the latest
// started of those running. A connection's process is not looked up, so
// with several commands running at once in a session, an earlier one's
// connection is asked about and reported as the latest's.
func (ng *netGateway) current() gateway.Caller {
	ng.mu.Lock()
	defer ng.mu.Unlock()
	if len(ng.callers) == 0 {
		return gateway.Caller{}
	}
	return *ng.callers[len(ng.callers)-1]
}

// proxyEnv are the proxy variables of a command in the session: tools
// that want a proxy use the gateway as one; loopback stays direct.
func (ng *netGateway) proxyEnv() []string {
	if ng == nil {
		return nil
	}
	url := "http://127.0.0.1:" + strconv.Itoa(ng.port)
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, k+"="+url, strings.ToLower(k)+"="+url)
	}
	return append(env, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}

// checkNetMap refuses a network map the backend cannot do; the map a
// config implied becomes network off instead, as Describe says.
func (s *Sandbox) checkNetMap(implied bool) error {
	if s.netMap == nil {
		return nil
	}
	var why string
	switch {
	case s.landlock != nil:
		why = s.landlockNetMap()
	case s.net == netSetns:
		return nil
	case s.net == netHolder:
		why = s.holderNetMap()
	default:
		why = "network by domain needs a network namespace per session, shared by its commands (dsh doctor says why there is none)"
	}
	if why == "" {
		return nil
	}
	if implied {
		s.netMap = nil
		s.notes = append(s.notes, why+": the network is off instead")
		return nil
	}
	return fmt.Errorf("%w: local.sandbox.network: %s; use network: false or true here", ErrUnavailable, why)
}

// NetworkMap reports whether commands' connections are decided by the
// network map.
func (s *Sandbox) NetworkMap() bool { return s.netMap != nil }

// EnterNet makes a starting command the one the session's new
// connections are attributed to, until leave; a no-op without a
// network map.
func (sc *Scope) EnterNet(n *bash.NetCall) (leave func()) {
	if sc == nil {
		return func() {}
	}
	return sc.gw.enter(n)
}

// resolvMount shows the session's resolv.conf where /etc/resolv.conf
// leads, so lookups go to the gateway's resolver.
func (ng *netGateway) resolvMount(a []string) []string {
	if ng == nil {
		return a
	}
	target := resolved(resolvConf)
	if _, err := os.Stat(target); err != nil && !withinAny(target, runDirs()) {
		return a // nowhere to mount it: only proxy clients resolve
	}
	return append(a, "--ro-bind", ng.resolv, target)
}

// netLines are Describe's lines of a network map: the rules, then each
// tool registry allowed.
func (s *Sandbox) netLines() []string {
	m := s.netMap.WithDefaults()
	line := "network: by domain, per session (nftables redirect to dsh's gateway, dsh's resolver); default " + m.Default
	if s.landlock != nil {
		line = "network: by domain, per session, through the proxy variables only (Landlock: TCP connections only to the port of dsh's gateway on loopback); default " + m.Default
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"allow", m.Allow}, {"deny", m.Deny}, {"allowAddresses", m.AllowAddresses}} {
		if len(l.list) > 0 {
			line += "; " + l.key + " " + strings.Join(l.list, ", ")
		}
	}
	if len(m.Hosts) > 0 {
		var pins []string
		for name, a := range m.Hosts {
			pins = append(pins, name+"="+a)
		}
		slices.Sort(pins)
		line += "; hosts " + strings.Join(pins, ", ")
	}
	lines := []string{line}
	if m.ToolRegistries {
		regs := gateway.ToolRegistries(context.Background(), gateway.RegistryEnv{Env: s.env, Home: s.home})
		if len(regs) == 0 {
			lines = append(lines, "registry: none found (toolRegistries)")
		}
		for _, r := range regs {
			lines = append(lines, "registry: "+r.Rule()+" ("+r.Tool+", "+r.Source+")")
		}
	}
	return lines
}
