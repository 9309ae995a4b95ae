package mcpserver

import (
	"net"
	"testing"
	"time"
)

// TestSameToken: equal tokens match; a prefix, an extension, a token of
// another length and the empty string do not.
func TestSameToken(t *testing.T) {
	const want = "0123456789abcdef0123"
	for got, ok := range map[string]bool{
		want: true, want[:19]: false, want + "0": false, "": false,
		"0123456789abcdef0124": false, "x": false,
	} {
		if sameToken(got, want) != ok {
			t.Errorf("sameToken(%q, %q) = %v, want %v", got, want, !ok, ok)
		}
	}
}

// TestConnGuardEvictsTheOldest: past max pending connections the oldest
// is given back for closing; an authenticated one no longer counts.
func TestConnGuardEvictsTheOldest(t *testing.T) {
	g := newConnGuard(2)
	a, b, c, d := fakeConn("a"), fakeConn("b"), fakeConn("c"), fakeConn("d")
	if g.add(a) != nil || g.add(b) != nil {
		t.Fatal("evicted below the limit")
	}
	if got := g.add(c); got != a {
		t.Fatalf("evicted %v, want a", got)
	}
	g.forget(b) // authenticated
	if g.add(d) != nil {
		t.Fatal("an authenticated connection still counted")
	}
	if g.isPending(a) || g.isPending(b) || !g.isPending(c) || !g.isPending(d) {
		t.Fatal("wrong pending set")
	}
}

type fakeConn string

func (fakeConn) Read([]byte) (int, error)         { return 0, nil }
func (fakeConn) Write(p []byte) (int, error)      { return len(p), nil }
func (fakeConn) Close() error                     { return nil }
func (fakeConn) LocalAddr() net.Addr              { return nil }
func (fakeConn) RemoteAddr() net.Addr             { return nil }
func (fakeConn) SetDeadline(time.Time) error      { return nil }
func (fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (fakeConn) SetWriteDeadline(time.Time) error { return nil }
