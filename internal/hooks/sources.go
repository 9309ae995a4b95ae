package hooks

import (
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/claude"
	"github.com/dsh-go/dsh/internal/num"
	"github.com/dsh-go/dsh/session"
)

// sourceConfig names the hooks of dsh's own config.
const sourceConfig = "dsh config"

// fromConfig are the handlers of dsh's config, which passed validation.
func fromConfig(h config.Hooks) ([]Handler, error) {
	var out []Handler
	for _, ev := range h.Events() {
		for _, g := range *ev.Groups {
			for _, hk := range g.Hooks {
				hd, err := newHandler(ev.Name, g, hk, sourceConfig, false)
				if err != nil {
					return nil, err
				}
				out = append(out, hd)
			}
		}
	}
	return out, nil
}

// claudeSettings is the part of a Claude Code settings file hooks read.
type claudeSettings struct {
	DisableAllHooks bool `json:"disableAllHooks"`
	Hooks           map[string][]struct {
		Matcher string       `json:"matcher"`
		Hooks   []claudeHook `json:"hooks"`
	} `json:"hooks"`
}

// claudeHook is one handler of a Claude Code settings file: a
// [config.Hook] as JSON writes it, its timeout a number of seconds, and
// the keys dsh does not run.
type claudeHook struct {
	Type       string   `json:"type"`
	Command    string   `json:"command"`
	Timeout    float64  `json:"timeout"`
	If         string   `json:"if"`
	FailClosed bool     `json:"failClosed"`
	Args       []string `json:"args"`
	Async      bool     `json:"async"`
}

// hook is hk as dsh's config holds it: the timeout rounded up to a whole
// millisecond, as a config file's is.
func (hk claudeHook) hook() config.Hook {
	return config.Hook{Type: hk.Type, Command: hk.Command, Timeout: num.Seconds(hk.Timeout), If: hk.If, FailClosed: hk.FailClosed}
}

// load returns the handlers of a session: dsh's, then those of the Claude
// Code settings files when claudeHooks is on (project files only when
// trusted), in the order of docs/spec.md §10, each (event, matcher,
// command) once.
func (h *Hooks) load(s *session.Session) []Handler {
	handlers := append([]Handler(nil), h.own...)
	if h.claude {
		places := claude.Places{ManagedDir: h.opts.ManagedDir, Home: h.opts.Home, Project: h.project(s)}
		for _, f := range places.Files() {
			if f.Project && !h.trustProject {
				continue
			}
			handlers = append(handlers, h.readClaude(f)...)
		}
	}
	return dedupe(handlers)
}

// readClaude returns the hooks of one settings file, skipping with a
// warning what dsh cannot run.
func (h *Hooks) readClaude(f claude.File) []Handler {
	var s claudeSettings
	found, err := claude.Read(f.Path, &s)
	if !found || s.DisableAllHooks {
		return nil
	}
	if err != nil {
		h.log.Warn("hooks: skipping a Claude Code settings file", "file", f.Path, "err", err)
		return nil
	}
	var out []Handler
	for _, event := range []string{PreToolUse, PostToolUse} {
		for _, g := range s.Hooks[event] {
			for _, hk := range g.Hooks {
				if why := unsupported(hk); why != "" {
					h.log.Warn("hooks: skipping a hook dsh does not run", "file", f.Path, "event", event, "command", hk.Command, "why", why)
					continue
				}
				hd, err := newHandler(event, config.HookGroup{Matcher: g.Matcher}, hk.hook(), f.Path, f.Project)
				if err != nil {
					h.log.Warn("hooks: skipping an unusable hook", "file", f.Path, "event", event, "command", hk.Command, "err", err)
					continue
				}
				out = append(out, hd)
			}
		}
	}
	return out
}

// unsupported says why dsh does not run a Claude Code hook, or "".
func unsupported(hk claudeHook) string {
	switch {
	case hk.Type != config.HookCommand:
		return fmt.Sprintf("type %q", hk.Type)
	case hk.Args != nil:
		return "args"
	case hk.Async:
		return "async"
	case strings.TrimSpace(hk.Command) == "":
		return "no command"
	case hk.Timeout < 0:
		return "a negative timeout"
	}
	return ""
}

// dedupe keeps the first of handlers with the same event, matcher,
// command and `if`: two guards of one script under different conditions
// are two guards.
func dedupe(handlers []Handler) []Handler {
	seen := make(map[[4]string]bool, len(handlers))
	out := handlers[:0]
	for _, hd := range handlers {
		k := [4]string{hd.Event, hd.Matcher, hd.Command, hd.If}
		if !seen[k] {
			seen[k] = true
			out = append(out, hd)
		}
	}
	return out
}
