package term

import (
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// newEmulator makes an x/vt emulator configured for this package: no
// scrollback on either screen, a parser buffer of parserDataSize.
func newEmulator(cols, rows int) (*vt.Emulator, internals) {
	e := vt.NewEmulator(cols, rows)
	in := reach(e)
	if in.screens != nil {
		in.screens[0].SetScrollback(nil)
		in.screens[1].SetScrollback(nil)
	} else {
		// The least x/vt's API allows: one line, main screen only.
		e.SetScrollbackSize(1)
	}
	if in.parser != nil {
		in.parser.SetDataSize(parserDataSize)
	}
	guard(e)
	return e, in
}

// guard bounds the counts and margins x/vt takes on trust from a program.
// It loops once per count for REP, CHT, CBT and ECH, and a count can be
// 2^31-2: ESC[2147483646b would print for hours. It does not bound the
// bottom and right margins by the screen (DECSTBM, DECSLRM), and indexes
// out of range when it then scrolls. A handler registered here runs before
// x/vt's own and, returning false, hands on to it the parameters it bounded
// in place (the slice is the parser's own).
func guard(e *vt.Emulator) {
	e.RegisterCsiHandler('b', func(params ansi.Params) bool {
		// Repeating more than a screenful ends as a screenful plus the
		// rest of a line would (exactly so without margins).
		w, h := e.Width(), e.Height()
		if n := param(params, 0, 1); n > w*h {
			params[0] = ansi.Param(w*h + (n-w*h)%w)
		}
		return false
	})
	for _, cmd := range []int{'I', 'Z', 'X'} { // CHT, CBT, ECH: a line at most
		e.RegisterCsiHandler(cmd, func(params ansi.Params) bool {
			if param(params, 0, 1) > e.Width() {
				params[0] = ansi.Param(e.Width())
			}
			return false
		})
	}
	e.RegisterCsiHandler('r', func(params ansi.Params) bool { // DECSTBM top;bottom
		if param(params, 1, 0) > e.Height() {
			params[1] = ansi.Param(e.Height())
		}
		return false
	})
	e.RegisterCsiHandler('s', func(params ansi.Params) bool { // DECSLRM left;right
		if param(params, 1, 0) > e.Width() {
			params[1] = ansi.Param(e.Width())
		}
		return false
	})
}

// param is params' i-th parameter, def if missing.
func param(params ansi.Params, i, def int) int {
	n, _, _ := params.Param(i, def)
	return n
}
