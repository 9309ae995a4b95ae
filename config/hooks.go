package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/dsh-go/dsh/internal/lazyre"
	"github.com/dsh-go/dsh/internal/num"
	"github.com/dsh-go/dsh/policy"
)

// Hooks are Claude Code compatible hook commands (docs/spec.md §10), in
// the shape of Claude Code's settings: per event, matcher groups, each
// with its handlers.
type Hooks struct {
	PreToolUse  []HookGroup `yaml:"PreToolUse,omitempty"`
	PostToolUse []HookGroup `yaml:"PostToolUse,omitempty"`
}

// HookGroup is the handlers that run for the tools Matcher names.
type HookGroup struct {
	// Matcher names tools: "", "*" or absent for every tool; letters,
	// digits, _, -, spaces, | and , for exact names; anything else is an
	// unanchored regular expression.
	Matcher string `yaml:"matcher,omitempty"`
	Hooks   []Hook `yaml:"hooks,omitempty"`
}

// Hook is one handler.
type Hook struct {
	// Type is "command", the only type dsh runs.
	Type string `yaml:"type,omitempty"`
	// Command is run with bash -c.
	Command string `yaml:"command,omitempty"`
	// Timeout ends the hook (default 60 s). A file gives it in seconds,
	// as Claude Code does, rounded up to a whole millisecond.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// If is a rule (docs/spec.md §9.2) the call's command must match.
	If string `yaml:"if,omitempty"`
	// FailClosed makes a failing or timed-out hook block the call.
	FailClosed bool `yaml:"failClosed,omitempty"`
}

// DefaultHookTimeout is a hook's timeout when it gives none (Claude
// Code's is 10 minutes).
const DefaultHookTimeout = 60 * time.Second

// HookCommand is the only handler type dsh runs.
const HookCommand = "command"

// exactMatcher is a matcher of exact names (Claude Code's rule: only
// letters, digits, _, -, spaces, | and ,).
var exactMatcher = lazyre.New(`^[A-Za-z0-9_\- |,]*$`)

// ExactMatcher reports whether m names tools exactly (a list split on |
// or ,) rather than by a regular expression.
func ExactMatcher(m string) bool { return exactMatcher().MatchString(m) }

// CheckMatcher reports why a matcher cannot be used: a regular expression
// Go's regexp refuses.
func CheckMatcher(m string) error {
	if m == "*" || ExactMatcher(m) {
		return nil
	}
	_, err := regexp.Compile(m)
	return err
}

// Events returns the event names and their groups, in the order they run.
func (h *Hooks) Events() []struct {
	Name   string
	Groups *[]HookGroup
} {
	return []struct {
		Name   string
		Groups *[]HookGroup
	}{{"PreToolUse", &h.PreToolUse}, {"PostToolUse", &h.PostToolUse}}
}

// Validate reports the first hook dsh cannot run, with its key relative to
// the section ("PreToolUse[0].hooks[1].type: …"): a type other than
// command, an empty command, a negative timeout, an
// `if` that is not a rule, a matcher regexp refuses.
func (h Hooks) Validate() error {
	for _, ev := range h.Events() {
		for i, g := range *ev.Groups {
			gk := itemKey(ev.Name, i)
			if err := CheckMatcher(g.Matcher); err != nil {
				return keyProblem(gk+".matcher", 0, fmt.Sprintf("%q is not a regular expression: %v", g.Matcher, err))
			}
			for j, hk := range g.Hooks {
				if err := hk.validate(itemKey(gk+".hooks", j)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (h Hook) validate(key string) *Error {
	switch {
	case h.Type != HookCommand:
		return keyProblem(key+".type", 0, fmt.Sprintf("%q: dsh runs only hooks of type %q", h.Type, HookCommand))
	case strings.TrimSpace(h.Command) == "":
		return keyErr(key+".command", 0, "must be a command")
	case h.Timeout < 0:
		return errPositive(key+".timeout", 0)
	}
	if h.If != "" {
		if _, err := policy.ParseRule(policy.KindAsk, h.If, ""); err != nil {
			return keyProblem(key+".if", 0, fmt.Sprintf("invalid rule %q: %v", h.If, err))
		}
	}
	return nil
}

// decoder is the schema of the hooks section.
func (h *Hooks) decoder() decoder {
	var fields []field
	for _, ev := range h.Events() {
		fields = append(fields, field{ev.Name, list(ev.Groups, (*HookGroup).decoder)})
	}
	return mapping(fields...)
}

func (g *HookGroup) decoder() decoder {
	return mapping(
		field{"matcher", str(&g.Matcher)},
		field{"hooks", list(&g.Hooks, (*Hook).decoder)},
	)
}

func (h *Hook) decoder() decoder {
	return mapping(
		field{"type", str(&h.Type)},
		field{"command", str(&h.Command)},
		field{"timeout", positive(&h.Timeout, num.Seconds)},
		field{"if", str(&h.If)},
		field{"failClosed", boolean(&h.FailClosed)},
	)
}
