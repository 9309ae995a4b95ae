//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/config"
)

// Sandbox confines the commands of one executor. Make one with New; it is
// safe for concurrent use.
type Sandbox struct {
	mode    string // config.SandboxReadOnly or config.SandboxWorkspaceWrite
	backend string // config.BackendBwrap or config.BackendLandlock
	network bool
	// netMap is the network decided by name (netmap.go); nil without.
	netMap      *config.NetworkMap
	askTimeout  time.Duration
	askFallback string
	netAudit    func(owner string, r gateway.Record)
	helper      string // local.sandbox.helper
	regsOnce    sync.Once
	regs        func() []string // the tool registries' rules (netmap.go)
	protect     []string
	hide        []string // expanded, not resolved: an entry may appear later
	dshHide     []string // the entries of hide that are dsh's own (Options.Hide)
	roots       []string // writableRoots, resolved
	sockets     []string // allowSockets, expanded
	allowed     []string // allowSockets, expanded and resolved: not covered
	creds       creds    // whom a command's permission checks see
	home        string
	cwd         string
	dir         string
	private     string
	base        string   // the spill base, which holds private: resolved
	runDirs     []string // /run and the like (runDirs)
	// config is dsh's config file, and configDir its directory,
	// resolved; "" without one.
	config, configDir string
	envSet            []string
	shell             string
	env               []string
	unsetEnv          []string // SSH_AUTH_SOCK, unless its socket is allowed
	log               *slog.Logger

	bwrap    *bwrapBackend    // backend bwrap
	landlock *landlockBackend // backend landlock
	net      netMode
	// Why auto did not pick bwrap, or why network: false is not shared
	// per session; for Describe.
	notes []string

	seq atomic.Uint64 // numbers scopes and per-command directories

	spare spareNet // a session network made ahead (spare.go)
}

// New makes the sandbox cfg describes (its defaults applied; the mode is
// not off), probing the backends once: bwrap by running a sandboxed
// command, Landlock by its ABI. An error wrapping ErrUnavailable names
// what is missing.
func New(cfg config.Sandbox, o Options) (*Sandbox, error) {
	cfg = cfg.WithDefaults()
	home, _ := os.UserHomeDir()
	s := &Sandbox{
		mode: cfg.Mode, network: cfg.Network.HostNetwork(), netMap: cfg.Network.Filter(), protect: cfg.Protect, home: home,
		cwd: o.Cwd, dir: o.Dir, private: o.Private, envSet: o.EnvSet, shell: o.Shell, env: o.Env, log: o.Log,
		askTimeout: o.AskTimeout, askFallback: o.AskFallback, netAudit: o.NetAudit, helper: cfg.Helper,
	}
	netImplied := cfg.Network != nil && cfg.Network.Implied
	if s.log == nil {
		s.log = slog.Default()
	}
	if err := s.resolvePaths(cfg, o); err != nil {
		return nil, err
	}
	if err := s.makeFiles(); err != nil {
		return nil, err
	}
	if err := s.pickBackend(cfg); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.checkNetMap(netImplied); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// resolvePaths expands the config's paths and dsh's own; writable roots
// must exist.
func (s *Sandbox) resolvePaths(cfg config.Sandbox, o Options) error {
	for _, r := range cfg.WritableRoots {
		dir, err := existingDir(expand(r, s.home))
		if err != nil {
			return fmt.Errorf("%w: writableRoots: %w", ErrUnavailable, err)
		}
		s.roots = append(s.roots, dir)
	}
	for _, h := range cfg.Hide {
		s.hide = append(s.hide, expand(h, s.home))
	}
	for _, h := range o.Hide {
		s.dshHide = append(s.dshHide, expand(h, s.home))
	}
	s.hide = append(s.hide, s.dshHide...)
	for _, p := range cfg.AllowSockets {
		p = expand(p, s.home)
		s.sockets = append(s.sockets, p)
		s.allowed = append(s.allowed, p, resolved(p))
	}
	if s.private != "" {
		s.base = filepath.Dir(resolved(s.private))
	}
	if o.Config != "" {
		if abs, err := filepath.Abs(o.Config); err == nil {
			s.config, s.configDir = abs, resolved(filepath.Dir(abs))
		}
	}
	s.runDirs = runDirs()
	s.creds = ownCreds()
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock == "" || !slices.Contains(s.sockets, filepath.Clean(sock)) {
		s.unsetEnv = append(s.unsetEnv, "SSH_AUTH_SOCK")
	}
	return nil
}

// makeFiles makes what bwrap mounts over hidden and missing protected
// entries: an empty file and an empty directory, both read-only.
func (s *Sandbox) makeFiles() error {
	if err := os.MkdirAll(s.emptyDir(), 0o555); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	f, err := os.OpenFile(s.emptyFile(), os.O_CREATE|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return f.Close()
}

func (s *Sandbox) emptyDir() string  { return filepath.Join(s.dir, "empty.d") }
func (s *Sandbox) emptyFile() string { return filepath.Join(s.dir, "empty") }

// pickBackend probes what cfg asks for: bwrap, landlock, or auto (bwrap
// when it works here, else landlock).
func (s *Sandbox) pickBackend(cfg config.Sandbox) error {
	var bwrapErr error
	if cfg.Backend != config.BackendLandlock {
		s.bwrap, bwrapErr = newBwrap(s)
		if bwrapErr == nil {
			s.backend = config.BackendBwrap
			s.net = s.bwrap.netMode(s)
			return nil
		}
		if cfg.Backend == config.BackendBwrap {
			return noBackend{fmt.Errorf("%w: %w", ErrUnavailable, bwrapErr)}
		}
		s.notes = append(s.notes, "bwrap not used: "+bwrapErr.Error())
	}
	var err error
	s.landlock, err = newLandlock(s, cfg.Helper)
	if err != nil {
		if bwrapErr != nil {
			return noBackend{fmt.Errorf("%w: %w and %w", ErrUnavailable, bwrapErr, err)}
		}
		return noBackend{fmt.Errorf("%w: %w", ErrUnavailable, err)}
	}
	s.backend = config.BackendLandlock
	s.net = netHost
	if !s.network {
		s.net = netBlocked
	}
	return nil
}

// Close releases what the sandbox holds (the starter). The scopes are
// their owners' to close.
func (s *Sandbox) Close() {
	s.spare.close()
	if s.bwrap != nil {
		s.bwrap.close()
	}
}

// Mode is "read-only" or "workspace-write".
func (s *Sandbox) Mode() string { return s.mode }

// Network reports whether commands have the host's network.
func (s *Sandbox) Network() bool { return s.network }

// Backend is the backend in use: "bwrap" or "landlock".
func (s *Sandbox) Backend() string { return s.backend }

// Scope is what the commands of one owner (a session) share: the
// directory holding their /tmp and spill files, and their network
// namespace. A nil *Scope stands for a command on its own: a /tmp of its
// own, a network namespace of its own.
type Scope struct {
	s         *Sandbox
	dir       string // <Dir>/s-<n>
	workspace string
	net       *sessionNet
	gw        *netGateway // with a network map

	mu     sync.Mutex
	closed bool
}

// NewScope makes the scope of an owner whose workspace (its cwd, or the
// executor's when it has none) is workspace.
func (s *Sandbox) NewScope(owner, workspace string) (*Scope, error) {
	ws, err := s.workspace(workspace)
	if err != nil {
		return nil, err
	}
	sc := &Scope{s: s, dir: filepath.Join(s.dir, "s-"+strconv.FormatUint(s.seq.Add(1), 10)), workspace: ws}
	for _, d := range []string{sc.dir, sc.TmpDir(), sc.SpillDir()} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = os.RemoveAll(sc.dir)
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if sc.net = s.spare.take(s); sc.net == nil {
		sc.net, err = s.makeNet()
	}
	if err != nil {
		_ = os.RemoveAll(sc.dir)
		return nil, err
	}
	if sc.gw, err = s.newNetGateway(sc, owner); err != nil {
		sc.net.close()
		_ = os.RemoveAll(sc.dir)
		return nil, err
	}
	return sc, nil
}

// workspace resolves a workspace: it must be an existing directory.
func (s *Sandbox) workspace(ws string) (string, error) {
	if ws == "" {
		ws = s.cwd
	}
	if ws == "" {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return "", fmt.Errorf("sandbox: workspace: %w", err)
		}
	}
	dir, err := existingDir(ws)
	if err != nil {
		return "", fmt.Errorf("sandbox: workspace: %w", err)
	}
	return dir, nil
}

// TmpDir is the scope's /tmp in workspace-write mode.
func (sc *Scope) TmpDir() string { return filepath.Join(sc.dir, "tmp") }

// SpillDir is where the scope's spill files go: the sandbox shows it,
// read-only, at the same path.
func (sc *Scope) SpillDir() string { return filepath.Join(sc.dir, "out") }

// Close ends the scope once its commands are gone: its network namespace
// and its directory go. Commands started afterwards fail.
func (sc *Scope) Close() error {
	sc.mu.Lock()
	if sc.closed {
		sc.mu.Unlock()
		return nil
	}
	sc.closed = true
	sc.mu.Unlock()
	sc.gw.close()
	sc.net.close()
	return os.RemoveAll(sc.dir)
}

var errScopeClosed = errors.New("sandbox: the session has ended")

func (sc *Scope) live() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.closed {
		return errScopeClosed
	}
	return nil
}

// cmd is the process that starts c: path with argv, env and dir, c's
// stdio, extra files from fd 3 on, and, like every command, a session
// and process group of its own, the parent-death signal and c's cgroup.
func (c Command) cmd(path string, argv, env []string, dir string, extra []*os.File) *exec.Cmd {
	cmd := &exec.Cmd{
		Path:        path,
		Args:        argv,
		Env:         env,
		Dir:         dir,
		Stdout:      c.Stdout,
		Stderr:      c.Stderr,
		ExtraFiles:  extra,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	if c.Stdin != nil { // a nil *os.File in the interface would not read /dev/null
		cmd.Stdin = c.Stdin
	}
	if c.CgroupFD >= 0 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = c.CgroupFD
	}
	return cmd
}

// Start starts c in the sandbox.
func (s *Sandbox) Start(c Command) (*Started, error) {
	if c.Scope != nil {
		if err := c.Scope.live(); err != nil {
			return nil, err
		}
	}
	if err := s.rootsExist(c); err != nil {
		return nil, err
	}
	if s.bwrap != nil {
		return s.bwrap.start(s, c)
	}
	return s.landlock.start(s, c)
}

// rootsExist fails a command whose workspace or writable roots went away
// since they were resolved, with one line: bwrap would fail with its own
// message, Landlock would quietly grant less.
func (s *Sandbox) rootsExist(c Command) error {
	ws, err := s.workspaceOf(c)
	if err != nil {
		return err
	}
	for _, r := range s.writable(ws) {
		if info, err := os.Stat(r); err != nil || !info.IsDir() {
			what := "writableRoots"
			if r == ws {
				what = "workspace"
			}
			return fmt.Errorf("sandbox: %s: %s is no longer a directory; nothing was run", what, r)
		}
	}
	return nil
}

// workspaceOf is c's workspace: the probe's, its scope's, else the
// executor's.
func (s *Sandbox) workspaceOf(c Command) (string, error) {
	if c.workspace != "" {
		return c.workspace, nil
	}
	if c.Scope != nil {
		return c.Scope.workspace, nil
	}
	return s.workspace("")
}

// writable lists the writable roots of a command whose workspace is ws:
// none in read-only mode. A workspace that is / is not one: it would make
// the whole filesystem writable, ~/.bashrc included (an MCP client may
// start dsh in /), and cover the sandbox's own /dev, /proc and /tmp.
func (s *Sandbox) writable(ws string) []string {
	if s.mode != config.SandboxWorkspaceWrite {
		return nil
	}
	if ws == "/" {
		return s.roots
	}
	return append([]string{ws}, s.roots...)
}

// commandEnv is env with what the sandbox changes: TMPDIR and the caches
// in tmp (unless env.set sets them), SSH_AUTH_SOCK gone unless its socket
// is allowed.
func (s *Sandbox) commandEnv(env []string, tmp string) []string {
	set := map[string]string{
		"TMPDIR":           tmp,
		"XDG_CACHE_HOME":   filepath.Join(tmp, ".cache"),
		"GOCACHE":          filepath.Join(tmp, ".cache", "go-build"),
		"npm_config_cache": filepath.Join(tmp, ".cache", "npm"),
		"PIP_CACHE_DIR":    filepath.Join(tmp, ".cache", "pip"),
	}
	for _, name := range s.envSet {
		delete(set, name)
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok || slices.Contains(s.unsetEnv, name) {
			continue
		}
		out = append(out, kv)
	}
	for _, name := range []string{"TMPDIR", "XDG_CACHE_HOME", "GOCACHE", "npm_config_cache", "PIP_CACHE_DIR"} {
		if v, ok := set[name]; ok {
			out = append(out, name+"="+v)
		}
	}
	return out
}

// hidden lists the hide entries that exist now, resolved, with what they
// are.
func (s *Sandbox) hidden() []hiddenPath {
	var out []hiddenPath
	for _, h := range s.hide {
		info, err := os.Lstat(h) // most entries are missing: one call
		if err != nil {
			continue
		}
		if r := resolved(h); r != h || info.Mode()&os.ModeSymlink != 0 {
			if info, err = os.Stat(r); err != nil {
				continue
			}
			h = r
		}
		out = append(out, hiddenPath{path: h, dir: info.IsDir()})
	}
	return out
}

type hiddenPath struct {
	path string
	dir  bool
}
