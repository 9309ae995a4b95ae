//go:build !linux

package sandbox

// Where there is no backend (macOS and every platform but Linux), New
// refuses whatever the config asks, so a configured sandbox fails dsh's
// start-up (exit 2) instead of running commands unsandboxed (docs/spec.md
// §11). No Sandbox or Scope value exists here; their methods are declared
// so that the executor, which is the same on every platform, compiles, and
// they say so if ever reached.

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
)

// Sandbox confines the commands of one executor; see New.
type Sandbox struct{}

// Scope is what the commands of one owner share; see New.
type Scope struct{}

// errNoBackend is the reason New gives here.
var errNoBackend = fmt.Errorf("no sandbox backend on %s: bubblewrap and Landlock are Linux only; set local.sandbox.mode: off to run commands unsandboxed", runtime.GOOS)

// New fails: no backend can enforce a sandbox on this platform.
func New(cfg config.Sandbox, o Options) (*Sandbox, error) {
	return nil, noBackend{fmt.Errorf("%w: %w", ErrUnavailable, errNoBackend)}
}

var errNoSandbox = errors.New("sandbox: none on " + runtime.GOOS)

// NewScope fails: there is no sandbox here.
func (s *Sandbox) NewScope(owner, workspace string) (*Scope, error) { return nil, errNoSandbox }

// EnterNet has nothing to do: there is no scope here.
func (sc *Scope) EnterNet(*bash.NetCall) func() { return func() {} }

// Start fails: there is no sandbox here.
func (s *Sandbox) Start(c Command) (*Started, error) { return nil, errNoSandbox }

// Close has nothing to release.
func (s *Sandbox) Close() {}

// Describe says there is no sandbox here.
func (s *Sandbox) Describe() []string { return []string{errNoBackend.Error()} }

// SpillDir is empty: there is no scope here.
func (sc *Scope) SpillDir() string { return "" }

// Close has nothing to release.
func (sc *Scope) Close() error { return nil }

// HelperMain returns at once: there is no Landlock helper here.
func HelperMain() {}

// NetworkMap is false: there is no sandbox here.
func (s *Sandbox) NetworkMap() bool { return false }

// Mode is empty: there is no sandbox here.
func (s *Sandbox) Mode() string { return "" }

// Backend is empty: there is no sandbox here.
func (s *Sandbox) Backend() string { return "" }

// Prepare does nothing: no sandbox is made here.
func (s *Sandbox) Prepare() {}

// Prepared does nothing: no sandbox is made here.
func (s *Sandbox) Prepared() {}
