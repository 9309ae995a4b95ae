package config

import (
	"path/filepath"
	"slices"
	"strings"
)

// Sandbox is the local executor's sandbox (docs/spec.md §11), the section
// local.sandbox. In a [File] an empty mode is auto (the sandbox is on
// wherever a backend works: [File.WithDefaults]); in a [Local] given to an
// executor directly it is off, since a Go program that builds an executor
// itself chooses what it wants.
//
// Protect and Hide distinguish nil (the default list) from empty (none);
// AllowUnsandboxed is a pointer because its default is true.
type Sandbox struct {
	// Mode is "auto" (a config file's default: workspace-write where a
	// backend works here, else unsandboxed with a warning), "off",
	// "read-only" or "workspace-write".
	Mode string `yaml:"mode,omitempty"`
	// Backend is "auto" (the default: bwrap where it works, else
	// landlock), "bwrap" or "landlock".
	Backend string `yaml:"backend,omitempty"`
	// WritableRoots are writable besides the workspace, in
	// workspace-write mode: absolute paths, or paths starting with "~/".
	WritableRoots []string `yaml:"writableRoots,omitempty"`
	// Network is false (each session a network namespace of its own with
	// only lo), true (the host's network) or a map (connections decided
	// by name); nil is unset (see [Network]).
	Network *Network `yaml:"network,omitempty"`
	// AllowUnsandboxed offers dangerouslyDisableSandbox, always an ask.
	// nil means true.
	AllowUnsandboxed *bool `yaml:"allowUnsandboxed,omitempty"`
	// AllowSockets are the host's Unix sockets kept reachable under the
	// empty /run: absolute paths, or paths starting with "~/".
	AllowSockets []string `yaml:"allowSockets,omitempty"`
	// Protect names entries of each writable root (relative paths, such
	// as ".git") that stay read-only. nil means DefaultProtect. An entry ending in "/"
	// is a directory: when it is missing, an empty read-only directory
	// is mounted in its place, as for the default directories.
	Protect []string `yaml:"protect,omitempty"`
	// Hide lists paths that read as empty. nil means DefaultHide.
	Hide []string `yaml:"hide,omitempty"`
	// Helper, for the landlock backend, is a program that restricts
	// itself and executes the shell, instead of a thread of dsh.
	Helper string `yaml:"helper,omitempty"`
}

// Sandbox modes and backends.
const (
	SandboxOff            = "off"
	SandboxAuto           = "auto"
	SandboxReadOnly       = "read-only"
	SandboxWorkspaceWrite = "workspace-write"

	BackendAuto     = "auto"
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
)

var (
	sandboxModes    = []string{SandboxAuto, SandboxOff, SandboxReadOnly, SandboxWorkspaceWrite}
	sandboxBackends = []string{BackendAuto, BackendBwrap, BackendLandlock}
)

// DefaultProtect is what stays read-only in each writable root: the
// configuration of version control, of agents and editors, and of
// shells, which a command could otherwise turn against the user's next
// session.
var DefaultProtect = []string{".git", ".claude", ".codex", ".dsh", ".bashrc", ".bash_profile",
	".profile", ".zshrc", ".zprofile", ".gitconfig", ".gitmodules", ".envrc", ".mcp.json",
	".vscode", ".idea"}

// DefaultHide is what reads as empty: credentials and browser profiles.
var DefaultHide = []string{"~/.ssh", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube",
	"~/.docker", "~/.gnupg", "~/.netrc", "~/.git-credentials", "~/.config/gh", "~/.npmrc",
	"~/.pypirc", "~/.claude/.credentials.json", "~/.codex/auth.json", "~/.pgpass",
	"~/.my.cnf", "~/.vault-token", "~/.cargo/credentials.toml", "~/.terraform.d",
	"~/.local/share/keyrings", "~/.password-store", "~/.mozilla",
	"~/.config/google-chrome", "~/.config/chromium"}

// On reports whether a sandbox is configured: any mode but off (auto
// included, which may find no backend: see [Sandbox.Resolved]).
func (s Sandbox) On() bool { return s.Mode != "" && s.Mode != SandboxOff }

// Resolved returns s as it applies: mode auto becomes workspace-write
// when a backend works here (available), else off; other modes stay.
func (s Sandbox) Resolved(available bool) Sandbox {
	switch {
	case s.Mode != SandboxAuto:
	case available:
		s.Mode = SandboxWorkspaceWrite
	default:
		s.Mode = SandboxOff
	}
	return s
}

// Unsandboxed reports whether dangerouslyDisableSandbox is offered: true
// unless allowUnsandboxed is false.
func (s Sandbox) Unsandboxed() bool { return s.AllowUnsandboxed == nil || *s.AllowUnsandboxed }

// WithDefaults returns s with its defaults spelled out: mode off (a
// File's WithDefaults makes an empty mode auto first), backend
// auto, allowUnsandboxed true, the default protect and hide lists. The
// lists are shared with s, not copied.
func (s Sandbox) WithDefaults() Sandbox {
	if s.Mode == "" {
		s.Mode = SandboxOff
	}
	if s.Backend == "" {
		s.Backend = BackendAuto
	}
	if s.AllowUnsandboxed == nil {
		t := true
		s.AllowUnsandboxed = &t
	}
	if s.Network == nil {
		s.Network = &Network{}
	} else if m := s.Network.Map; m != nil {
		d := m.WithDefaults()
		s.Network = &Network{Map: &d, Implied: s.Network.Implied}
	}
	if s.Protect == nil {
		s.Protect = DefaultProtect
	}
	if s.Hide == nil {
		s.Hide = DefaultHide
	}
	return s
}

// Validate reports the first value of s that cannot be used, naming its
// key relative to the section of the local executor ("sandbox.mode: …").
// Paths must be absolute or start with "~/" (they must not depend on
// where dsh was started); whether they exist is the executor's business,
// when it starts. A protect entry is a relative path inside a writable
// root (".git", ".claude/commands"), without "." or ".." steps.
func (s Sandbox) Validate() error {
	if s.Mode != "" && !slices.Contains(sandboxModes, s.Mode) {
		return errOneOf("sandbox.mode", s.Mode, 0, sandboxModes)
	}
	if s.Backend != "" && !slices.Contains(sandboxBackends, s.Backend) {
		return errOneOf("sandbox.backend", s.Backend, 0, sandboxBackends)
	}
	for _, l := range []struct {
		key   string
		paths []string
	}{{"sandbox.writableRoots", s.WritableRoots}, {"sandbox.allowSockets", s.AllowSockets}, {"sandbox.hide", s.Hide}} {
		for _, p := range l.paths {
			if !rootedPath(p) {
				return keyErr(l.key, 0, "entry %q must be an absolute path or start with ~/", p)
			}
		}
	}
	for _, r := range s.WritableRoots {
		if filepath.Clean(r) == "/" {
			return keyErr("sandbox.writableRoots", 0, "entry %q would make the whole filesystem writable: use mode: off instead", r)
		}
	}
	for _, p := range s.Protect {
		if !protectName(p) {
			return keyErr("sandbox.protect", 0, "entry %q must be a name inside a writable root, such as .git", p)
		}
	}
	if m := s.Network.Filter(); m != nil {
		if err := m.validate(); err != nil {
			return err
		}
	}
	if s.Helper != "" && !filepath.IsAbs(s.Helper) {
		return keyErr("sandbox.helper", 0, "%q must be an absolute path", s.Helper)
	}
	return nil
}

// rootedPath reports whether p is absolute or starts with "~/".
func rootedPath(p string) bool {
	return filepath.IsAbs(p) || strings.HasPrefix(p, "~/") && len(p) > 2
}

// protectName reports whether p names an entry inside a root: a relative
// path without "." or ".." steps, maybe ending in "/" ("name/").
func protectName(p string) bool {
	name := strings.TrimSuffix(p, "/")
	if name == "" || filepath.IsAbs(name) || strings.ContainsRune(name, 0) {
		return false
	}
	for step := range strings.SplitSeq(name, "/") {
		if step == "" || step == "." || step == ".." {
			return false
		}
	}
	return true
}

// sandboxYAML is how a Sandbox is written as YAML: a list that is set,
// even to an empty one, is written out, since an empty protect or hide
// list means none where an absent one means the default.
type sandboxYAML struct {
	Mode             string    `yaml:"mode,omitempty"`
	Backend          string    `yaml:"backend,omitempty"`
	WritableRoots    *[]string `yaml:"writableRoots,omitempty"`
	Network          *Network  `yaml:"network,omitempty"`
	AllowUnsandboxed *bool     `yaml:"allowUnsandboxed,omitempty"`
	AllowSockets     *[]string `yaml:"allowSockets,omitempty"`
	Protect          *[]string `yaml:"protect,omitempty"`
	Hide             *[]string `yaml:"hide,omitempty"`
	Helper           string    `yaml:"helper,omitempty"`
}

// MarshalYAML writes s with its set lists, empty ones included.
func (s Sandbox) MarshalYAML() (any, error) {
	list := func(l []string) *[]string {
		if l == nil {
			return nil
		}
		return &l
	}
	return sandboxYAML{
		Mode: s.Mode, Backend: s.Backend, WritableRoots: list(s.WritableRoots), Network: s.Network,
		AllowUnsandboxed: s.AllowUnsandboxed, AllowSockets: list(s.AllowSockets),
		Protect: list(s.Protect), Hide: list(s.Hide), Helper: s.Helper,
	}, nil
}

// IsZero reports whether s is the zero Sandbox, for YAML's omitempty: an
// empty list that is set makes it non-zero.
func (s Sandbox) IsZero() bool {
	return s.Mode == "" && s.Backend == "" && s.WritableRoots == nil && s.Network == nil &&
		s.AllowUnsandboxed == nil && s.AllowSockets == nil && s.Protect == nil && s.Hide == nil && s.Helper == ""
}
