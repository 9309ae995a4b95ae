package config

import "time"

// Local is the configuration of the local executor (docs/spec.md §2.1). The zero
// value of every field means "use the default"; a negative number is
// refused by [Local.Validate]. KeepHeadBytes is the exception: 0 is one of
// its values, so nil is its default. Durations and sizes hold what a file
// gives in milliseconds and bytes, rounded up to whole ones by [Parse].
type Local struct {
	// Cwd is the default working directory; empty means the process cwd.
	Cwd string `yaml:"cwd,omitempty"`
	// Timeout is the default foreground timeout (default 2 minutes).
	Timeout time.Duration `yaml:"timeoutMs,omitempty"`
	// MaxTimeout caps per-call timeouts and the default (default 10
	// minutes).
	MaxTimeout time.Duration `yaml:"maxTimeoutMs,omitempty"`
	// MaxOutputBytes is the tail of each stream kept in memory (default 64000).
	MaxOutputBytes int64 `yaml:"maxOutputBytes,omitempty"`
	// KeepHeadBytes is the start of each foreground stream kept besides
	// its tail, out of MaxOutputBytes (docs/spec.md §3.4a). nil means
	// ⌊MaxOutputBytes/4⌋; 0 keeps the tail only. It must be smaller than
	// MaxOutputBytes.
	KeepHeadBytes *int64 `yaml:"keepHeadBytes,omitempty"`
	// MaxSpillBytes caps each stream's spill file (default 64 MiB).
	MaxSpillBytes int64 `yaml:"maxSpillBytes,omitempty"`
	// MaxSpillTotalBytes caps the spill files of all commands together
	// (default 1 GiB): past it the files of finished and read streams go,
	// oldest first, then new output is cut (docs/spec.md §2.5).
	MaxSpillTotalBytes int64 `yaml:"maxSpillTotalBytes,omitempty"`
	// Grace is the SIGTERM → SIGKILL grace (default 3 s).
	Grace time.Duration `yaml:"graceMs,omitempty"`
	// SpillDir is the directory under which the executor creates its private
	// spill directory; empty means the OS temp dir.
	SpillDir string `yaml:"spillDir,omitempty"`
	// Shell is the shell binary; empty means "bash" looked up in PATH.
	Shell string `yaml:"shell,omitempty"`
	Env   Env    `yaml:"env,omitempty"`
	// KeepDetached keeps the processes a foreground command leaves running
	// when it exits by itself (by default they are killed with it); they
	// then live until the executor closes.
	KeepDetached bool `yaml:"keepDetached,omitempty"`
	// Containment is how the executor finds a command's processes: "auto"
	// (the default: a cgroup v2 per command where one can be made, else
	// the marker; on macOS the group), "cgroup" (fail when none can be
	// made), "marker" or "group" (the process group and its descendants,
	// what every platform can do).
	Containment string `yaml:"containment,omitempty"`
	// Sandbox confines commands (docs/spec.md §11): on wherever a backend
	// works in a config file (mode auto), off in a Local built in Go.
	Sandbox Sandbox `yaml:"sandbox,omitempty"`
	// Limits bound what one command may use, so that no command exhausts
	// what dsh itself needs (docs/spec.md §2.6).
	Limits Limits `yaml:"limits,omitempty"`
}

// Limits are the per-command resource limits. A zero number means the
// default: 4096 processes, no memory limit.
type Limits struct {
	// Pids is the most processes (threads count) one command may have at
	// once: its cgroup's pids.max where the pids controller can be used.
	Pids int64 `yaml:"pids,omitempty"`
	// MemoryBytes, when set, is its cgroup's memory.max where the memory
	// controller can be used; at least MinMemoryBytes.
	MemoryBytes int64 `yaml:"memoryBytes,omitempty"`
}

// MinMemoryBytes is the smallest limits.memoryBytes: below it not even
// the shell starts, and every command would die of the limit.
const MinMemoryBytes = 1 << 20

// Containment modes.
const (
	ContainAuto   = "auto"
	ContainCgroup = "cgroup"
	ContainMarker = "marker"
	ContainGroup  = "group"
)

// Env shapes the environment of every command (docs/spec.md §2.4).
type Env struct {
	// Passthrough names variables kept even when the credential scrub
	// matches them.
	Passthrough []string `yaml:"passthrough,omitempty"`
	// Scrub names extra variables, or glob patterns, to drop.
	Scrub []string `yaml:"scrub,omitempty"`
	// Set is applied to every command over the scrubbed environment.
	Set map[string]string `yaml:"set,omitempty"`
}
