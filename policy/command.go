package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// unit is one simple command with the commands it runs through wrappers,
// outermost first: `sudo timeout 5 rm x` is sudo…, timeout…, rm x.
type unit struct {
	levels   []level
	script   bool       // the last level runs scripts, which are parts of their own
	opaque   string     // why the unit cannot be checked
	assigned []string   // names assigned: leading, given to env or sudo, read, …
	prefix   []string   // the leading assignments as written, shown when they decide
	writes   bool       // a redirection writes a file
	stdin    *stdinText // the script on stdin, for a shell given no other
	login    bool       // set by exec -l for the level it runs
	asLogin  bool       // this level is run by exec -l: a shell here is a login shell
	asSh     bool       // set by exec -a sh for the level it runs: bash named sh runs in POSIX mode
	runAsSh  bool       // this level is run by exec -a sh
	notBash  bool       // the shell running the unit may be another than bash (scope.notBash)
}

// level is one command of a unit.
type level struct {
	args        []arg
	transparent bool  // a wrapper allowed when what it runs is (docs/spec.md §9.3 "Wrappers")
	alts        []alt // the words without global options (globals.go), for deny and ask rules
}

// step is what a handler (a wrapper, shell or builtin) makes of a level.
// The zero step is an ordinary command.
type step struct {
	inners      [][]arg  // the commands it runs (find may run several)
	scripts     []string // the scripts it runs, walked as parts of their own
	opaque      string
	assigns     []string // names it assigns, to values nobody can know
	uses        []dep    // what the values it takes as names depend on (values.go)
	transparent bool
	shell       shellKind // what runs the scripts
}

// shellKind is what runs a step's scripts: the shell running the step
// (eval, trap, …), or another, which may expand aliases (docs/spec.md §9.3
// "State for later commands").
type shellKind int

const (
	sameShell  shellKind = iota // the one running the step: scripts inherit its alias expansion
	bashShell                   // bash -c, which expands no aliases (or no shell at all: env -S)
	aliasShell                  // sh, dash, zsh, $SHELL…: aliases expand
)

// notBash reports whether the scripts of a step may be run by another
// shell than bash, when run from a shell that may (in) or not.
func (k shellKind) notBash(in bool) bool {
	return k == aliasShell || (k == sameShell && in)
}

// handler reads one level; args[0] is the static command name.
type handler func(c *checker, u *unit, args []arg) step

// unwrap follows wrappers down to the command they run, then emits the
// unit; a wrapper running several commands (find -exec … -exec …) emits a
// unit for each.
func (c *checker) unwrap(sc *scope, u *unit, cur []arg) {
	for {
		if cur[0].dyn {
			u.levels = append(u.levels, level{args: cur})
			u.opaque = reasonDynamicName
			c.emit(sc, u)
			return
		}
		var st step
		u.asLogin, u.login = u.login, false
		u.runAsSh, u.asSh = u.asSh, false
		if h := handlerFor(cur[0].text); h != nil {
			st = h(c, u, cur)
		}
		u.assigned = append(u.assigned, st.assigns...)
		if len(st.assigns)+len(st.uses) > 0 {
			shown := words(cur)
			c.assignUnknown(sc, st.assigns, shown)
			c.use(sc, st.uses, shown)
		}
		u.levels = append(u.levels, level{args: cur, transparent: st.transparent && !strings.Contains(cur[0].text, "/"),
			alts: globalAlts(cur)})
		switch {
		case st.opaque != "":
			// Opaque, but a script it runs (a login shell's) still has
			// parts of its own: a deny there still denies.
			u.opaque = st.opaque
			c.emit(sc, u)
			c.scripts(sc, u, st)
			return
		case len(st.scripts) > 0:
			u.script = true
			c.emit(sc, u)
			c.scripts(sc, u, st)
			return
		case len(st.inners) == 1:
			cur = st.inners[0]
			continue
		case len(st.inners) > 1:
			for _, in := range st.inners {
				v := *u
				v.levels = append([]level(nil), u.levels...)
				v.assigned = append([]string(nil), u.assigned...)
				c.unwrap(sc, &v, in)
			}
			return
		}
		c.emit(sc, u)
		return
	}
}

// scripts walks the scripts a step runs.
func (c *checker) scripts(sc *scope, u *unit, st step) {
	for _, s := range st.scripts {
		if c.trace != nil {
			c.trace.scripts = append(c.trace.scripts, s)
		}
		c.nested(sc, s, u.writes, st.shell.notBash(sc.notBash))
	}
}

// emit decides a unit and records its part when it has something to say.
func (c *checker) emit(sc *scope, u *unit) {
	if c.trace != nil {
		for i, lv := range u.levels {
			ordinary := i == len(u.levels)-1 && !u.script && u.opaque == ""
			c.trace.levels = append(c.trace.levels, traced{args: lv.args, ordinary: ordinary})
		}
	}
	if pt, ok := c.decide(sc, u); ok {
		c.record(sc, pt)
	}
}

// record adds a part; in quoted code only what would make the command ask
// counts, and a rule matching there may match (docs/spec.md §9.3).
func (c *checker) record(sc *scope, pt Part) {
	if sc.quoted {
		if pt.Decision == Allow || (pt.Decision == "" && pt.Opaque == "") {
			return
		}
		if pt.Decision == Deny {
			pt.Decision = Ask
		}
		pt.MayMatch = pt.Rule != nil
		pt.suggest = nil
	}
	c.parts = append(c.parts, pt)
}

// decide decides one unit (docs/spec.md §9.4): deny and ask rules on every
// level, then opaque, then allow: the command by a rule or as read-only,
// and every wrapper that is not transparent by a rule of its own.
func (c *checker) decide(sc *scope, u *unit) (Part, bool) {
	var pt Part
	at := 0
	if r, lv, may := c.denyAsk(u.levels); r != nil {
		at = lv
		pt.Rule, pt.MayMatch = r.rule, may
		pt.Decision = Ask
		if r.rule.Kind == KindDeny && !may {
			pt.Decision = Deny
		}
	}
	pt.Opaque = u.opaque
	loader := loaderName(u.assigned)
	if loader != "" && pt.Opaque == "" && c.p.HasAskOrDeny() {
		pt.Opaque = loaderReason(loader)
	}
	switch {
	case pt.Decision != "":
		pt.Words = words(u.levels[at].args)
		return pt, true
	case sc.quoted && pt.Opaque == "":
		return pt, false // in quoted code only deny, ask and opaque count
	case pt.Opaque != "" && loader == "":
		pt.Words = words(u.levels[0].args)
		return pt, true
	case pt.Opaque != "" || loader != "" || !safeAssigns(u.assigned):
		// Opaque or not allowed because of assignments: show them.
		pt.Words = append(append([]string(nil), u.prefix...), words(u.levels[0].args)...)
		return pt, true
	}
	return c.allow(u, pt)
}

// denyAsk finds the rule that decides a unit among deny and ask rules: a
// deny that matches, one that may match, an ask that matches, one that
// may; outermost level first. at is the level it matched.
func (c *checker) denyAsk(levels []level) (r *compiled, at int, may bool) {
	for _, rules := range [][]*compiled{c.p.deny, c.p.ask} {
		mayAt := -1
		var mayRule *compiled
		for i, lv := range levels {
			for _, rule := range rules {
				switch matches, definite := rule.matchLevel(lv); {
				case !matches:
				case definite:
					return rule, i, false
				case mayRule == nil:
					mayRule, mayAt = rule, i
				}
			}
		}
		if mayRule != nil {
			return mayRule, mayAt, true
		}
	}
	return nil, 0, false
}

// matchLevel reports whether a deny or ask rule may match a level, as
// written or without its global options, and whether it matches whatever
// its dynamic words turn out to be.
func (r *compiled) matchLevel(lv level) (matches, definite bool) {
	if r.match(lv.args, true) {
		matches = true
		if !hasDynamic(lv.args) || r.match(lv.args, false) {
			return true, true
		}
	}
	for _, al := range lv.alts {
		if r.match(al.args, true) {
			matches = true
			if !al.may && (!hasDynamic(al.args) || r.match(al.args, false)) {
				return true, true
			}
		}
	}
	return matches, false
}

// hasDynamic reports whether an argument is dynamic: only then may a
// rule match without matching.
func hasDynamic(args []arg) bool {
	for _, a := range args {
		if a.dyn {
			return true
		}
	}
	return false
}

// allow decides a unit no deny or ask rule matched.
func (c *checker) allow(u *unit, pt Part) (Part, bool) {
	last := len(u.levels) - 1
	var lacking []int
	var wrapperRule *Rule
	for i, lv := range u.levels {
		switch {
		case i == last && !u.script:
			if r := c.allowRule(lv.args); r != nil {
				pt.Rule = r
			} else if c.readOnly(lv.args, u.writes) {
				pt.ReadOnly = true
			} else {
				lacking = append(lacking, i)
			}
		case lv.transparent:
		default:
			if r := c.allowRule(lv.args); r != nil {
				wrapperRule = r
			} else {
				lacking = append(lacking, i)
			}
		}
	}
	if len(lacking) > 0 {
		pt.Rule, pt.ReadOnly = nil, false
		pt.Words = words(u.levels[lacking[0]].args)
		for _, i := range lacking {
			if s := suggestion(u.levels[i].args); s != "" {
				pt.suggest = append(pt.suggest, s)
			}
		}
		if len(pt.suggest) < len(lacking) {
			pt.suggest = nil
		}
		return pt, true
	}
	pt.Decision = Allow
	if u.script {
		// A script runner the scripts' own parts stand for: shown only when
		// a wrapper of its own needed a rule.
		pt.Rule = wrapperRule
		pt.Words = words(u.levels[last].args)
		return pt, wrapperRule != nil
	}
	pt.Words = words(u.levels[last].args)
	return pt, true
}

// allowRule returns the first allow rule matching args, or nil.
func (c *checker) allowRule(args []arg) *Rule {
	for _, r := range c.p.allow {
		if r.match(args, false) {
			return r.rule
		}
	}
	return nil
}

// internalPart decides a part in which no program runs: a bare assignment,
// a declaration, let, [[ ]], (( )), or redirections alone. Deny and ask
// rules match the words of a declaration or let (args); otherwise only a
// rule for every command does. It is allowed unless it assigns a loader
// name or writes a file.
func (c *checker) internalPart(sc *scope, words []string, args []arg, assigned []string, writes bool) {
	pt := Part{Words: words}
	if args == nil {
		c.everyRule(&pt)
	} else if r, _, may := c.denyAsk([]level{{args: args}}); r != nil {
		pt.Rule, pt.MayMatch = r.rule, may
		pt.Decision = Ask
		if r.rule.Kind == KindDeny && !may {
			pt.Decision = Deny
		}
	}
	loader := loaderName(assigned)
	switch {
	case pt.Decision != "":
	case loader != "" && c.p.HasAskOrDeny():
		pt.Opaque = loaderReason(loader)
	case loader != "" || writes:
	default:
		pt.Decision, pt.Internal = Allow, true
	}
	c.record(sc, pt)
}

// opaquePart records a part that cannot be checked. Only a rule for every
// command (`Bash`) decides it.
func (c *checker) opaquePart(sc *scope, words []string, reason string) {
	pt := Part{Words: words, Opaque: reason}
	c.everyRule(&pt)
	c.record(sc, pt)
}

// everyRule applies the first deny, else ask, rule that matches every
// command.
func (c *checker) everyRule(pt *Part) {
	for _, rules := range [][]*compiled{c.p.deny, c.p.ask} {
		for _, r := range rules {
			if r.every {
				pt.Rule = r.rule
				pt.Decision = Ask
				if r.rule.Kind == KindDeny {
					pt.Decision = Deny
				}
				return
			}
		}
	}
}

// words returns the words shown for args: dynamic ones as written, none
// of those the policy added (xargs' input).
func words(args []arg) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a.word != nil || !a.dyn {
			out = append(out, a.text)
		}
	}
	return out
}

// suggestion is the allow rule suggested for a command no rule allows
// (docs/spec.md §9.6 "Remember"): the name as allow rules match it, the
// second word when static and not an option, then ` *`. "" when the name
// is dynamic or cannot be quoted.
func suggestion(args []arg) string {
	if args[0].dyn {
		return ""
	}
	name, ok := quote(args[0].text)
	if !ok {
		return ""
	}
	s := name
	if len(args) > 1 && !args[1].dyn && !strings.HasPrefix(args[1].text, "-") {
		second, ok := quote(args[1].text)
		if !ok {
			return ""
		}
		s += " " + second
	}
	return s + " *"
}

// quote shell-quotes s where needed, so that ParseRule reads it back as
// the one literal word s.
func quote(s string) (string, bool) {
	q, err := syntax.Quote(s, syntax.LangBash)
	return q, err == nil
}
