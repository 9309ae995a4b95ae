// Package host assembles dsh from its parts, so that every front end (the
// MCP server, dsh run, an ACP agent) gets the same stack from the same
// config file. [Standard] builds it in one call — executor, task runtime,
// tool registry with its pre-execute steps, the bash and task tools, the
// audit log, the prompt — and [Stack.Close] ends it:
//
//	st, err := host.Standard(cfg.WithDefaults(), host.WithLogger(log))
//	if err != nil { … }
//	defer st.Close()
//	res := st.Tools.Execute(ctx, tool.Call{Name: "bash", Args: args, Session: owner})
//
// Standard is plain construction: each part is made by its own package's
// constructor, in the order a call passes through them (standard.go reads
// top to bottom that way), and a Go harness that needs another shape
// builds its own from the same constructors (tool.NewRegistry,
// bashtool.New, tasktool.Definitions, tasktool.Start). The tool packages
// know nothing of the host: it sits above them.
//
// Decisions: the stack is built once and ends once; a part cannot be
// added or removed while it runs (a container that did that served two of
// six parts and only tests used its removal). Tool calls do not go through
// the host: they run on the registry, concurrently with everything else.
package host

import (
	"log/slog"

	"github.com/dsh-go/dsh/internal/permissions"
)

// Option configures a [Standard] stack.
type Option func(*options)

type options struct {
	log         *slog.Logger
	hide        []string
	config      string
	permissions permissions.Options
	keepSpills  bool
	version     func() string
}

// WithVersion gives dsh's version, for the OpenTelemetry resource's
// service.version; it is asked only when telemetry is on.
func WithVersion(v func() string) Option { return func(o *options) { o.version = v } }

// WithKeptSpills keeps the spill files a session was told of after the
// session and the stack end (dsh run prints their paths and exits): the
// local executor leaves its private spill directory
// ([local.WithKeptSpill]) and the bash tool its sessions' files. Its
// config's local.spillDir should be a base of the caller's own, which the
// caller sweeps.
func WithKeptSpills() Option { return func(o *options) { o.keepSpills = true } }

// WithHidden hides dsh's own files from sandboxed commands besides the
// configured hide entries: dsh serve's token file and Unix socket (the
// audit log file Standard hides itself).
func WithHidden(paths ...string) Option {
	return func(o *options) { o.hide = append(o.hide, paths...) }
}

// WithConfigFile names the config file the stack was built from: the
// local executor's sandbox hides its directory and shows the file itself
// read-only ([local.WithConfigFile]).
func WithConfigFile(path string) Option {
	return func(o *options) { o.config = path }
}

// WithLogger sends what the stack logs to l instead of slog's default
// logger: the executor, the task runtime, the registry (contained panics),
// the hooks and the command policy. Sessions are the front end's: give
// them the logger with session.WithLogger.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithPermissions sets where the command policy and the hooks look for
// Claude Code settings and the user's home (tests point them at a
// directory of their own). Its Logger and DefaultCwd are the stack's.
func WithPermissions(o permissions.Options) Option {
	return func(opts *options) { opts.permissions = o }
}

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	return o
}
