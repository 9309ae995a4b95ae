package session

import "sync"

// Store keeps one value per session, made on the session's first Get and
// dropped when the session ends: what a component learns about a session
// (the settings files it read, the rules a user remembered) lives exactly
// as long as the session. A nil session has a value too, kept for the
// Store's life: calls without a session share it.
//
//	rules := session.NewStore(func(s *Session) *Rules { return load(s.Cwd()) })
//	r := rules.Get(s)
type Store[T any] struct {
	make func(*Session) T

	mu     sync.Mutex
	values map[*Session]T
}

// NewStore returns a Store whose values mk makes. mk may run more
// than once for a session whose first Gets race; one value wins.
func NewStore[T any](mk func(*Session) T) *Store[T] {
	return &Store[T]{make: mk, values: make(map[*Session]T)}
}

// Get returns s's value, making it on first use.
func (st *Store[T]) Get(s *Session) T {
	st.mu.Lock()
	v, ok := st.values[s]
	st.mu.Unlock()
	if ok {
		return v
	}
	v = st.make(s) // outside the lock: it may read files
	st.mu.Lock()
	if won, ok := st.values[s]; ok {
		st.mu.Unlock()
		return won
	}
	st.values[s] = v
	st.mu.Unlock()
	if s != nil {
		s.OnEnd(func() {
			st.mu.Lock()
			delete(st.values, s)
			st.mu.Unlock()
		})
	}
	return v
}
