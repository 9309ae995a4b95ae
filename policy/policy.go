package policy

import "slices"

// Decision is what the policy decides for a command or a part.
type Decision string

// The decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Config is what the engine needs besides the rules.
type Config struct {
	Default  Decision // when no rule decides; "" = Allow
	ReadOnly bool     // the built-in read-only commands count as allowed
	Home     string   // the user's home, for a leading ~ in rules and commands
}

// Policy decides commands. It is immutable and safe for concurrent use.
type Policy struct {
	cfg   Config
	rules []*Rule // every rule, in the order given, for With
	allow []*compiled
	ask   []*compiled
	deny  []*compiled
}

// New returns a policy of the rules. Rules come from ParseRule; a Rule made
// by hand is parsed from its Pattern here, and one that does not parse
// matches every command when it is a deny or ask rule (failing closed) and
// none when it is an allow rule.
func New(cfg Config, rules []Rule) *Policy {
	if cfg.Default == "" {
		cfg.Default = Allow
	}
	p := &Policy{cfg: cfg}
	p.add(rules)
	return p
}

// With returns a policy with extra rules (used for the rules a user
// remembered in a session). p is unchanged.
func (p *Policy) With(rules ...Rule) *Policy {
	q := &Policy{cfg: p.cfg}
	for _, r := range p.rules {
		q.add([]Rule{*r})
	}
	q.add(rules)
	return q
}

// HasAskOrDeny reports whether any deny or ask rule exists: then an opaque
// part asks (docs/spec.md §9.4).
func (p *Policy) HasAskOrDeny() bool { return len(p.ask)+len(p.deny) > 0 }

// add compiles rules into the policy's lists.
func (p *Policy) add(rules []Rule) {
	for _, r := range rules {
		c := p.compileRule(&r)
		if c == nil {
			continue
		}
		p.rules = append(p.rules, &r)
		switch r.Kind {
		case KindAllow:
			p.allow = append(p.allow, c)
		case KindAsk:
			p.ask = append(p.ask, c)
		case KindDeny:
			p.deny = append(p.deny, c)
		}
	}
}

// compileRule compiles one rule with the user's home; see New for rules
// made by hand.
func (p *Policy) compileRule(r *Rule) *compiled {
	if r.words == nil {
		parsed, err := ParseRule(r.Kind, r.Pattern, r.Source)
		if err != nil {
			return p.brokenRule(r)
		}
		parsed.Pattern = r.Pattern
		*r = parsed
	}
	c, err := compile(r, p.cfg.Home)
	if err != nil {
		return p.brokenRule(r)
	}
	return c
}

// brokenRule is what an unparsable hand-made rule becomes.
func (p *Policy) brokenRule(r *Rule) *compiled {
	if r.Kind != KindAsk && r.Kind != KindDeny {
		return nil
	}
	return &compiled{rule: r, words: []pword{{lits: []string{"", ""}}}, every: true}
}

// Check decides command. It never panics and never errors: what cannot be
// analysed is opaque.
func (p *Policy) Check(command string) Result { return p.check(command, nil) }

// check is Check, recording what it saw in tr when tr is not nil.
func (p *Policy) check(command string, tr *trace) (res Result) {
	defer func() {
		if recover() != nil {
			res = p.compose(command, []Part{{
				Words:  []string{command},
				Opaque: reasonInternal,
			}})
		}
	}()
	c := &checker{p: p, trace: tr}
	c.script(&scope{src: command}, command)
	c.finish()
	return p.compose(command, c.parts)
}

// compose decides the whole command from its parts (docs/spec.md §9.4).
func (p *Policy) compose(command string, parts []Part) Result {
	r := Result{Parts: parts, Deciding: -1, command: command}
	contrib := make([]Decision, len(parts))
	for i, pt := range parts {
		contrib[i] = p.contribution(pt)
	}
	switch {
	case slices.Contains(contrib, Deny):
		r.Decision = Deny
		r.Deciding = slices.Index(contrib, Deny)
	case slices.Contains(contrib, Ask):
		r.Decision = Ask
		r.Deciding = slices.Index(contrib, Ask)
	case len(parts) > 0 && !slices.Contains(contrib, ""):
		r.Decision = Allow
	default:
		r.Decision = p.cfg.Default
		r.Deciding = slices.Index(contrib, "")
		if r.Decision == Ask {
			r.Remember = remember(parts, contrib)
		}
	}
	return r
}

// contribution is what one part makes of the whole command: deny, ask,
// allow, or "" when the default decides it.
func (p *Policy) contribution(pt Part) Decision {
	switch {
	case pt.Decision == Deny:
		return Deny
	case pt.Opaque != "" && p.cfg.Default == Deny:
		return Deny
	case pt.Decision == Ask:
		return Ask
	case pt.Opaque != "" && (p.HasAskOrDeny() || p.cfg.Default == Ask):
		return Ask
	case pt.Decision == Allow && pt.Opaque == "":
		return Allow
	}
	return ""
}
