package host

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/tool"
)

// Plugin is a unit of composition.
type Plugin struct {
	Name string
	// Needs lists the services the plugin cannot work without, Tools and
	// Prompt included when it adds tools or sections.
	Needs []ServiceKey
	// Uses lists optional services: the plugin may look them up through
	// its Env at any time, while it is applied (the bash tool looks up the
	// task runtime on each background call); their coming and going does
	// not apply or dispose it.
	Uses []ServiceKey
	// Apply wires the plugin in. dispose, if not nil, runs when the
	// plugin is disposed, before its tools and sections are removed.
	Apply func(env *Env) (dispose func(), err error)
}

// needs reports whether p needs the named service.
func (p Plugin) needs(name string) bool { return hasName(p.Needs, name) }

func hasName(keys []ServiceKey, name string) bool {
	return slices.ContainsFunc(keys, func(k ServiceKey) bool { return k.Name() == name })
}

// Env is what a plugin sees while it is applied.
type Env struct {
	h      *Host
	plugin Plugin

	mu       sync.Mutex
	closed   bool // disposed (or failed to apply): adds are refused
	tools    []string
	sections []string
}

// service returns a declared service, or nil (see [Service]).
func (e *Env) service(name string) any {
	if !e.plugin.needs(name) && !hasName(e.plugin.Uses, name) {
		return nil
	}
	return e.h.service(name)
}

var errEnvClosed = errors.New("host: the plugin has been disposed")

// AddTool registers def in the Tools service, which the plugin must need;
// it is removed when the plugin is disposed.
func (e *Env) AddTool(def tool.Definition) error {
	reg, ok := e.needed(Tools.name).(*tool.Registry)
	if !ok {
		return fmt.Errorf("host: no %q service among the plugin's needs to add tool %q to", Tools.name, def.Name)
	}
	return e.add(&e.tools, def.Name, func() error { return reg.Register(def) })
}

// AddSection adds s to the Prompt service, which the plugin must need; it
// is removed when the plugin is disposed.
func (e *Env) AddSection(s prompt.Section) error {
	reg, ok := e.needed(Prompt.name).(*prompt.Registry)
	if !ok {
		return fmt.Errorf("host: no %q service among the plugin's needs to add section %q to", Prompt.name, s.Name)
	}
	return e.add(&e.sections, s.Name, func() error { return reg.Add(s) })
}

// needed returns a service only if the plugin needs it (not merely uses
// it): what a plugin adds must go away when that service goes.
func (e *Env) needed(name string) any {
	if !e.plugin.needs(name) {
		return nil
	}
	return e.h.service(name)
}

// add runs register unless the Env is closed, and remembers name in list.
func (e *Env) add(list *[]string, name string, register func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errEnvClosed
	}
	if err := register(); err != nil {
		return err
	}
	*list = append(*list, name)
	return nil
}

// undo removes what the plugin added, from the registries it added them to
// (even when those services are being removed themselves), and closes the
// Env to further adds.
func (e *Env) undo(services map[string]any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if reg, ok := services[Tools.name].(*tool.Registry); ok {
		for _, name := range e.tools {
			reg.Remove(name)
		}
	}
	if reg, ok := services[Prompt.name].(*prompt.Registry); ok {
		for _, name := range e.sections {
			reg.Remove(name)
		}
	}
	e.tools, e.sections = nil, nil
}
