package term

import (
	"errors"
	"testing"
)

func TestKeyNames(t *testing.T) {
	if len(KeyNames) != 50 || KeyNames[0] != "Enter" || KeyNames[11] != "PageDown" ||
		KeyNames[12] != "C-a" || KeyNames[37] != "C-z" || KeyNames[38] != "F1" || KeyNames[49] != "F12" {
		t.Errorf("KeyNames = %q", KeyNames)
	}
	for _, name := range KeyNames {
		if b, err := Keys([]string{name}); err != nil || len(b) == 0 {
			t.Errorf("Keys(%q) = %q, %v", name, b, err)
		}
	}
}

func TestKeys(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"Enter", "Tab", "Escape", "Backspace"}, "\r\t\x1b\x7f"},
		{[]string{"Up", "Down", "Right", "Left", "Home", "End"}, "\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F"},
		{[]string{"PageUp", "PageDown"}, "\x1b[5~\x1b[6~"},
		{[]string{"C-a", "C-c", "C-d", "C-z"}, "\x01\x03\x04\x1a"},
		{[]string{"F1", "F4", "F5", "F10", "F11", "F12"}, "\x1bOP\x1bOS\x1b[15~\x1b[21~\x1b[23~\x1b[24~"},
		{nil, ""},
	} {
		if got, err := Keys(c.names); err != nil || string(got) != c.want {
			t.Errorf("Keys(%q) = %q, %v; want %q", c.names, got, err, c.want)
		}
	}
}

func TestUnknownKey(t *testing.T) {
	for _, name := range []string{"Space", "enter", "C-A", "C-", "F13", "F0", "", "C-ab", `"x"`} {
		b, err := Keys([]string{"Enter", name})
		if b != nil || !errors.Is(err, ErrUnknownKey) {
			t.Errorf("Keys(Enter, %q) = %q, %v; want nil, ErrUnknownKey", name, b, err)
		}
	}
	_, err := Keys([]string{"Space"})
	want := `unknown key "Space"; keys are: Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, C-a…C-z, F1…F12`
	if err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if got := UnknownKeyError("a\"b").Error(); got[:20] != `unknown key "a\"b"; ` {
		t.Errorf("UnknownKeyError quotes as %%q: %q", got)
	}
}

// The screen sends cursor keys as the program asked for them (DECCKM).
func TestScreenKeys(t *testing.T) {
	s := newScreen(t, 80, 24, nil)
	for _, c := range []struct{ out, want string }{
		{"", "\x1b[A\x1b[H\r"},
		{"\x1b[?1h", "\x1bOA\x1bOH\r"},
		{"\x1b[?1l", "\x1b[A\x1b[H\r"},
		{"\x1b[?1h\x1bc", "\x1b[A\x1b[H\r"}, // a full reset resets the mode
	} {
		write(t, s, c.out)
		if got, err := s.Keys([]string{"Up", "Home", "Enter"}); err != nil || string(got) != c.want {
			t.Errorf("after %q: Keys = %q, %v; want %q", c.out, got, err, c.want)
		}
	}
}
