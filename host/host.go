// Package host composes dsh from its parts: services (an executor, the task
// runtime, the tool registry, the prompt) are provided and removed, and
// plugins that need them come and go with them.
//
// A [Plugin] names the services it needs. It is applied only once every one
// of them is provided; until then it is pending and registers nothing. When
// one of them is removed, the plugin is disposed: its own dispose function
// runs, then every tool and prompt section it added through its [Env] is
// removed. Providing the service again applies it again. [BashTool] is a
// plugin that needs the executor; [TaskTools] one that needs the task
// runtime. The tool packages know nothing of the host (it is above them);
// their plugins are made here.
//
// Host operations (Provide, Remove, Load, Unload, Close) are serialized, and
// a plugin's Apply and dispose run inside them, so a plugin never sees a
// service vanish while it wires itself in. For the same reason Apply and
// dispose must not call those operations themselves (they would wait for
// themselves, as sync.Once.Do would); Service and Active are safe anywhere.
// An Env refuses adds once its plugin is disposed. Tool calls do not go through the
// host: they run on the registry concurrently with all of this, and a call
// already running when its tool is removed finishes.
//
// Decisions: a plugin uses tools and prompt sections only through its Env,
// and must list [Tools] and [Prompt] among its needs to use them, so the
// host can undo everything it did. Applying fails as a whole: if Apply
// returns an error, what it had added is removed and the plugin stays
// pending (the error is returned and logged). Providing a name twice is an
// error; remove it first.
package host

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/tool"
)

// Well-known service names.
const (
	// Executor is a bash.Executor.
	Executor = "executor"
	// Tasks is the task runtime.
	Tasks = "tasks"
	// Tools is the *tool.Registry.
	Tools = "tools"
	// Prompt is the *prompt.Registry.
	Prompt = "prompt"
)

// Plugin is a unit of composition.
type Plugin struct {
	Name string
	// Needs lists the services the plugin cannot work without, Tools and
	// Prompt included when it adds tools or sections.
	Needs []string
	// Uses lists optional services: the plugin may look them up through
	// its Env at any time, while it is applied (the bash tool looks up the
	// task runtime on each background call); their coming and going does
	// not apply or dispose it.
	Uses []string
	// Apply wires the plugin in. dispose, if not nil, runs when the
	// plugin is disposed, before its tools and sections are removed.
	Apply func(env *Env) (dispose func(), err error)
}

// Env is what a plugin sees while it is applied.
type Env struct {
	h     *Host
	needs []string
	uses  []string

	mu       sync.Mutex
	closed   bool // disposed (or failed to apply): adds are refused
	tools    []string
	sections []string
}

// Service returns a service the plugin declared (in Needs or Uses) and
// that is provided now, or nil. A plugin sees only what it declared, so
// removing a needed service always disposes every plugin that relied on it.
func (e *Env) Service(name string) any {
	if !slices.Contains(e.needs, name) && !slices.Contains(e.uses, name) {
		return nil
	}
	svc, _ := e.h.Service(name)
	return svc
}

// needed returns a service only if the plugin needs it (not merely uses
// it): what a plugin adds must go away when that service goes.
func (e *Env) needed(name string) any {
	if !slices.Contains(e.needs, name) {
		return nil
	}
	return e.Service(name)
}

var errEnvClosed = errors.New("host: the plugin has been disposed")

// AddTool registers def in the Tools service, which the plugin must need;
// it is removed when the plugin is disposed.
func (e *Env) AddTool(def tool.Definition) error {
	reg, ok := e.needed(Tools).(*tool.Registry)
	if !ok {
		return fmt.Errorf("host: no %q service among the plugin's needs to add tool %q to", Tools, def.Name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errEnvClosed
	}
	if err := reg.Register(def); err != nil {
		return err
	}
	e.tools = append(e.tools, def.Name)
	return nil
}

// AddSection adds s to the Prompt service, which the plugin must need; it
// is removed when the plugin is disposed.
func (e *Env) AddSection(s prompt.Section) error {
	reg, ok := e.needed(Prompt).(*prompt.Registry)
	if !ok {
		return fmt.Errorf("host: no %q service among the plugin's needs to add section %q to", Prompt, s.Name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errEnvClosed
	}
	if err := reg.Add(s); err != nil {
		return err
	}
	e.sections = append(e.sections, s.Name)
	return nil
}

// undo removes what the plugin added, from the registries it added them to
// (even when those services are being removed themselves), and closes the
// Env to further adds.
func (e *Env) undo(services map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if reg, ok := services[Tools].(*tool.Registry); ok {
		for _, name := range e.tools {
			reg.Remove(name)
		}
	}
	if reg, ok := services[Prompt].(*prompt.Registry); ok {
		for _, name := range e.sections {
			reg.Remove(name)
		}
	}
	e.tools, e.sections = nil, nil
}

type loaded struct {
	plugin  Plugin
	active  bool
	env     *Env
	dispose func()
}

// Host holds services and plugins. The zero value is not usable; call New.
type Host struct {
	op sync.Mutex // serializes the operations

	mu       sync.RWMutex // guards services, for Service from any goroutine
	services map[string]any

	plugins []*loaded // load order; changed under op and mu, read under either
	closed  bool
}

// New returns an empty host.
func New() *Host { return &Host{services: make(map[string]any)} }

// Service returns the named service.
func (h *Host) Service(name string) (any, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	svc, ok := h.services[name]
	return svc, ok
}

var errClosed = errors.New("host: closed")

// Provide adds a service and applies every pending plugin whose needs are
// now all met, in load order. Errors of those plugins are returned joined;
// the service stays provided.
func (h *Host) Provide(name string, svc any) error {
	h.op.Lock()
	defer h.op.Unlock()
	if h.closed {
		return errClosed
	}
	if svc == nil {
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
		if !l.active && slices.Contains(l.plugin.Needs, name) {
			errs = append(errs, h.apply(l))
		}
	}
	return errors.Join(errs...)
}

// Remove disposes every active plugin that needs the service, in reverse
// load order, then removes the service. It reports whether it was there.
func (h *Host) Remove(name string) bool {
	h.op.Lock()
	defer h.op.Unlock()
	if _, ok := h.Service(name); !ok {
		return false
	}
	for _, l := range slices.Backward(h.plugins) {
		if l.active && slices.Contains(l.plugin.Needs, name) {
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
func (h *Host) apply(l *loaded) (err error) {
	for _, need := range l.plugin.Needs {
		if _, ok := h.Service(need); !ok {
			return nil // pending
		}
	}
	env := &Env{h: h, needs: l.plugin.Needs, uses: l.plugin.Uses}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
		if err != nil {
			env.undo(h.snapshot())
			err = fmt.Errorf("host: plugin %q: %w", l.plugin.Name, err)
			slog.Error("plugin not applied", "err", err)
		}
	}()
	dispose, err := l.plugin.Apply(env)
	if err != nil {
		return err
	}
	h.mu.Lock()
	l.active, l.env, l.dispose = true, env, dispose
	h.mu.Unlock()
	return nil
}

// dispose undoes l. Called with op held; a panicking dispose is contained.
func (h *Host) dispose(l *loaded) {
	defer func() {
		l.env.undo(h.snapshot())
		h.mu.Lock()
		l.active, l.env, l.dispose = false, nil, nil
		h.mu.Unlock()
	}()
	if l.dispose != nil {
		func() {
			defer func() {
				if v := recover(); v != nil {
					slog.Error("plugin dispose panicked", "plugin", l.plugin.Name, "panic", v)
				}
			}()
			l.dispose()
		}()
	}
}

func (h *Host) snapshot() map[string]any {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make(map[string]any, len(h.services))
	for k, v := range h.services {
		out[k] = v
	}
	return out
}
