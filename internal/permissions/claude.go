package permissions

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/internal/claude"
	"github.com/dsh-go/dsh/policy"
)

// Source is one place rules came from, for `dsh doctor` and explanations.
type Source struct {
	// Name is "dsh config" or a settings file's path.
	Name string
	// Rules counts the rules taken from it.
	Rules int
	// Note says what went wrong or was left out ("not valid JSON: …",
	// "allow rules ignored (trustProjectAllow: false)"); "" when nothing.
	Note string
}

// settings is the part of a Claude Code settings file dsh reads.
type settings struct {
	Permissions struct {
		Allow []json.RawMessage `json:"allow"`
		Ask   []json.RawMessage `json:"ask"`
		Deny  []json.RawMessage `json:"deny"`
	} `json:"permissions"`
}

// readClaude reads one settings file. A missing file gives no source. A
// malformed managed file is returned as an error: the session's calls are
// then denied; any other unusable content is skipped with a warning.
func (g *Gate) readClaude(f claude.File, trustProjectAllow bool) ([]policy.Rule, *Source, error) {
	var s settings
	found, err := claude.Read(f.Path, &s)
	if !found {
		return nil, nil, nil
	}
	src := &Source{Name: f.Path}
	if err != nil {
		src.Note = "unusable: " + err.Error()
		if f.Managed {
			return nil, src, err
		}
		g.log.Warn("permissions: skipping a Claude Code settings file", "file", f.Path, "err", err)
		return nil, src, nil
	}
	var rules []policy.Rule
	for _, l := range []struct {
		kind  policy.Kind
		items []json.RawMessage
	}{{policy.KindAllow, s.Permissions.Allow}, {policy.KindAsk, s.Permissions.Ask}, {policy.KindDeny, s.Permissions.Deny}} {
		if l.kind == policy.KindAllow && f.Project && !trustProjectAllow {
			if len(l.items) > 0 {
				src.Note = "allow rules ignored (trustProjectAllow: false)"
			}
			continue
		}
		rules = append(rules, g.bashRules(f.Path, l.kind, l.items)...)
	}
	src.Rules = len(rules)
	return rules, src, nil
}

// bashRules keeps the entries that are Bash rules ("Bash", "Bash(…)"),
// warning about those that are but do not parse. Other tools' entries are
// not dsh's business.
func (g *Gate) bashRules(path string, kind policy.Kind, items []json.RawMessage) []policy.Rule {
	var out []policy.Rule
	for _, raw := range items {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			g.log.Warn("permissions: skipping an entry that is not a string", "file", path, "entry", string(raw))
			continue
		}
		if text != "Bash" && !strings.HasPrefix(text, "Bash(") {
			continue
		}
		r, err := policy.ParseRule(kind, text, path)
		if err != nil {
			g.log.Warn("permissions: skipping an unusable rule", "file", path, "entry", text, "err", err)
			continue
		}
		out = append(out, r)
	}
	return out
}

// errManaged is the deny text of a session whose managed settings file is
// malformed (exact, docs/spec.md §9.5, after "Error: ").
func errManaged(path string) string {
	return fmt.Sprintf("denied by policy: managed settings file %s is malformed", path)
}
