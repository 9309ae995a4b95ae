// Package redact replaces the secrets in text with [REDACTED:<rule-id>]
// (docs/spec.md §14), so that `cat .env`, `env` or `kubectl get secret -o
// yaml` do not send live credentials to a model provider's logs.
//
//	r, _ := redact.New(redact.Known)
//	r.Text("GITHUB_TOKEN=ghp_…") // "GITHUB_TOKEN=[REDACTED:github-pat]"
//
// The modes are Known (the default), All and Off. Known finds token
// formats with a fixed prefix or structure: GitHub, GitLab, Slack,
// Stripe, npm, Hugging Face, PyPI, OpenAI and Anthropic tokens, Google
// API keys, AWS access key ids (and a secret access key on a line naming
// it), PEM private key blocks, JWTs, URL passwords and HTTP Bearer and
// Basic credentials. All would add the full rule set of a maintained
// scanner; none fits the budget (see [ErrAllUnavailable]), so New refuses
// it rather than pretend.
//
// Every rule has literal keywords, found with strings.Index, and a
// regular expression anchored at a keyword's occurrence, so text without
// any keyword costs a few scans of memory, and a rule's expression runs
// only where its keyword is. Budget: 2 ms for a 64 KB tail.
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
//   - Text is redacted where it is shown, so a secret can be split: by
//     the end of a head, or between two background reads. A token whose
//     prefix is followed by at least 8 token characters up to the very
//     end of the text counts as a token cut off there; the part after a
//     cut (at the start of a tail or of the next read) has no prefix and
//     is not found.
package redact

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The modes of the `redact` config key.
const (
	Known = "known"
	All   = "all"
	Off   = "off"
)

// Modes are the values of the `redact` key, the default first.
var Modes = []string{Known, All, Off}

// ErrAllUnavailable is New's error for All: the maintained scanner
// evaluated for it (gitleaks v8.30.1's 222 default rules) takes 2.8 to 38
// ms for a 64 KB tail of build output (15 ms the median over ten tails),
// against a budget of 2 ms, and adds 3.4 MB and 178 modules to the
// binary (docs/spec.md §14).
var ErrAllUnavailable = errors.New(`redact "all" is not available: no maintained scanner's rule set redacts a 64 KB tail within 2 ms; use known`)

// Placeholder is the text that replaces a secret found by rule id (exact).
func Placeholder(id string) string { return "[REDACTED:" + id + "]" }

// Redactor redacts text by a mode's rules. It is safe for concurrent use;
// the zero value, like Off, redacts nothing.
type Redactor struct {
	rules func() []*rule // nil: none
}

// New returns the Redactor of mode: Known, Off, or "" (Known). All
// fails with ErrAllUnavailable.
func New(mode string) (*Redactor, error) {
	switch mode {
	case Known, "":
		return &Redactor{rules: knownRules}, nil
	case Off:
		return &Redactor{}, nil
	case All:
		return nil, ErrAllUnavailable
	}
	return nil, fmt.Errorf("redact: unknown mode %q: one of %s", mode, strings.Join(Modes, ", "))
}

// match is a secret found in a text: bytes [start, end) and its rule.
type match struct {
	start, end int
	id         string
}

// Text returns s with every secret the rules find replaced by its
// Placeholder.
func (r *Redactor) Text(s string) string {
	if r == nil || r.rules == nil || s == "" {
		return s
	}
	var lower string // s with ASCII letters lowered, made once if needed
	var found []match
	for _, ru := range r.rules() {
		hay := s
		if ru.fold {
			if lower == "" {
				lower = asciiLower(s)
			}
			hay = lower
		}
		found = ru.find(s, hay, found)
	}
	if len(found) == 0 {
		return s
	}
	return replace(s, found)
}

// replace puts the placeholders in, the earliest (then longest, then
// first found) of overlapping matches winning.
func replace(s string, found []match) string {
	slices.SortStableFunc(found, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, m := range found {
		if m.start < at {
			continue
		}
		b.WriteString(s[at:m.start])
		b.WriteString(Placeholder(m.id))
		at = m.end
	}
	b.WriteString(s[at:])
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
