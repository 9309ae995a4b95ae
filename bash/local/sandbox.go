package local

// The sandbox (docs/spec.md §11): the launcher that starts a command in
// it, and the scopes that keep a session's /tmp, network namespace and
// spill files together until the session ends.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/capture"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
)

// sandboxLauncher starts sandboxed commands through the sandbox, and the
// others (dangerouslyDisableSandbox, with consent) as the shellLauncher
// does.
type sandboxLauncher struct{ sb *sandbox.Sandbox }

func (s sandboxLauncher) launch(l launchSpec) (*launched, error) {
	if !l.sandboxed {
		return shellLauncher{}.launch(l)
	}
	st, err := s.sb.Start(sandbox.Command{
		Scope: l.scope, Shell: l.shell, Args: shellArgs(l), Dir: l.dir, Env: l.env,
		Stdin: l.stdin, Stdout: l.stdout, Stderr: l.stderr, Script: l.script, TTY: l.tty,
		CgroupFD: l.cgroupFD, SpillDir: l.spillDir,
	})
	if err != nil {
		return nil, err
	}
	return &launched{cmd: st.Cmd, spare: st.Spare, status: st.Status, reaped: st.Reaped}, nil
}

// scopeEntry is an owner's scope and the runs started in it, which end
// with it.
type scopeEntry struct {
	sc    *sandbox.Scope
	spill *capture.SpillDir
	runs  map[*run]struct{}
	ended bool
}

// sandboxDirName is the sandbox's directory in the executor's private
// spill directory.
const sandboxDirName = "sandbox"

// sandboxDir is where the sandbox keeps its files, the sessions' scopes
// and the spill directory of sandboxed commands without an owner.
func (e *Executor) sandboxDir() string {
	priv, _ := ensure(e.spill) // made by newSandbox already
	return filepath.Join(priv, sandboxDirName)
}

// newSandbox makes the sandbox cfg asks for, hiding what o names of dsh's
// own; nil when its mode is off, or auto where no backend works: then
// commands run unsandboxed, the executor logs one warning and keeps why
// ([Executor.SandboxUnavailable]). Its files go in the executor's private
// spill directory, made now.
func newSandbox(cfg config.Local, e *Executor, o options) (*sandbox.Sandbox, error) {
	if !cfg.Sandbox.On() {
		return nil, nil
	}
	auto := cfg.Sandbox.Mode == config.SandboxAuto
	cfg.Sandbox = cfg.Sandbox.Resolved(true)
	priv, err := ensure(e.spill)
	if err != nil {
		return nil, fmt.Errorf("%s: sandbox: %w", Name, err)
	}
	dir := filepath.Join(priv, sandboxDirName)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: sandbox: %w", Name, err)
	}
	var set []string
	for name := range cfg.Env.Set {
		set = append(set, name)
	}
	shell, _ := lookShell(e.shell)
	sb, err := sandbox.New(cfg.Sandbox, sandbox.Options{
		Cwd: cfg.Cwd, Dir: dir, Private: priv, Hide: o.hide, Config: o.config, EnvSet: set, Shell: shell, Env: e.env, Log: e.log,
		AskTimeout: o.net.AskTimeout, AskFallback: o.net.AskFallback, NetAudit: o.net.Audit,
	})
	if auto && errors.Is(err, sandbox.ErrNoBackend) {
		_ = os.RemoveAll(dir) // the empty file and directory New made
		e.unavailable = err
		e.log.Warn(NotSandboxedWarning, "why", err.Error())
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	return sb, nil
}

// NotSandboxedWarning is what the executor logs at start when mode auto
// found no sandbox backend: every command runs with the user's authority.
const NotSandboxedWarning = "commands are NOT sandboxed: no sandbox backend works here; install bubblewrap, or set local.sandbox.mode: off to silence this"

// SandboxUnavailable is why commands run unsandboxed under mode auto (no
// backend works here: an error wrapping sandbox.ErrNoBackend), nil
// when they are sandboxed or the mode is off. Like Sandbox it waits for
// the start-up.
func (e *Executor) SandboxUnavailable() error {
	e.started()
	return e.unavailable
}

// sandboxFor decides where spec runs: in the sandbox or not, in which
// scope, with which spill directory. The scope of an owner is made at its
// first sandboxed command and ends with it.
func (e *Executor) sandboxFor(spec bash.Spec) (entry *scopeEntry, spill spillDir, err error) {
	if e.sandbox == nil || spec.Unsandboxed {
		return nil, e.spill, nil
	}
	if spec.Owner == nil {
		return nil, e.commonSpill, nil
	}
	e.mu.Lock()
	entry = e.scopes[spec.Owner]
	e.mu.Unlock()
	if entry != nil {
		return entry, entry.spill, nil
	}
	sc, err := e.sandbox.NewScope(spec.Owner.ID(), spec.Owner.Cwd())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", Name, err)
	}
	scopeSpill := capture.SpillDirAt(sc.SpillDir())
	if e.keptSpill != nil {
		scopeSpill = e.keptSpill // not removed with the scope
	}
	fresh := &scopeEntry{sc: sc, spill: scopeSpill, runs: make(map[*run]struct{})}
	e.mu.Lock()
	if entry = e.scopes[spec.Owner]; entry == nil {
		entry = fresh
		e.scopes[spec.Owner] = entry
	}
	e.mu.Unlock()
	if entry != fresh {
		_ = sc.Close() // another call made one first
		return entry, entry.spill, nil
	}
	owner := spec.Owner
	owner.OnEnd(func() { e.endScope(owner) }) // at once if it has ended
	return entry, entry.spill, nil
}

// endScope ends an owner's scope: its runs are killed and awaited, then
// the scope goes (its /tmp, its spill files, its network namespace).
func (e *Executor) endScope(owner bash.Owner) {
	e.mu.Lock()
	entry := e.scopes[owner]
	delete(e.scopes, owner)
	var runs []*run
	if entry != nil {
		entry.ended = true
		for r := range entry.runs {
			runs = append(runs, r)
		}
	}
	e.mu.Unlock()
	if entry == nil {
		return
	}
	for _, r := range runs {
		r.Kill()
	}
	for _, r := range runs {
		<-r.Done
	}
	if err := entry.sc.Close(); err != nil {
		e.log.Warn("bash-local: removing a session's sandbox directory", "err", err)
	}
}

// closeScopes ends the scopes left when the executor closes, after its
// runs are gone.
func (e *Executor) closeScopes() {
	e.mu.Lock()
	var owners []bash.Owner
	for o := range e.scopes {
		owners = append(owners, o)
	}
	e.mu.Unlock()
	for _, o := range owners {
		e.endScope(o)
	}
	if e.sandbox != nil {
		e.sandbox.Close()
	}
}

// Applied is cfg (this executor's sandbox section) as it applies here:
// mode auto resolved by whether a backend works, and a network map the
// sandbox cannot do (the one a config implied) turned to network: false.
func (e *Executor) Applied(cfg config.Sandbox) config.Sandbox {
	sb := e.Sandbox()
	cfg = cfg.Resolved(sb != nil)
	if cfg.Network.Filter() != nil && (sb == nil || !sb.NetworkMap()) {
		cfg.Network = &config.Network{}
	}
	return cfg
}

// Sandbox is the executor's sandbox, nil when commands run unsandboxed.
// Like Containment it waits for the start-up, which sets it.
func (e *Executor) Sandbox() *sandbox.Sandbox {
	e.started()
	return e.sandbox
}

// ensure makes a spill directory now and returns it: a sandbox must show
// it to commands before they spill. A spill directory that cannot (a
// test's) is refused.
func ensure(d spillDir) (string, error) {
	sd, ok := d.(interface{ Ensure() (string, error) })
	if !ok {
		return "", fmt.Errorf("%s: a sandbox needs a spill directory it can make in advance", Name)
	}
	return sd.Ensure()
}
