package term

import (
	"reflect"
	"unsafe"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// x/vt v0.1.0 gives no way to configure two things this package needs, and
// both are worth their price in memory and time:
//
//   - Each screen buffer, the alternate one included, keeps a 10,000-line
//     scrollback of cloned lines (112 bytes a cell), and Emulator offers only
//     SetScrollbackSize for the main screen, which cannot go below one line.
//     20,000 log lines fill it to ~80 MiB at 80 columns, on the alternate
//     screen as on the main one, and every scrolled line then also memmoves
//     the 10,000-entry slice. vt.Screen.SetScrollback(nil) is the documented
//     way to switch it off; only the screens are not exported.
//   - Its parser is given a 4 MiB buffer for OSC/DCS/APC payloads, of
//     which titles and hyperlinks need a few bytes; x/vt handles no DCS or
//     APC payload at all. ansi's own default is 64 KiB.
//
// So we reach the two unexported fields by reflection, checking their types
// first: if a new x/vt moves them, the checks fail, the emulator is used as
// it comes (slower, bigger, still correct), and TestInternalsReachable says
// so.

// parserDataSize bounds an OSC, DCS or APC payload the parser keeps; a longer
// one is cut (the rest still parsed, not kept), as with ansi's default.
const parserDataSize = 64 << 10

// internals are the parts of an emulator x/vt does not export.
type internals struct {
	screens *[2]vt.Screen // main, alternate
	parser  *ansi.Parser
}

// reach finds an emulator's internals; a nil field is one not found.
func reach(e *vt.Emulator) internals {
	var in internals
	v := reflect.ValueOf(e).Elem()
	if f := v.FieldByName("scrs"); f.IsValid() && f.Type() == reflect.TypeFor[[2]vt.Screen]() {
		in.screens = (*[2]vt.Screen)(unsafe.Pointer(f.UnsafeAddr()))
	}
	if f := v.FieldByName("parser"); f.IsValid() && f.Type() == reflect.TypeFor[*ansi.Parser]() {
		in.parser = *(**ansi.Parser)(unsafe.Pointer(f.UnsafeAddr()))
	}
	return in
}
