// Package redact replaces the secrets in text with [REDACTED:<rule-id>]
// (docs/spec.md §14), so that `cat .env`, `env` or `kubectl get secret -o
// yaml` do not send live credentials to a model provider's logs.
//
//	r, _ := redact.New(redact.Known)
//	r.Text("GITHUB_TOKEN=ghp_…") // "GITHUB_TOKEN=[REDACTED:github-pat]"
//
// The modes are Known (the default) and Off. Known finds token
// formats with a fixed prefix or structure: GitHub, GitLab, Slack,
// Stripe, npm, Hugging Face, PyPI, OpenAI and Anthropic tokens, Google
// API keys, AWS access key ids (and a secret access key on a line naming
// it), PEM private key blocks, JWTs, URL passwords and HTTP Bearer and
// Basic credentials. There is no mode with a maintained scanner's full
// rule set: none fits the budget (docs/spec.md §14).
//
// Every rule has literal keywords, found with strings.Index, and a
// regular expression anchored at a keyword's occurrence, so text without
// any keyword costs a few scans of memory, and a rule's expression runs
// only where its keyword is. Budget: 2 ms for a 64 KB tail.
//
// Output is shown in parts: a head and a tail, read by read. [Text]
// redacts a whole text (a command line); [Redactor.Part] a part of a
// stream, given what came before it, with its end a cut; a [Stream] a
// stream shown piece by piece, holding back the start of a secret that is
// not decided yet. No part of a secret shows at a cut (docs/spec.md §14).
//
// Decisions:
//   - What is replaced is the secret itself: the password of a URL
//     (https://user:[REDACTED:url-password]@host), the credential after
//     Bearer or Basic, a whole PEM block from BEGIN to END (to the end of
//     the text when its END was cut off).
//   - A token prefix counts only at the start of a word: the character
//     before it is not a letter or a digit (so a base64 blob that happens
//     to hold "AKIA…" is left alone).
//   - A Basic credential counts only when it is base64 of "user:password";
//     a Bearer credential only when it has a digit or a symbol, or 24
//     characters or more, so prose ("basic authentication", "bearer
//     tokens") is left alone.
//   - Two matches that overlap: the one that starts first wins (the
//     longer at the same start, then the rule listed first: a JWT after
//     Bearer reads [REDACTED:jwt]).
//   - At a cut, a secret whose keyword is whole and whose rule has not
//     decided by the end (its expression, run by a Pike machine, could
//     still match or grow: open.go) is replaced from its start to the
//     end, without the checks a whole one gets (Bearer's, Basic's). A
//     keyword cut short ("gh") shows; a Stream holds it back instead, for
//     the rules whose secret starts with its keyword.
//   - After a cut, Window bytes of what came before find every secret
//     the cut split: the part after the cut reads as its placeholder.
package redact

import (
	"fmt"
	"slices"
	"strings"
)

// The modes of the `redact` config key.
const (
	Known = "known"
	Off   = "off"
)

// modes are the modes New accepts, the default first.
var modes = []string{Known, Off}

// Modes returns the modes New accepts, the default first: the values of
// the redact config key.
func Modes() []string { return slices.Clone(modes) }

// Placeholder is the text that replaces a secret found by rule id (exact).
func Placeholder(id string) string { return "[REDACTED:" + id + "]" }

// Redactor redacts text by a mode's rules. It is safe for concurrent use;
// the zero value, like Off, redacts nothing.
type Redactor struct {
	rules func() []*rule // nil: none
}

// New returns the Redactor of mode: Known, Off, or "" (Known).
func New(mode string) (*Redactor, error) {
	switch mode {
	case Known, "":
		return &Redactor{rules: knownRules}, nil
	case Off:
		return &Redactor{}, nil
	}
	return nil, fmt.Errorf("redact: unknown mode %q: one of %s", mode, strings.Join(modes, ", "))
}

// Window is the longest a secret can be, in bytes: the longest window of
// a rule (a PEM block). A part of a stream given Window bytes of what came
// before it (Part's context) is redacted as the whole stream would be.
const Window = 16 << 10

// match is a secret found in a text: bytes [start, end), its rule, and
// where the rule's expression starts (at <= start).
type match struct {
	at, start, end int
	id             string
}

// cut is a match that an open end may cut: its expression starts at at,
// the secret at secret (-1: not reached yet), and it runs to the end.
type cut struct {
	at, secret int
	id         string
}

// scan is what the rules found in a text: its decided matches and, when
// its end is open, the undecided ones.
type scan struct {
	found []match
	open  []cut
}

// Text returns s, a whole text, with every secret the rules find replaced
// by its Placeholder.
func (r *Redactor) Text(s string) string {
	if r == nil || r.rules == nil || s == "" {
		return s
	}
	sc := r.scan(s, false)
	return render(s, sc.found, 0, len(s))
}

// Part returns s[from:] redacted as a part of a stream, cut where it
// ends: s[:from] is what came just before it (not returned), which finds
// a secret that starts there (Window bytes of it find every one), and a
// secret that may run on past the end of s (a rule's match from its
// whole keyword that more text could still make or lengthen) is replaced
// from its start to the end, so no part of it shows.
func (r *Redactor) Part(s string, from int) string {
	if r == nil || r.rules == nil || from >= len(s) {
		return s[min(from, len(s)):]
	}
	return render(s, r.scan(s, true).cut(len(s)), from, len(s))
}

// cut is what sc found with, for an end that cuts, the secrets that run
// to it (n): from where each starts.
func (sc scan) cut(n int) []match {
	found := sc.found
	for _, c := range sc.open {
		if c.secret >= 0 {
			found = append(found, match{at: c.at, start: c.secret, end: n, id: c.id})
		}
	}
	return found
}

// scan runs every rule over s; open: its end is open.
func (r *Redactor) scan(s string, open bool) scan {
	var lower string // s with ASCII letters lowered, made once if needed
	var sc scan
	for _, ru := range r.rules() {
		hay := s
		if ru.fold {
			if lower == "" {
				lower = asciiLower(s)
			}
			hay = lower
		}
		ru.find(s, hay, open, &sc)
	}
	return sc
}

// choose returns the matches that are replaced, in order: of overlapping
// ones, the earliest wins, then the longest, then the first found.
func choose(found []match) []match {
	slices.SortStableFunc(found, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	chosen := found[:0]
	end := 0
	for _, m := range found {
		if m.start >= end {
			chosen = append(chosen, m)
			end = m.end
		}
	}
	return chosen
}

// render returns s[from:to] with the placeholders of the chosen matches
// in it; a match that from or to cuts shows its placeholder in the part
// it overlaps.
func render(s string, found []match, from, to int) string {
	var b strings.Builder
	at := from
	for _, m := range choose(found) {
		if m.end <= from || m.start >= to {
			continue
		}
		if b.Len() == 0 {
			b.Grow(to - from)
		}
		b.WriteString(s[at:max(at, m.start)])
		b.WriteString(Placeholder(m.id))
		at = min(m.end, to)
	}
	if at == from {
		return s[from:to]
	}
	b.WriteString(s[at:to])
	return b.String()
}

// asciiLower is s with its ASCII letters lowered, byte for byte, so that
// indexes into it are indexes into s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
