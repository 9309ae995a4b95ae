package policy

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Result is the decision on a command and how it was reached.
type Result struct {
	Decision Decision
	Parts    []Part // every part, in source order
	Deciding int    // index in Parts of the first deciding part (docs/spec.md §9.4 "the part shown"); -1 when none
	// Remember lists the suggested allow rules (docs/spec.md §9.6
	// "Remember") when remembering is offered: every asking part asks
	// because no rule allows it, and a rule could. nil otherwise. At most 5.
	Remember []string

	command string // for the texts when no part decided: the whole command
}

// Part is one part the shell would run (docs/spec.md §9.3).
type Part struct {
	// Words are CMD's words: static words after quote removal, dynamic
	// words as written in the source; for a wrapper, the simple command the
	// rule matched (`rm -rf /` inside `sudo rm -rf /`), or the one no rule
	// allows.
	Words    []string
	Decision Decision // "" = no rule decided this part
	Rule     *Rule    // the deciding rule, if any
	MayMatch bool     // decided only thanks to dynamic words, or found in quoted code (docs/spec.md §9.3)
	ReadOnly bool     // allowed as a built-in read-only command
	// Internal: allowed because no program runs and nothing is written: a
	// bare assignment, a declaration, let, [[ … ]], (( … )), or input
	// redirections alone.
	Internal bool
	// Opaque says why the part cannot be checked, "" when it can: "dynamic
	// command name", "parse error", "shell given no script", "eval of a
	// dynamic argument", "state change: trap", …
	Opaque string

	suggest []string // the allow rules that would allow this part; nil when none could
}

// The model-facing texts of docs/spec.md §9.4 (exact).
const (
	textDenied       = "denied by policy: "
	textMatchesDeny  = "`%s` matches deny rule \"%s\""
	textMatchesAsk   = "`%s` matches ask rule \"%s\""
	textMayMatch     = "`%s` may match %s rule \"%s\""
	textNoRule       = "no rule allows `%s`"
	textCannotCheck  = "`%s` cannot be checked before it runs"
	cmdLimit         = 200 // code points of CMD before "…"
	maxRemember      = 5
	reasonInternal   = "analysis failed"
	ellipsis         = "…"
	whySourceFormat  = " (%s)"
	whyRuleFormat    = "%s rule \"%s\""
	whyMayRuleFormat = "may match %s rule \"%s\""
)

// DenyText is the model-facing text after "Error: " for a deny (exact,
// docs/spec.md §9.4); "" when the decision is not deny.
func (r Result) DenyText() string {
	if r.Decision != Deny {
		return ""
	}
	p, cmd := r.shown()
	switch {
	case p != nil && p.Decision == Deny && p.Rule != nil:
		return textDenied + fmt.Sprintf(textMatchesDeny, cmd, oneLine(p.Rule.Pattern))
	case p != nil && p.Opaque != "":
		return textDenied + fmt.Sprintf(textCannotCheck, cmd)
	}
	return textDenied + fmt.Sprintf(textNoRule, cmd)
}

// Reason is the REASON an ask carries (exact, docs/spec.md §9.4); "" when
// the decision is not ask.
func (r Result) Reason() string {
	if r.Decision != Ask {
		return ""
	}
	p, cmd := r.shown()
	switch {
	case p != nil && p.Decision == Ask && p.Rule != nil && p.MayMatch:
		return fmt.Sprintf(textMayMatch, cmd, p.Rule.Kind.String(), oneLine(p.Rule.Pattern))
	case p != nil && p.Decision == Ask && p.Rule != nil:
		return fmt.Sprintf(textMatchesAsk, cmd, oneLine(p.Rule.Pattern))
	case p != nil && p.Opaque != "":
		return fmt.Sprintf(textCannotCheck, cmd)
	}
	return fmt.Sprintf(textNoRule, cmd)
}

// shown returns the part shown and its CMD; with no deciding part, CMD is
// the whole command.
func (r Result) shown() (*Part, string) {
	if r.Deciding < 0 || r.Deciding >= len(r.Parts) {
		return nil, cut(r.command)
	}
	p := &r.Parts[r.Deciding]
	return p, p.CMD()
}

// CMD is the part's words joined by spaces, cut after 200 code points with
// "…" added, on one line (a line break becomes a space).
func (p Part) CMD() string { return cut(strings.Join(p.Words, " ")) }

// cut shortens s to cmdLimit code points and puts it on one line.
func cut(s string) string {
	if utf8.RuneCountInString(s) > cmdLimit {
		n := 0
		for i := range s {
			if n == cmdLimit {
				s = s[:i] + ellipsis
				break
			}
			n++
		}
	}
	return oneLine(s)
}

// oneLine replaces line breaks with spaces: each text is one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// Why explains a part for `dsh policy check` (docs/spec.md §9.6):
// `deny rule "rm -rf *" (dsh config)`, `read-only command`, `no rule`,
// `opaque: dynamic command name`, `may match ask rule "…" (SOURCE)`.
func (p Part) Why() string {
	var why string
	switch {
	case p.Rule != nil && p.MayMatch:
		why = fmt.Sprintf(whyMayRuleFormat, p.Rule.Kind.String(), oneLine(p.Rule.Pattern)) + ruleSource(p.Rule)
	case p.Rule != nil:
		why = fmt.Sprintf(whyRuleFormat, p.Rule.Kind.String(), oneLine(p.Rule.Pattern)) + ruleSource(p.Rule)
	case p.ReadOnly:
		why = "read-only command"
	case p.Internal:
		why = "no program runs"
	case p.Opaque != "":
		return "opaque: " + p.Opaque
	default:
		return "no rule"
	}
	if p.Opaque != "" {
		why += "; opaque: " + p.Opaque
	}
	return why
}

func ruleSource(r *Rule) string {
	if r.Source == "" {
		return ""
	}
	return fmt.Sprintf(whySourceFormat, r.Source)
}

// remember returns the suggested allow rules when every part the default
// decides (contrib "") could be allowed by one; nil otherwise.
func remember(parts []Part, contrib []Decision) []string {
	var out []string
	for i, p := range parts {
		if contrib[i] != "" {
			continue
		}
		if len(p.suggest) == 0 {
			return nil
		}
		for _, s := range p.suggest {
			if len(out) < maxRemember && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
