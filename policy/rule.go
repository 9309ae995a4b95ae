package policy

import (
	"errors"
	"strings"

	"github.com/dsh-go/dsh/internal/lazyre"
	"mvdan.cc/sh/v3/syntax"
)

// Kind is the list a rule is in.
type Kind int

// The lists. The zero Kind is none of them, so a Rule left zero is refused.
const (
	KindAllow Kind = iota + 1
	KindAsk
	KindDeny
)

// String returns the list's name as the config spells it.
func (k Kind) String() string {
	switch k {
	case KindAllow:
		return "allow"
	case KindAsk:
		return "ask"
	case KindDeny:
		return "deny"
	}
	return "unknown"
}

// Rule is one rule, parsed (docs/spec.md §9.2).
type Rule struct {
	Kind    Kind
	Pattern string // as written without Bash(…), ":*" kept: `rm -rf *`, `npm run test:*`
	Source  string // where it came from, for explanations: "dsh config", a settings file's path

	words []*syntax.Word // the pattern split into words, before brace expansion and ~
}

// The reasons a rule is invalid. They do not repeat the rule: the caller
// names it and where it is.
var (
	errKind      = errors.New("unknown rule kind")
	errEmpty     = errors.New("empty pattern")
	errQuote     = errors.New("unbalanced quotes")
	errBackslash = errors.New("trailing backslash")
	errParen     = errors.New("Bash( without its closing )")
	errTool      = errors.New("names another tool: only Bash rules apply to commands")
	errBraces    = errors.New("brace expansion makes too many words")
)

// otherTool matches a Claude Code rule for another tool: Read(…),
// WebFetch(domain:…), mcp__server__tool. Tools are capitalised or mcp__
// names; a bare word is another tool only when it names one of Claude
// Code's, so that a command such as `R` stays a pattern.
var otherTool = lazyre.New(`^(([A-Z][A-Za-z0-9_]*|mcp__[A-Za-z0-9_-]+)\(.*\)|mcp__[A-Za-z0-9_-]+)$`)

// claudeTools are the names of Claude Code's other tools.
var claudeTools = map[string]bool{
	"Read": true, "Write": true, "Edit": true, "MultiEdit": true, "Glob": true, "Grep": true,
	"LS": true, "WebFetch": true, "WebSearch": true, "NotebookEdit": true, "NotebookRead": true,
	"Task": true, "TodoWrite": true, "Agent": true, "Skill": true, "BashOutput": true,
	"KillShell": true, "KillBash": true, "ExitPlanMode": true, "SlashCommand": true,
}

// ParseRule parses text ("PATTERN" or "Bash(PATTERN)"; "Bash" and
// "Bash(*)" mean every command). Invalid (docs/spec.md §9.2): empty,
// unbalanced quotes, trailing backslash, "Bash(" without ")", another tool
// ("Read(…)"). The error says why, without repeating the text.
func ParseRule(kind Kind, text, source string) (Rule, error) {
	if kind < KindAllow || kind > KindDeny {
		return Rule{}, errKind
	}
	pat, err := rulePattern(strings.TrimSpace(text))
	if err != nil {
		return Rule{}, err
	}
	words, err := splitPattern(pat)
	if err != nil {
		return Rule{}, err
	}
	r := Rule{Kind: kind, Pattern: pat, Source: source, words: words}
	if _, err := compile(&r, ""); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// rulePattern takes the pattern out of Bash(…) and refuses other tools.
func rulePattern(text string) (string, error) {
	switch {
	case text == "Bash":
		return "*", nil
	case strings.HasPrefix(text, "Bash("):
		if !strings.HasSuffix(text, ")") {
			return "", errParen
		}
		text = strings.TrimSpace(text[len("Bash(") : len(text)-1])
	case otherTool().MatchString(text) || claudeTools[text]:
		return "", errTool
	}
	if text == "" {
		return "", errEmpty
	}
	return text, nil
}

// splitPattern splits a pattern into words as a shell would: blanks
// separate, quotes group, a backslash escapes. Nothing is expanded: `$x` is
// text. The words are made of bare text (backslashes kept, for the same
// quote removal as commands) and quoted text, so brace expansion, ~ and
// stars are found by the code that reads commands. A trailing `:*` is ` *`.
func splitPattern(s string) ([]*syntax.Word, error) {
	if strings.HasSuffix(s, ":*") {
		s = s[:len(s)-2] + " *"
	}
	var words []*syntax.Word
	var cur []syntax.WordPart
	var bare strings.Builder
	flushBare := func() {
		if bare.Len() > 0 {
			cur = append(cur, &syntax.Lit{Value: bare.String()})
			bare.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flushBare()
			if len(cur) > 0 {
				words = append(words, &syntax.Word{Parts: cur})
				cur = nil
			}
		case c == '\\':
			if i+1 == len(s) {
				return nil, errBackslash
			}
			if s[i+1] != '\n' {
				bare.WriteString(s[i : i+2])
			}
			i++
		case c == '\'' || c == '"' || (c == '$' && i+1 < len(s) && s[i+1] == '\''):
			text, end, err := quoted(s, i)
			if err != nil {
				return nil, err
			}
			flushBare()
			cur = append(cur, &syntax.SglQuoted{Value: text})
			i = end
		default:
			bare.WriteByte(c)
		}
	}
	flushBare()
	if len(cur) > 0 {
		words = append(words, &syntax.Word{Parts: cur})
	}
	if len(words) == 0 {
		return nil, errEmpty
	}
	return words, nil
}

// quoted reads the quoted string starting at s[i] ('…', "…" or $'…') and
// returns its literal value and the index of its closing quote.
func quoted(s string, i int) (string, int, error) {
	switch s[i] {
	case '\'':
		end := strings.IndexByte(s[i+1:], '\'')
		if end < 0 {
			return "", 0, errQuote
		}
		return s[i+1 : i+1+end], i + 1 + end, nil
	case '"':
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '"':
				return dqUnescape(s[i+1:j], '"'), j, nil
			}
		}
		return "", 0, errQuote
	}
	for j := i + 2; j < len(s); j++ { // $'…'
		switch s[j] {
		case '\\':
			j++
		case '\'':
			return ansiC(s[i+2 : j]), j, nil
		}
	}
	return "", 0, errQuote
}

// pword is one word of a compiled pattern: the literal pieces between its
// unquoted stars. One piece is a literal word; ["", ""] is a whole-word `*`.
type pword struct {
	lits []string
}

func (w pword) literal() bool { return len(w.lits) == 1 }
func (w pword) star() bool    { return len(w.lits) == 2 && w.lits[0] == "" && w.lits[1] == "" }

// compiled is a rule ready to match, with the user's home applied.
type compiled struct {
	rule  *Rule
	words []pword
	every bool   // the pattern is `*` alone: every command, even one that does not parse
	str   strNFA // deny and ask rules with a `*` inside a word: matched on the joined arguments
	head  string // the literal text the joined arguments must start with (str rules)
	name  string // the first word when literal: its basename (deny, ask) or as written (allow)
	slash bool   // allow rules: the first word has a `/`, so names are compared as paths
}

// compile expands the rule's words (braces, ~ with home, stars).
func compile(r *Rule, home string) (*compiled, error) {
	c := &compiled{rule: r}
	for _, w := range r.words {
		fields, ok := expandWord(w, home)
		if !ok {
			return nil, errBraces
		}
		for _, f := range fields {
			c.words = append(c.words, patternWord(f))
		}
	}
	c.words = collapseStars(c.words)
	if len(c.words) == 0 { // `{,}`: words that expand to none
		return nil, errEmpty
	}
	c.every = len(c.words) == 1 && c.words[0].star()
	if c.words[0].literal() {
		c.name = c.words[0].lits[0]
		c.slash = strings.Contains(c.name, "/")
		if r.Kind != KindAllow {
			c.name = base(c.name)
		}
	}
	if r.Kind != KindAllow && hasInnerStar(c.words) {
		c.str, c.head = buildRuleNFA(c.words)
	}
	return c, nil
}

// patternWord splits a field at its unquoted stars.
func patternWord(f field) pword {
	lits := []string{""}
	for _, s := range f {
		if s.kind != segUnquoted {
			lits[len(lits)-1] += s.text
			continue
		}
		parts := strings.Split(s.text, "*")
		lits[len(lits)-1] += parts[0]
		lits = append(lits, parts[1:]...)
	}
	return pword{lits: lits}
}

// collapseStars merges neighbouring whole-word stars, which mean the same
// as one.
func collapseStars(ws []pword) []pword {
	out := ws[:0:0]
	for _, w := range ws {
		if w.star() && len(out) > 0 && out[len(out)-1].star() {
			continue
		}
		out = append(out, w)
	}
	return out
}

// hasInnerStar reports whether a word has a `*` that is not the whole word.
func hasInnerStar(ws []pword) bool {
	for _, w := range ws {
		if !w.literal() && !w.star() {
			return true
		}
	}
	return false
}

// base returns what follows the last `/` of a command name.
func base(name string) string {
	return name[strings.LastIndexByte(name, '/')+1:]
}
