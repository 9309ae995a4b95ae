package permissions

import (
	"errors"
	"log/slog"
	"os"
	"sync"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/claude"
	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/session"
)

// Options are what a Gate needs besides its config section. Zero values
// take the defaults.
type Options struct {
	// Home is the user's home: ~/.claude/settings.json, and ~ in rules and
	// commands. Default: os.UserHomeDir.
	Home string
	// ManagedDir holds managed-settings.json and managed-settings.d.
	// Default /etc/claude-code.
	ManagedDir string
	// ProjectDir is PROJECT (docs/spec.md §9.5). Default:
	// CLAUDE_PROJECT_DIR of dsh's environment, else each session's cwd.
	ProjectDir string
	// DefaultCwd is where a call of a session without a cwd runs (the
	// executor's default), for the question's "in …". Default: dsh's cwd.
	DefaultCwd string
	// RemoteSessions: the sessions' cwds are on another machine (the SSH
	// executor), so PROJECT is ProjectDir alone; without it no project
	// file is read.
	RemoteSessions bool
	// Sandbox is the local executor's sandbox: with one on, a call that
	// asks to leave it (dangerouslyDisableSandbox) is decided here
	// (docs/spec.md §11). The zero value: none.
	Sandbox config.Sandbox
	// Tasks finds the tasks that task_input types into; nil: task_input
	// goes on undecided.
	Tasks  TaskLookup
	Logger *slog.Logger
}

// Gate applies the command policy to bash calls (docs/spec.md §9): it
// holds the rules of dsh's config, reads the Claude Code settings of each
// session once, when the session's first bash call comes, and keeps the
// rules a user remembered for the rest of a session.
type Gate struct {
	cfg config.Permissions
	// noSection: the deployment has no permissions section. The gate
	// reads the Claude Code settings files alone (cfg is the section's
	// defaults), and a session that finds no rule there has no policy.
	noSection  bool
	sandbox    config.Sandbox
	own        []policy.Rule
	home       string
	managedDir string
	projectDir string
	defaultCwd string
	remote     bool
	tasks      TaskLookup
	// shellBins are the system's shells' executables (systemShell).
	shellBinsOnce sync.Once
	shellBins     map[string]bool
	log           *slog.Logger

	sessions *session.Store[*sessionState]
}

// New returns the gate of cfg, a section that passed validation (a rule
// that does not parse is left out).
func New(cfg config.Permissions, opts Options) *Gate {
	g := newGate(cfg, opts)
	g.own = g.cfg.Rules("dsh config")
	return g
}

// NewWithoutSection returns the gate of a deployment without a permissions
// section (docs/spec.md §9.1): every key takes its default, so the Bash
// rules of the Claude Code settings files apply (claudeSettings: true,
// trustProjectAllow: false) and a command no rule decides runs (default:
// allow). A session whose files hold no Bash rule has no policy: its
// calls run unparsed, as without a gate, but one that asks to leave the
// sandbox (opts.Sandbox) or that a hook asks about.
func NewWithoutSection(opts Options) *Gate {
	g := newGate(config.Permissions{}, opts)
	g.noSection = true
	return g
}

func newGate(cfg config.Permissions, opts Options) *Gate {
	g := &Gate{
		cfg:        cfg.WithDefaults(),
		sandbox:    opts.Sandbox.WithDefaults(),
		home:       opts.Home,
		managedDir: opts.ManagedDir,
		projectDir: opts.ProjectDir,
		defaultCwd: opts.DefaultCwd,
		remote:     opts.RemoteSessions,
		tasks:      opts.Tasks,
		log:        opts.Logger,
	}
	g.sessions = session.NewStore(g.load)
	if g.home == "" {
		g.home, _ = os.UserHomeDir()
	}
	if g.projectDir == "" {
		g.projectDir = os.Getenv("CLAUDE_PROJECT_DIR")
	}
	if g.defaultCwd == "" && g.remote {
		g.defaultCwd = "~" // the remote user's home
	}
	if g.defaultCwd == "" {
		g.defaultCwd, _ = os.Getwd()
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	return g
}

// sessionState is what a gate keeps for one session.
type sessionState struct {
	sources []Source
	// managed names a malformed managed settings file: every call is
	// denied.
	managed string
	// unruled: the gate has no section and the files held no rule, so
	// policy is nil for the session's life (nothing is remembered
	// without a policy: only an ask of "no rule allows" offers that).
	unruled bool
	// asking holds the one ask a session shows at a time.
	asking chan struct{}

	mu     sync.Mutex
	policy *policy.Policy // the rules read at the start, and those remembered; nil: no policy
}

// check decides command with the session's current rules; without a
// policy every command is allowed, unparsed.
func (st *sessionState) check(command string) policy.Result {
	st.mu.Lock()
	p := st.policy
	st.mu.Unlock()
	if p == nil {
		return policy.Result{Decision: policy.Allow, Deciding: -1}
	}
	return p.Check(command)
}

// remember adds allow rules for the rest of the session.
func (st *sessionState) remember(rules []policy.Rule) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.policy = st.policy.With(rules...)
}

// state returns s's state, made (and its settings files read) on first
// use; nil s is the state of calls without a session.
func (g *Gate) state(s *session.Session) *sessionState { return g.sessions.Get(s) }

// load reads the rules a session starts with: dsh's own, then those of the
// Claude Code settings files. Without a section and without a rule in
// those files the session gets no policy: under a default of allow no
// command could be decided otherwise, so none is parsed.
func (g *Gate) load(s *session.Session) *sessionState {
	st := &sessionState{asking: make(chan struct{}, 1)}
	rules := append([]policy.Rule(nil), g.own...)
	if !g.noSection {
		st.sources = []Source{{Name: "dsh config", Rules: len(g.own)}}
	}
	if *g.cfg.ClaudeSettings {
		places := claude.Places{ManagedDir: g.managedDir, Home: g.home, Project: g.project(s)}
		for _, f := range places.Files() {
			r, src, err := g.readClaude(f, g.cfg.TrustProjectAllow)
			if src == nil {
				continue
			}
			st.sources = append(st.sources, *src)
			if err != nil && st.managed == "" {
				st.managed = f.Path
			}
			rules = append(rules, r...)
		}
	}
	if g.noSection && len(rules) == 0 && st.managed == "" {
		st.unruled = true
		return st
	}
	st.policy = policy.New(g.policyConfig(), rules)
	return st
}

// policyConfig is what the policy takes from the section (or its
// defaults).
func (g *Gate) policyConfig() policy.Config {
	return policy.Config{Default: policy.Decision(g.cfg.Default), ReadOnly: *g.cfg.ReadOnly, Home: g.home}
}

// project is PROJECT for s: the configured project dir, else s's cwd
// (none when that cwd is on another machine).
func (g *Gate) project(s *session.Session) string {
	if g.projectDir != "" || g.remote {
		return g.projectDir
	}
	if s != nil && s.Cwd() != "" {
		return s.Cwd()
	}
	return g.defaultCwd
}

// Sources lists where s's rules came from (files that do not exist are
// not listed).
func (g *Gate) Sources(s *session.Session) []Source { return g.state(s).sources }

// Check decides command as a bash call of s would be decided, without
// asking anyone (`dsh policy check`). Its error is a malformed managed
// settings file, which denies every call of the session. A session
// without rules allows every command unparsed; Check still parses it,
// with no rules, to show its parts.
func (g *Gate) Check(s *session.Session, command string) (policy.Result, error) {
	st := g.state(s)
	switch {
	case st.managed != "":
		return policy.Result{}, errors.New(errManaged(st.managed))
	case st.unruled:
		return policy.New(g.policyConfig(), nil).Check(command), nil
	}
	return st.check(command), nil
}
