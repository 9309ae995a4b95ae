package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/dsh-go/dsh/policy"
)

// Permissions is the command policy's section (docs/spec.md §9.1). Zero
// values take the defaults, and a File without it gets them all: no rules
// of dsh's own, the Bash rules of Claude Code's settings files (read once
// per session), default allow; a session whose files hold no such rule
// parses nothing.
type Permissions struct {
	// Default decides a command no rule decides: "allow" (default), "ask"
	// or "deny".
	Default string `yaml:"default,omitempty"`
	// Allow, Ask and Deny are rules, "PATTERN" or "Bash(PATTERN)"
	// (docs/spec.md §9.2).
	Allow []string `yaml:"allow,omitempty"`
	Ask   []string `yaml:"ask,omitempty"`
	Deny  []string `yaml:"deny,omitempty"`
	// ReadOnly counts the built-in read-only commands as allowed (nil:
	// true).
	ReadOnly *bool `yaml:"readOnly,omitempty"`
	// AskFallback is what an ask becomes when nobody can be asked: "deny"
	// (default) or "allow".
	AskFallback string `yaml:"askFallback,omitempty"`
	// AskTimeout dismisses an unanswered ask (default 5 minutes).
	AskTimeout time.Duration `yaml:"askTimeoutMs,omitempty"`
	// ClaudeSettings also reads the Bash rules of Claude Code's settings
	// files (nil: true).
	ClaudeSettings *bool `yaml:"claudeSettings,omitempty"`
	// TrustProjectAllow honours allow rules from a project's .claude/
	// files.
	TrustProjectAllow bool `yaml:"trustProjectAllow,omitempty"`
}

// Defaults of [Permissions].
const (
	DefaultAskTimeout = 5 * time.Minute
)

var (
	decisions    = []string{string(policy.Allow), string(policy.Ask), string(policy.Deny)}
	askFallbacks = []string{string(policy.Deny), string(policy.Allow)}
)

// WithDefaults returns p with its defaults spelled out.
func (p Permissions) WithDefaults() Permissions {
	p.Default = cmpOr(p.Default, string(policy.Allow))
	p.AskFallback = cmpOr(p.AskFallback, string(policy.Deny))
	if p.AskTimeout == 0 {
		p.AskTimeout = DefaultAskTimeout
	}
	yes := true
	if p.ReadOnly == nil {
		p.ReadOnly = &yes
	}
	if p.ClaudeSettings == nil {
		p.ClaudeSettings = &yes
	}
	return p
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Validate reports the first value of p that no default can repair, with
// its key relative to the section: a default or fallback that is not one
// of its values, a negative timeout, and a rule
// that does not parse ("deny[2]: invalid rule \"Bash(rm\": …").
func (p Permissions) Validate() error {
	if p.Default != "" && !slices.Contains(decisions, p.Default) {
		return errOneOf("default", p.Default, 0, decisions)
	}
	if p.AskFallback != "" && !slices.Contains(askFallbacks, p.AskFallback) {
		return errOneOf("askFallback", p.AskFallback, 0, askFallbacks)
	}
	if p.AskTimeout < 0 {
		return errPositive("askTimeoutMs", 0)
	}
	for _, l := range p.lists() {
		for i, text := range *l.rules {
			if err := checkRule(l.key, i, text, l.kind, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// Rules parses the rules of p, with source as their origin. Call it on a
// Permissions that passed Validate.
func (p Permissions) Rules(source string) []policy.Rule {
	var out []policy.Rule
	for _, l := range p.lists() {
		for _, text := range *l.rules {
			if r, err := policy.ParseRule(l.kind, text, source); err == nil {
				out = append(out, r)
			}
		}
	}
	return out
}

type ruleList struct {
	key   string
	kind  policy.Kind
	rules *[]string
}

func (p *Permissions) lists() []ruleList {
	return []ruleList{
		{"allow", policy.KindAllow, &p.Allow},
		{"ask", policy.KindAsk, &p.Ask},
		{"deny", policy.KindDeny, &p.Deny},
	}
}

// checkRule checks the rule text, item i of the list at key.
func checkRule(key string, i int, text string, kind policy.Kind, line int) *Error {
	if _, err := policy.ParseRule(kind, text, ""); err != nil {
		return keyProblem(itemKey(key, i), line, fmt.Sprintf("invalid rule %q: %v", text, err))
	}
	return nil
}
