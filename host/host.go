// Package host composes dsh from its parts. [Standard] builds the whole
// stack from a config file in one call — executor, task runtime, tool
// registry with the bash and task tools, prompt — and is what the front
// ends (the MCP server, dsh run, an ACP agent) start from:
//
//	st, err := host.Standard(cfg.WithDefaults(), host.WithLogger(log))
//	if err != nil { … }
//	defer st.Close()
//	res := st.Tools.Execute(ctx, tool.Call{Name: "bash", Args: args, Session: owner})
//
// Underneath, a [Host] holds services and plugins: services (an executor,
// the task runtime, the tool registry, the prompt) are provided and
// removed, each under a typed [Key], and plugins that need them come and go
// with them. A [Plugin] names the services it needs. It is applied only
// once every one of them is provided; until then it is pending and
// registers nothing. When one of them is removed, the plugin is disposed:
// its own dispose function runs, then every tool and prompt section it
// added through its [Env] is removed. Providing the service again applies
// it again. [BashTool] is a plugin that needs the executor; [TaskTools] one
// that needs the task runtime. The tool packages know nothing of the host
// (it is above them); their plugins are made here.
//
// Host operations (Provide, Remove, Load, Unload, Close) are serialized, and
// a plugin's Apply and dispose run inside them, so a plugin never sees a
// service vanish while it wires itself in. For the same reason Apply and
// dispose must not call those operations themselves (they would wait for
// themselves, as sync.Once.Do would); Lookup, Service and Active are safe
// anywhere. An Env refuses adds once its plugin is disposed. Tool calls do
// not go through the host: they run on the registry concurrently with all
// of this, and a call already running when its tool is removed finishes.
//
// Decisions: a plugin uses tools and prompt sections only through its Env,
// and must list [Tools] and [Prompt] among its needs to use them, so the
// host can undo everything it did. Applying fails as a whole: if Apply
// returns an error or panics, what it had added is removed and the plugin
// stays pending (the error is returned and logged). Service keys are typed
// so that a plugin gets its service without an unchecked assertion; the
// host stores them by name, so two keys of one name are one service.
package host

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/internal/safe"
)

type loaded struct {
	plugin  Plugin
	active  bool
	env     *Env
	dispose func()
}

// Host holds services and plugins. The zero value is not usable; call New.
type Host struct {
	log *slog.Logger
	op  sync.Mutex // serializes the operations

	mu       sync.RWMutex // guards services, for lookups from any goroutine
	services map[string]any

	plugins []*loaded // load order; changed under op and mu, read under either
	closed  bool
}

// Option configures a Host or a [Standard] stack.
type Option func(*options)

type options struct {
	log         *slog.Logger
	hide        []string
	permissions permissions.Options
	keepSpills  bool
}

// WithKeptSpills keeps the spill files a session was told of after the
// session and the stack end (dsh run prints their paths and exits): the
// local executor leaves its private spill directory
// ([local.WithKeptSpill]) and the bash tool its sessions' files. For
// [Standard] only; its config's local.spillDir should be a base of the
// caller's own, which the caller sweeps.
func WithKeptSpills() Option { return func(o *options) { o.keepSpills = true } }

// WithHidden hides paths from sandboxed commands besides the configured
// ones (dsh serve's token file); for [Standard] only.
func WithHidden(paths ...string) Option {
	return func(o *options) { o.hide = append(o.hide, paths...) }
}

// WithLogger sends what the host logs to l instead of slog's default
// logger; for [Standard], also what the executor, the task runtime, the
// registry (contained panics) and the command policy log. Sessions are the
// front end's: give them the logger with session.WithLogger.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithPermissions sets where [Standard]'s command policy looks for Claude
// Code settings and the user's home (tests point them at a directory of
// their own). Its Logger and DefaultCwd are Standard's.
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

// New returns an empty host.
func New(opts ...Option) *Host {
	return &Host{log: newOptions(opts).log, services: make(map[string]any)}
}

func (h *Host) service(name string) any {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.services[name]
}

var errClosed = errors.New("host: closed")

func (h *Host) provide(name string, svc any) error {
	h.op.Lock()
	defer h.op.Unlock()
	if h.closed {
		return errClosed
	}
	if isNil(svc) {
		return fmt.Errorf("host: service %q is nil", name)
	}
	h.mu.Lock()
	_, dup := h.services[name]
	if !dup {
		h.services[name] = svc
	}
	h.mu.Unlock()
	if dup {
		return fmt.Errorf("host: service %q is already provided", name)
	}
	var errs []error
	for _, l := range h.plugins {
		if !l.active && l.plugin.needs(name) {
			errs = append(errs, h.apply(l))
		}
	}
	return errors.Join(errs...)
}

// Remove disposes every active plugin that needs the service k, in reverse
// load order, then removes the service. It reports whether it was there.
func (h *Host) Remove(k ServiceKey) bool {
	h.op.Lock()
	defer h.op.Unlock()
	name := k.Name()
	if h.service(name) == nil {
		return false
	}
	for _, l := range slices.Backward(h.plugins) {
		if l.active && l.plugin.needs(name) {
			h.dispose(l)
		}
	}
	h.mu.Lock()
	delete(h.services, name)
	h.mu.Unlock()
	return true
}

// Load adds a plugin and applies it if its needs are met; otherwise it
// stays pending. A plugin whose Apply fails stays loaded, pending.
func (h *Host) Load(p Plugin) error {
	h.op.Lock()
	defer h.op.Unlock()
	if h.closed {
		return errClosed
	}
	if p.Name == "" || p.Apply == nil {
		return errors.New("host: a plugin needs a name and an Apply function")
	}
	if slices.ContainsFunc(h.plugins, func(l *loaded) bool { return l.plugin.Name == p.Name }) {
		return fmt.Errorf("host: plugin %q is already loaded", p.Name)
	}
	l := &loaded{plugin: p}
	h.mu.Lock()
	h.plugins = append(h.plugins, l)
	h.mu.Unlock()
	return h.apply(l)
}

// Unload disposes the plugin if it is active and forgets it.
func (h *Host) Unload(name string) bool {
	h.op.Lock()
	defer h.op.Unlock()
	i := slices.IndexFunc(h.plugins, func(l *loaded) bool { return l.plugin.Name == name })
	if i < 0 {
		return false
	}
	if h.plugins[i].active {
		h.dispose(h.plugins[i])
	}
	h.mu.Lock()
	h.plugins = slices.Delete(h.plugins, i, i+1)
	h.mu.Unlock()
	return true
}

// Active reports whether the named plugin is loaded and applied.
func (h *Host) Active(name string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.ContainsFunc(h.plugins, func(l *loaded) bool { return l.plugin.Name == name && l.active })
}

// Close disposes every active plugin in reverse load order. Services stay
// with their owners, who close them.
func (h *Host) Close() {
	h.op.Lock()
	defer h.op.Unlock()
	h.closed = true
	for _, l := range slices.Backward(h.plugins) {
		if l.active {
			h.dispose(l)
		}
	}
}

// apply applies l if all its needs are met. Called with op held.
func (h *Host) apply(l *loaded) error {
	for _, need := range l.plugin.Needs {
		if h.service(need.Name()) == nil {
			return nil // pending
		}
	}
	env := &Env{h: h, plugin: l.plugin}
	var dispose func()
	var err error
	if perr := safe.Call(h.log, "plugin apply", func() { dispose, err = l.plugin.Apply(env) }, "plugin", l.plugin.Name); perr != nil {
		err = fmt.Errorf("panic: %w", perr)
	}
	if err != nil {
		env.undo(h.snapshot())
		err = fmt.Errorf("host: plugin %q: %w", l.plugin.Name, err)
		h.log.Error("plugin not applied", "err", err)
		return err
	}
	h.mu.Lock()
	l.active, l.env, l.dispose = true, env, dispose
	h.mu.Unlock()
	return nil
}

// dispose undoes l. Called with op held; a panicking dispose is contained.
func (h *Host) dispose(l *loaded) {
	if l.dispose != nil {
		_ = safe.Call(h.log, "plugin dispose", l.dispose, "plugin", l.plugin.Name)
	}
	l.env.undo(h.snapshot())
	h.mu.Lock()
	l.active, l.env, l.dispose = false, nil, nil
	h.mu.Unlock()
}

// isNil reports whether v is nil or a nil pointer, map, func or the like:
// a typed key lets a nil *tool.Registry through where any(nil) would not.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}

func (h *Host) snapshot() map[string]any {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return maps.Clone(h.services)
}
