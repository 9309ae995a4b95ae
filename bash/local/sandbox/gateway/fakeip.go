package gateway

// The resolver gives every name an address of its own from a reserved
// range, so the gateway can tell, from the address a command dials, which
// name it meant. The table is bounded: when it is full, the entry used
// least recently is given to the next name, unless a connection holds it
// or it was answered too recently for a program to have finished dialling.

import (
	"net/netip"
	"sync"
	"time"
)

// FakeRange is the reserved range synthetic addresses come from.
var FakeRange = netip.MustParsePrefix("198.18.0.0/15")

const (
	// DefaultMaxNames is the table's size when NewFakeIPs is given none.
	DefaultMaxNames = 16384

	// AnswerTTL is how long after an answer (or after its last
	// connection ends) an entry keeps its name: a program may dial an
	// address a little while after it looked it up.
	AnswerTTL = 5 * time.Second

	// RecordTTL is the TTL of the records the resolver answers with,
	// well below AnswerTTL so a program asks again rather than cache.
	RecordTTL = 1 * time.Second
)

// fakeBase is the first address handed out: FakeRange's first address,
// the network's own, is skipped, and so is its last (all ones).
var fakeBase = FakeRange.Addr().Next()

// fakeCapacity is how many addresses FakeRange holds for names.
const fakeCapacity = 1<<(32-15) - 2

// FakeIPs maps DNS names to addresses in FakeRange and back. Make one
// with NewFakeIPs; it is safe for concurrent use.
type FakeIPs struct {
	mu      sync.Mutex
	max     int
	byName  map[string]*fakeEntry
	entries []*fakeEntry // by address: entries[i] has fakeBase + i
	lru     fakeEntry    // sentinel of the entries not held, most recent first
	now     func() time.Time
}

type fakeEntry struct {
	name       string
	addr       netip.Addr
	used       time.Time // last answered, or last released
	holds      int       // connections to addr still open
	prev, next *fakeEntry
}

// NewFakeIPs returns a table of at most max names (DefaultMaxNames when
// max <= 0, and never more than FakeRange holds).
func NewFakeIPs(max int) *FakeIPs {
	if max <= 0 {
		max = DefaultMaxNames
	}
	max = min(max, fakeCapacity)
	f := &FakeIPs{max: max, byName: make(map[string]*fakeEntry), now: time.Now}
	f.lru.prev, f.lru.next = &f.lru, &f.lru
	return f
}

// IsFake reports whether a is in FakeRange.
func IsFake(a netip.Addr) bool { return FakeRange.Contains(a.Unmap()) }

// Len returns how many names the table maps.
func (f *FakeIPs) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byName)
}

// Addr returns name's address, giving it one if it has none. Names are
// folded to lower case and lose a trailing dot. It returns false when
// name is not a valid host name (see canonical), or when the table is
// full and every entry is held or was used within AnswerTTL.
func (f *FakeIPs) Addr(name string) (netip.Addr, bool) {
	name, ok := canonical(name)
	if !ok {
		return netip.Addr{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	e := f.byName[name]
	if e == nil {
		if e = f.free(now); e == nil {
			return netip.Addr{}, false
		}
		e.name = name
		f.byName[name] = e
	}
	e.used = now
	if e.holds == 0 {
		e.unlink()
		f.pushFront(e)
	}
	return e.addr, true
}

// free returns an entry for a new name: a fresh one while the table has
// room, else the least recently used one if it may be reused, else nil.
// The entry returned is in the LRU list, or unlinked if fresh.
func (f *FakeIPs) free(now time.Time) *fakeEntry {
	if len(f.entries) < f.max {
		e := &fakeEntry{addr: addrAt(len(f.entries))}
		f.entries = append(f.entries, e)
		return e
	}
	e := f.lru.prev
	if e == &f.lru || now.Sub(e.used) < AnswerTTL {
		return nil // all held, or the oldest is recent and so are the rest
	}
	delete(f.byName, e.name)
	return e
}

// Hold returns the name a connection to a is for, and pins the entry so
// it keeps that name until release is called (release may be called more
// than once). ok is false, and release does nothing, when a maps to no
// name. An IPv4-mapped IPv6 address is taken as its IPv4 address.
func (f *FakeIPs) Hold(a netip.Addr) (name string, release func(), ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.lookup(a)
	if e == nil {
		return "", func() {}, false
	}
	if e.holds == 0 {
		e.unlink()
	}
	e.holds++
	var once sync.Once
	return e.name, func() { once.Do(func() { f.release(e) }) }, true
}

func (f *FakeIPs) release(e *fakeEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.holds--; e.holds == 0 {
		e.used = f.now() // the program may reconnect to the address
		f.pushFront(e)
	}
}

// lookup returns a's entry, or nil. The caller holds f.mu.
func (f *FakeIPs) lookup(a netip.Addr) *fakeEntry {
	a = a.Unmap()
	if !a.Is4() || !FakeRange.Contains(a) {
		return nil
	}
	i := int64(u32(a)) - int64(u32(fakeBase))
	if i < 0 || i >= int64(len(f.entries)) {
		return nil
	}
	return f.entries[i]
}

func (f *FakeIPs) pushFront(e *fakeEntry) {
	e.prev, e.next = &f.lru, f.lru.next
	e.prev.next, e.next.prev = e, e
}

// unlink takes e out of the LRU list; it does nothing if e is not in it.
func (e *fakeEntry) unlink() {
	if e.prev == nil {
		return
	}
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func addrAt(i int) netip.Addr {
	v := u32(fakeBase) + uint32(i)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// canonical returns name in lower case without its trailing dot, and
// whether it is a host name the resolver answers: at most 253 bytes, in
// labels of 1 to 63 ASCII letters, digits, hyphens or underscores. Other
// bytes are refused so that no odd name reaches the rules or the audit.
func canonical(name string) (string, bool) {
	if len(name) > 0 && name[len(name)-1] == '.' {
		name = name[:len(name)-1]
	}
	if name == "" || len(name) > 253 {
		return "", false
	}
	label, upper := 0, false
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '.':
			if label == 0 {
				return "", false
			}
			label = 0
			continue
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return "", false
		}
		if label++; label > 63 {
			return "", false
		}
	}
	if label == 0 {
		return "", false
	}
	if upper {
		name = lowerASCII(name)
	}
	return name, true
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
