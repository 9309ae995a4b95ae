package hooks

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// The events dsh runs hooks for.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// Handler is one hook command, ready to run.
type Handler struct {
	Event   string
	Matcher string
	Command string
	Timeout time.Duration
	// If is the `if` rule as written; "" when none.
	If         string
	FailClosed bool
	// Source is "dsh config" or the settings file it came from.
	Source string
	// Project: from the project's .claude/ files.
	Project bool

	match func(tool string) bool
	cond  *policy.Policy // If as an ask rule; nil when none
}

// newHandler makes the handler of one config entry. Its errors say what
// is wrong with the matcher or the `if` rule.
func newHandler(event string, g config.HookGroup, h config.Hook, source string, project bool) (Handler, error) {
	if err := config.CheckMatcher(g.Matcher); err != nil {
		return Handler{}, fmt.Errorf("matcher %q: %w", g.Matcher, err)
	}
	timeout := h.Timeout
	if timeout == 0 {
		timeout = config.DefaultHookTimeout
	}
	hd := Handler{
		Event: event, Matcher: g.Matcher, Command: h.Command, Timeout: timeout,
		If: h.If, FailClosed: h.FailClosed, Source: source, Project: project,
		match: matcher(g.Matcher),
	}
	if h.If != "" {
		rule, err := policy.ParseRule(policy.KindAsk, h.If, source)
		if err != nil {
			return Handler{}, fmt.Errorf("if %q: %w", h.If, err)
		}
		hd.cond = policy.New(policy.Config{Default: policy.Allow}, []policy.Rule{rule})
	}
	return hd, nil
}

// matcher returns what m matches, on the tool name hooks see (toolName):
// every tool for "", "*"; a list of exact names split on | or , (Bash and
// bash both name the bash tool); else an unanchored regular expression,
// checked by config.CheckMatcher.
func matcher(m string) func(string) bool {
	switch {
	case strings.TrimSpace(m) == "" || m == "*":
		return func(string) bool { return true }
	case config.ExactMatcher(m):
		names := strings.FieldsFunc(m, func(r rune) bool { return r == '|' || r == ',' })
		for i, n := range names {
			names[i] = strings.TrimSpace(n)
			if names[i] == bashtool.Name {
				names[i] = bashName
			}
		}
		return func(tool string) bool { return slices.Contains(names, tool) }
	default:
		re := regexp.MustCompile(m)
		return re.MatchString
	}
}

// bashName is the bash tool's name as hooks see it (Claude Code's).
const bashName = "Bash"

// toolName is a tool's name as hooks see it.
func toolName(name string) string {
	if name == bashtool.Name {
		return bashName
	}
	return name
}

// applies reports whether hd runs for a call of tool with command (the
// bash command, "" for other tools): the matcher, then the `if` rule, which
// Claude Code honours for its own Bash tool only. An `if` that may match
// (a dynamic word, an opaque part) runs the hook, as Claude Code does.
func (hd Handler) applies(tool, command string) bool {
	if !hd.match(toolName(tool)) {
		return false
	}
	if hd.cond == nil {
		return true
	}
	return tool == bashtool.Name && hd.cond.Check(command).Decision != policy.Allow
}
