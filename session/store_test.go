package session

import "testing"

func TestStore(t *testing.T) {
	made := 0
	st := NewStore(func(s *Session) string {
		made++
		if s == nil {
			return "shared"
		}
		return s.ID()
	})
	a := New("a", "")
	first, again := st.Get(a), st.Get(a)
	if first != "a" || again != "a" || made != 1 {
		t.Errorf("made %d", made)
	}
	if st.Get(nil) != "shared" || made != 2 {
		t.Errorf("nil session: made %d", made)
	}
	a.End()
	if len(st.values) != 1 {
		t.Errorf("values after the session ended: %v", st.values)
	}
}
