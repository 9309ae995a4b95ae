package hooks

import (
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/claude"
	"github.com/dsh-go/dsh/session"
)

// Options are what Hooks need besides their config. Zero values take the
// defaults.
type Options struct {
	// Home and ManagedDir locate Claude Code's settings files (defaults:
	// os.UserHomeDir, /etc/claude-code).
	Home, ManagedDir string
	// ProjectDir is PROJECT (docs/spec.md §9.5). Default:
	// CLAUDE_PROJECT_DIR of dsh's environment, else each session's cwd.
	ProjectDir string
	// DefaultCwd is where a call of a session without a cwd runs.
	// Default: dsh's cwd.
	DefaultCwd string
	// RemoteSessions: the sessions' cwds are on another machine (executor
	// ssh). Hook commands then run in DefaultCwd, PROJECT is ProjectDir
	// alone, and a session's cwd reaches the hooks only in the payload.
	RemoteSessions bool
	Logger         *slog.Logger
}

// Hooks run hook commands around tool calls. Make them with New; they are
// safe for concurrent use.
type Hooks struct {
	exec         bash.Executor
	own          []Handler
	claude       bool
	trustProject bool
	opts         Options
	log          *slog.Logger
	handlers     *session.Store[[]Handler]
	// failures counts failed hooks: [0] PreToolUse, [1] PostToolUse.
	failures [2]atomic.Uint64
}

// New returns the hooks of cfg (its hooks, claudeHooks and
// trustProjectHooks), whose commands run through exec, a local executor.
// It fails only for a config that did not pass validation.
func New(cfg config.File, exec bash.Executor, opts Options) (*Hooks, error) {
	own, err := fromConfig(cfg.Hooks)
	if err != nil {
		return nil, err
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.ProjectDir == "" {
		opts.ProjectDir = claude.Project("")
	}
	if opts.DefaultCwd == "" {
		opts.DefaultCwd, _ = os.Getwd()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &Hooks{exec: exec, own: own, claude: cfg.ClaudeHooks, trustProject: cfg.TrustProjectHooks, opts: opts, log: opts.Logger}
	h.handlers = session.NewStore(h.load)
	return h, nil
}

// Configured reports whether cfg has any hooks to run: without them the
// stack installs no middleware, and hooks cost nothing.
func Configured(cfg config.File) bool {
	return cfg.ClaudeHooks || len(cfg.Hooks.PreToolUse) > 0 || len(cfg.Hooks.PostToolUse) > 0
}

// Handlers lists the hooks a session runs, Claude Code's files read when
// the session's first call came (for dsh doctor: with a nil session).
func (h *Hooks) Handlers(s *session.Session) []Handler { return h.handlers.Get(s) }

// project is PROJECT for s.
func (h *Hooks) project(s *session.Session) string {
	if h.opts.ProjectDir != "" || h.opts.RemoteSessions {
		return h.opts.ProjectDir
	}
	if s != nil && s.Cwd() != "" {
		return s.Cwd()
	}
	return h.opts.DefaultCwd
}
