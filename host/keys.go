package host

import (
	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// Key names a service of type T. Two keys with the same name are the same
// service, so give a service of your own a name of your own.
type Key[T any] struct{ name string }

// NewKey returns the key of the service called name.
func NewKey[T any](name string) Key[T] { return Key[T]{name} }

// Name is the service's name.
func (k Key[T]) Name() string { return k.name }

// ServiceKey is any [Key], as plugins list them in Needs and Uses.
type ServiceKey interface{ Name() string }

// The services of a standard stack.
var (
	// Executor runs commands.
	Executor = NewKey[bash.Executor]("executor")
	// Tasks is the task runtime.
	Tasks = NewKey[*tasks.Service]("tasks")
	// Tools is the tool registry.
	Tools = NewKey[*tool.Registry]("tools")
	// Prompt is the prompt registry.
	Prompt = NewKey[*prompt.Registry]("prompt")
)

// Provide adds svc to h as the service k, and applies every pending plugin
// whose needs are now all met, in load order. Errors of those plugins are
// returned joined; the service stays provided. Providing a name twice is
// an error: remove it first.
func Provide[T any](h *Host, k Key[T], svc T) error { return h.provide(k.name, svc) }

// Lookup returns the service k of h, if it is provided.
func Lookup[T any](h *Host, k Key[T]) (T, bool) {
	v, ok := h.service(k.name).(T)
	return v, ok
}

// Service returns the service k as a plugin sees it: only a service the
// plugin declared (in Needs or Uses) and that is provided now. A plugin
// sees only what it declared, so removing a needed service always disposes
// every plugin that relied on it.
func Service[T any](env *Env, k Key[T]) (T, bool) {
	v, ok := env.service(k.name).(T)
	return v, ok
}
