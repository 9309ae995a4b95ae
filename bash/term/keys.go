package term

import (
	"errors"
	"fmt"
)

// KeyNames is the list of key names Keys accepts, in the order the unknown
// key error lists them.
var KeyNames = keyNames()

// ErrUnknownKey is the error, for errors.Is, of a key name not in KeyNames.
var ErrUnknownKey = errors.New("unknown key")

// KeyList names the keys in short, as the model reads them (the tool's
// schema, the unknown-key error).
const KeyList = "Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, C-a…C-z, F1…F12"

// UnknownKeyError is the error for the key name name: its text lists the
// names in short, the model reads it and retries.
func UnknownKeyError(name string) error {
	return &unknownKeyError{name}
}

type unknownKeyError struct{ name string }

func (e *unknownKeyError) Error() string {
	return fmt.Sprintf("unknown key %q; keys are: %s", e.name, KeyList)
}

func (e *unknownKeyError) Is(target error) bool { return target == ErrUnknownKey }

// Keys encodes the named keys as an xterm sends them in normal cursor key
// mode, one after the other. An unknown name is an UnknownKeyError and no
// bytes: a half-typed sequence would do more harm than none.
func Keys(names []string) ([]byte, error) { return encodeKeys(names, false) }

// Keys is the package's Keys for this screen's program: if it switched to
// application cursor keys (DECCKM, as less, vim and readline do), the
// cursor keys, Home and End are sent as ESC O x, which is what it then
// expects.
func (s *Screen) Keys(names []string) ([]byte, error) {
	s.mu.Lock()
	app := s.appCursor
	s.mu.Unlock()
	return encodeKeys(names, app)
}

// keyCodes are the sequences of the keys that do not depend on the mode.
var keyCodes = map[string]string{
	"Enter":     "\r",
	"Tab":       "\t",
	"Escape":    "\x1b",
	"Backspace": "\x7f", // DEL, what terminals send and stty erase expects
	"PageUp":    "\x1b[5~",
	"PageDown":  "\x1b[6~",
	"F1":        "\x1bOP",
	"F2":        "\x1bOQ",
	"F3":        "\x1bOR",
	"F4":        "\x1bOS",
	"F5":        "\x1b[15~",
	"F6":        "\x1b[17~",
	"F7":        "\x1b[18~",
	"F8":        "\x1b[19~",
	"F9":        "\x1b[20~",
	"F10":       "\x1b[21~",
	"F11":       "\x1b[23~",
	"F12":       "\x1b[24~",
}

// cursorKeys are the final bytes of the keys that DECCKM changes: CSI x in
// normal mode, SS3 x (ESC O x) in application mode.
var cursorKeys = map[string]byte{
	"Up": 'A', "Down": 'B', "Right": 'C', "Left": 'D', "Home": 'H', "End": 'F',
}

func keyNames() []string {
	names := []string{"Enter", "Tab", "Escape", "Backspace", "Up", "Down", "Left", "Right",
		"Home", "End", "PageUp", "PageDown"}
	for c := 'a'; c <= 'z'; c++ {
		names = append(names, "C-"+string(c))
	}
	for i := 1; i <= 12; i++ {
		names = append(names, fmt.Sprintf("F%d", i))
	}
	return names
}

func encodeKeys(names []string, appCursor bool) ([]byte, error) {
	var b []byte
	for _, name := range names {
		switch {
		case len(name) == 3 && name[:2] == "C-" && name[2] >= 'a' && name[2] <= 'z':
			b = append(b, name[2]-'a'+1) // C-a is 0x01 … C-z is 0x1a
		case cursorKeys[name] != 0:
			if appCursor {
				b = append(b, '\x1b', 'O', cursorKeys[name])
			} else {
				b = append(b, '\x1b', '[', cursorKeys[name])
			}
		case keyCodes[name] != "":
			b = append(b, keyCodes[name]...)
		default:
			return nil, UnknownKeyError(name)
		}
	}
	return b, nil
}
