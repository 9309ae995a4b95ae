package redact

import "strings"

// Stream redacts a stream that is shown piece by piece, as it comes (a
// background command's output, read by read): a secret split between two
// pieces is found whole. Each piece is shown up to where a secret may
// start that is not decided yet (its rule's match could still grow or
// fail with what comes next); the rest is held back and shown with the
// next piece, or when the stream ends. What is held is at most Window
// bytes: a rule decides within its window.
//
// A Stream is used by one goroutine at a time.
type Stream struct {
	r *Redactor
	// context is the shown text just before held: a secret whose keyword
	// a piece's end cut (a piece ending "gh", the next "p_…") is found
	// from it. It also holds where an undecided match starts when that is
	// before the shown end (after a Cut).
	context string
	held    string // read, not shown yet
}

// contextKeep is how much shown text a Stream keeps as context: more than
// a keyword cut short (17 bytes at most) and a URL's scheme before "://"
// (32 bytes at most).
const contextKeep = 64

// Stream returns a Stream that redacts by r's rules.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Cut tells st that the stream's bytes after its last piece were lost
// (dropped from memory): what it holds back is dropped with them, and
// before, the text just before the next piece, becomes its context.
// Window bytes of before find every secret the cut split.
func (st *Stream) Cut(before string) {
	st.context, st.held = before, ""
}

// Next returns what to show of the stream after its next piece, s: what
// was held back and s, redacted, up to the first secret that is not
// decided yet. With end, the stream ended with s: nothing is held back,
// and a secret that may run on past its end is replaced as Part replaces
// one (the stream may itself be a cut of a file: head -c).
func (st *Stream) Next(s string, end bool) string {
	if st.r == nil || st.r.rules == nil {
		return s
	}
	all := st.context + st.held + s
	from := len(st.context)
	if from == len(all) {
		return ""
	}
	sc := st.r.scan(all, true)
	if end {
		st.context, st.held = "", ""
		return render(all, sc.cut(len(all)), from, len(all))
	}
	hold := holdFrom(sc, len(all))
	show := max(hold, from) // what was shown stays shown
	keep := max(0, hold-contextKeep)
	out := render(all, sc.found, from, show)
	st.context, st.held = strings.Clone(all[keep:show]), strings.Clone(all[show:])
	return out
}

// holdFrom is where the held back text starts: at the first undecided
// match's expression, or earlier at the expression of a decided match
// that runs into it (a secret is shown whole or not at all). It may lie
// before the shown end (after a Cut), then nothing new is shown. n, the
// text's length, is none held.
func holdFrom(sc scan, n int) int {
	hold := n
	for _, c := range sc.open {
		hold = min(hold, c.at)
	}
	for moved := true; moved; {
		moved = false
		for _, m := range sc.found {
			if m.at < hold && m.end > hold {
				hold, moved = m.at, true
			}
		}
	}
	return hold
}
