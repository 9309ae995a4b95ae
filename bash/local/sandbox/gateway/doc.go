// Package gateway is the sandbox's network by domain (docs/spec.md §11.1):
// what a sandboxed command may reach is decided per connection, by name,
// for every TCP client, whether or not it honours HTTP_PROXY.
//
// A session's network namespace has a resolver and one TCP listener, both
// dsh's. The resolver answers every name with a synthetic address from a
// reserved range ([FakeIPs]) and never asks the outside world, so a name
// leaks nothing by being looked up. Every TCP connection that leaves the
// namespace is redirected to the listener; the gateway maps the address
// the command dialled back to the name it looked up, decides the name and
// port by the rules (deny, then allow, then the default: ask or deny),
// resolves the name itself, refuses an address the command should not
// reach (private, loopback, link-local, multicast, unless listed), and
// joins the two connections. A connection made to the listener itself is
// a proxy client (HTTP CONNECT or an absolute URI), decided the same way.
package gateway
