package gateway

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake clock for FakeIPs: it moves only when told to.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newFakeIPs returns a table of max names on a fake clock.
func newFakeIPs(max int) (*FakeIPs, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := NewFakeIPs(max)
	f.now = c.now
	return f, c
}

func mustAddr(t testing.TB, f *FakeIPs, name string) netip.Addr {
	t.Helper()
	a, ok := f.Addr(name)
	if !ok {
		t.Fatalf("Addr(%q): table full", name)
	}
	return a
}

// nameOf returns the name a maps to, without holding or touching it.
func nameOf(f *FakeIPs, a netip.Addr) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.lookup(a); e != nil {
		return e.name
	}
	return ""
}

func TestFakeIPsAddr(t *testing.T) {
	f, _ := newFakeIPs(0)
	a := mustAddr(t, f, "example.com")
	if !IsFake(a) || !a.Is4() {
		t.Fatalf("Addr = %v, not in %v", a, FakeRange)
	}
	if a == FakeRange.Addr() {
		t.Errorf("Addr = %v, the range's network address", a)
	}
	for _, same := range []string{"example.com.", "EXAMPLE.com", "Example.COM."} {
		if b := mustAddr(t, f, same); b != a {
			t.Errorf("Addr(%q) = %v, want %v (same name)", same, b, a)
		}
	}
	b := mustAddr(t, f, "example.org")
	if b == a {
		t.Errorf("two names share %v", a)
	}
	if f.Len() != 2 {
		t.Errorf("Len = %d, want 2", f.Len())
	}
	if got := nameOf(f, a); got != "example.com" {
		t.Errorf("name of %v = %q, want the folded name", a, got)
	}
}

func TestFakeIPsInvalidNames(t *testing.T) {
	label := strings.Repeat("a", 63)
	long := strings.Repeat(label+".", 4)[:254] // 254 bytes, no trailing dot
	for _, name := range []string{
		"", ".", "..", "a..b", ".a", "a.b..", long, label + "a.com",
		"a b.com", "a\x00b", "é.com", "a/b", "*.example.com", "a.b\n",
	} {
		f, _ := newFakeIPs(4)
		if a, ok := f.Addr(name); ok {
			t.Errorf("Addr(%q) = %v, want refused", name, a)
		}
		if f.Len() != 0 {
			t.Errorf("Addr(%q) added an entry", name)
		}
	}
	f, _ := newFakeIPs(8)
	for _, name := range []string{label + ".com", long[:253], "_dmarc.x-y.com.", "localhost", "1.2.3.4"} {
		mustAddr(t, f, name)
	}
}

func TestFakeIPsMax(t *testing.T) {
	if got := NewFakeIPs(0).max; got != DefaultMaxNames {
		t.Errorf("NewFakeIPs(0): max %d, want %d", got, DefaultMaxNames)
	}
	if got := NewFakeIPs(-1).max; got != DefaultMaxNames {
		t.Errorf("NewFakeIPs(-1): max %d, want %d", got, DefaultMaxNames)
	}
	// The whole range: every address once, none the network's or the
	// broadcast's, and then the table is full.
	f, _ := newFakeIPs(1 << 20)
	seen := make(map[netip.Addr]bool)
	for i := range fakeCapacity {
		a := mustAddr(t, f, fmt.Sprintf("h%d", i))
		if seen[a] || !IsFake(a) {
			t.Fatalf("name %d got %v: repeated or outside the range", i, a)
		}
		seen[a] = true
	}
	last := netip.MustParseAddr("198.19.255.255")
	if seen[FakeRange.Addr()] || seen[last] {
		t.Errorf("the range's first or last address was handed out")
	}
	if a, ok := f.Addr("one-more"); ok {
		t.Errorf("Addr on a full range = %v, want false", a)
	}
	if f.Len() != fakeCapacity {
		t.Errorf("Len = %d, want %d", f.Len(), fakeCapacity)
	}
}

func TestIsFake(t *testing.T) {
	for s, want := range map[string]bool{
		"198.18.0.1": true, "198.19.255.254": true, "198.17.255.255": false,
		"198.20.0.0": false, "127.0.0.1": false, "::ffff:198.18.3.4": true,
		"2001:db8::1": false,
	} {
		if got := IsFake(netip.MustParseAddr(s)); got != want {
			t.Errorf("IsFake(%s) = %v, want %v", s, got, want)
		}
	}
	if IsFake(netip.Addr{}) {
		t.Error("IsFake(zero Addr) = true")
	}
}

func TestFakeIPsHold(t *testing.T) {
	f, _ := newFakeIPs(8)
	a := mustAddr(t, f, "Example.com")
	name, release, ok := f.Hold(a)
	if !ok || name != "example.com" {
		t.Fatalf("Hold(%v) = %q, %v; want example.com", a, name, ok)
	}
	release()
	release() // idempotent: must not unpin a second hold
	mapped := netip.AddrFrom16(a.As16())
	name, release2, ok := f.Hold(mapped)
	if !ok || name != "example.com" {
		t.Errorf("Hold(%v) = %q, %v; want example.com", mapped, name, ok)
	}
	release2()
	for _, s := range []string{"198.18.0.0", "198.18.0.5", "198.19.255.255", "10.0.0.1", "::1"} {
		b := netip.MustParseAddr(s)
		if name, release, ok := f.Hold(b); ok || release == nil {
			t.Errorf("Hold(%v) = %q, %v, release nil %v; want false and a no-op", b, name, ok, release == nil)
		} else {
			release()
		}
	}
	if _, _, ok := f.Hold(netip.Addr{}); ok {
		t.Error("Hold(zero Addr) = ok")
	}
}

// TestFakeIPsLRU checks which entry is reused: the least recently used,
// once it is neither held nor recent.
func TestFakeIPsLRU(t *testing.T) {
	f, c := newFakeIPs(3)
	a, b, cc := mustAddr(t, f, "a"), mustAddr(t, f, "b"), mustAddr(t, f, "c")
	if _, ok := f.Addr("d"); ok {
		t.Fatal("Addr on a table of recent entries = ok")
	}
	c.advance(AnswerTTL - time.Nanosecond)
	if _, ok := f.Addr("d"); ok {
		t.Fatal("an entry younger than AnswerTTL was reused")
	}
	c.advance(time.Nanosecond)
	mustAddr(t, f, "a") // a is used again: b is now the oldest
	if d := mustAddr(t, f, "d"); d != b {
		t.Errorf("d got %v, want b's %v (least recently used)", d, b)
	}
	if e := mustAddr(t, f, "e"); e != cc {
		t.Errorf("e got %v, want c's %v", e, cc)
	}
	if _, ok := f.Addr("g"); ok {
		t.Error("Addr = ok with every entry recent")
	}
	if nameOf(f, a) != "a" || nameOf(f, b) != "d" || nameOf(f, cc) != "e" || f.Len() != 3 {
		t.Errorf("table: %s %s %s, Len %d", nameOf(f, a), nameOf(f, b), nameOf(f, cc), f.Len())
	}
	if _, ok := f.Addr("b"); ok {
		t.Error("b, reused, got an address again while the table is all recent")
	}
}

// TestFakeIPsHeldNeverReused checks a held entry keeps its name however
// old it grows, and that its release counts as a use.
func TestFakeIPsHeldNeverReused(t *testing.T) {
	f, c := newFakeIPs(2)
	a, b := mustAddr(t, f, "a"), mustAddr(t, f, "b")
	_, relA, _ := f.Hold(a)
	_, relA2, _ := f.Hold(a) // two connections
	_, relB, _ := f.Hold(b)
	c.advance(time.Hour)
	if _, ok := f.Addr("c"); ok {
		t.Fatal("Addr = ok with every entry held")
	}
	relB()
	if _, ok := f.Addr("c"); ok {
		t.Fatal("an entry released just now was reused")
	}
	c.advance(AnswerTTL)
	if got := mustAddr(t, f, "c"); got != b {
		t.Fatalf("c got %v, want b's %v", got, b)
	}
	relA()
	relA() // still held by the second connection
	c.advance(time.Hour)
	if got := mustAddr(t, f, "d"); got != b { // c's entry, old and free
		t.Fatalf("d got %v, want c's %v, not a's, still held by one connection", got, b)
	}
	if _, ok := f.Addr("e"); ok {
		t.Fatal("Addr = ok with one entry held and one recent")
	}
	if nameOf(f, a) != "a" {
		t.Fatalf("a's address maps to %q", nameOf(f, a))
	}
	relA2()
	c.advance(AnswerTTL)
	// d was answered before a's release: d is the less recently used.
	if got := mustAddr(t, f, "e"); got != b {
		t.Errorf("e got %v, want d's %v", got, b)
	}
	if got := mustAddr(t, f, "f"); got != a {
		t.Errorf("f got %v, want a's %v", got, a)
	}
}

// TestFakeIPsChurn sends 10,000 names through a table of 1024 while
// connections come and go, and checks against a model that the table
// stays bounded, that no held or recent entry changes name, and that
// Addr fails only when every entry is held or recent.
func TestFakeIPsChurn(t *testing.T) {
	const max, names = 1024, 10000
	f, c := newFakeIPs(max)
	type conn struct {
		addr    netip.Addr
		name    string
		release func()
	}
	var conns []conn
	answered := make(map[netip.Addr]struct {
		name string
		at   time.Time
	})
	full := 0
	for i := range names {
		name := fmt.Sprintf("host-%d.example", i)
		a, ok := f.Addr(name)
		if !ok {
			full++
			if free := reusable(f, c.now()); free != 0 {
				t.Fatalf("name %d: Addr = false with %d reusable entries", i, free)
			}
		} else {
			answered[a] = struct {
				name string
				at   time.Time
			}{name, c.now()}
			if i%7 == 0 { // a connection to every seventh name
				n, rel, ok := f.Hold(a)
				if !ok || n != name {
					t.Fatalf("Hold(%v) = %q, %v; want %q", a, n, ok, name)
				}
				conns = append(conns, conn{a, name, rel})
			}
		}
		if i%13 == 0 && len(conns) > 0 { // connections end, oldest first
			conns[0].release()
			conns = conns[1:]
		}
		c.advance(3 * time.Millisecond)
		if f.Len() > max {
			t.Fatalf("Len = %d > %d", f.Len(), max)
		}
		for _, cn := range conns {
			if got := nameOf(f, cn.addr); got != cn.name {
				t.Fatalf("held %v maps to %q, want %q", cn.addr, got, cn.name)
			}
		}
		if i%97 == 0 { // recent answers keep their names
			for a, r := range answered {
				if c.now().Sub(r.at) < AnswerTTL && nameOf(f, a) != r.name {
					t.Fatalf("%v answered %v ago as %q now maps to %q", a, c.now().Sub(r.at), r.name, nameOf(f, a))
				}
			}
		}
	}
	if full == 0 || full == names {
		t.Errorf("table full %d times of %d: the test does not exercise both", full, names)
	}
	for _, cn := range conns {
		cn.release()
	}
	c.advance(AnswerTTL)
	for i := range max {
		mustAddr(t, f, fmt.Sprintf("after-%d", i))
	}
	if f.Len() != max {
		t.Errorf("Len = %d, want %d", f.Len(), max)
	}
}

// reusable counts the entries Addr could give a new name.
func reusable(f *FakeIPs, now time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.max - len(f.entries)
	for _, e := range f.entries {
		if e.holds == 0 && now.Sub(e.used) >= AnswerTTL {
			n++
		}
	}
	return n
}

func TestFakeIPsConcurrent(t *testing.T) {
	f := NewFakeIPs(64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				name := fmt.Sprintf("n%d.g%d", i%100, g%2)
				a, ok := f.Addr(name)
				if !ok {
					continue
				}
				if n, rel, ok := f.Hold(a); ok {
					if n != name { // only possible after AnswerTTL
						t.Errorf("Hold(%v) = %q, want %q", a, n, name)
					}
					rel()
				}
				_ = f.Len()
			}
		})
	}
	wg.Wait()
	if f.Len() > 64 {
		t.Errorf("Len = %d > 64", f.Len())
	}
}
