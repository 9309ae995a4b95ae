package config

import (
	"maps"
	"math"
	"path"
	"slices"
	"strings"
)

// Defaults of the numeric keys of [Local] (SPEC.md §2.1).
const (
	DefaultTimeoutMs      = 120000
	DefaultMaxTimeoutMs   = 600000
	DefaultMaxOutputBytes = 64000
	DefaultMaxSpillBytes  = 67108864 // 64 MiB
	DefaultGraceMs        = 3000
)

// numeric lists the numeric keys of c in the order of the SPEC.md table,
// which is the order Validate reports them in.
func (c *Local) numeric() []struct {
	key string
	v   *float64
	def float64
} {
	return []struct {
		key string
		v   *float64
		def float64
	}{
		{"timeoutMs", &c.TimeoutMs, DefaultTimeoutMs},
		{"maxTimeoutMs", &c.MaxTimeoutMs, DefaultMaxTimeoutMs},
		{"maxOutputBytes", &c.MaxOutputBytes, DefaultMaxOutputBytes},
		{"maxSpillBytes", &c.MaxSpillBytes, DefaultMaxSpillBytes},
		{"graceMs", &c.GraceMs, DefaultGraceMs},
	}
}

// Validate reports the first value of c that no default can repair.
//
// The numeric keys come first, in table order: 0 means unset and is valid;
// a negative, NaN or infinite number fails with the exact text
// "bash-local: <key> must be a positive finite number".
//
// Then the environment: an env.set name must be non-empty and free of '='
// and NUL, and its value free of NUL, since neither can reach a process
// (the spawn would fail for every command); an env.scrub or env.passthrough
// entry must be a well-formed [path.Match] pattern, because a malformed one
// would match nothing and silently leave a credential in place.
func (c Local) Validate() error {
	for _, n := range c.numeric() {
		if v := *n.v; v != 0 && !(v > 0 && !math.IsInf(v, 1)) {
			return errPositive(n.key)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Env.Set)) {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return errSetName(name)
		}
		if strings.ContainsRune(c.Env.Set[name], 0) {
			return errSetValueNUL(name)
		}
	}
	switch c.Containment {
	case "", ContainAuto, ContainCgroup, ContainMarker:
	default:
		return errContainment(c.Containment)
	}
	for _, l := range []struct {
		key      string
		patterns []string
	}{{"env.passthrough", c.Env.Passthrough}, {"env.scrub", c.Env.Scrub}} {
		for _, p := range l.patterns {
			// Since Go 1.16 Match checks the whole pattern, matched or not.
			if _, err := path.Match(p, ""); err != nil {
				return errPattern(l.key, p)
			}
		}
	}
	return nil
}

// WithDefaults returns c with every zero numeric key set to its default and
// TimeoutMs clamped to MaxTimeoutMs (silently, SPEC.md §2.1). Cwd, SpillDir
// and Shell stay as they are: their empty value has a meaning that the
// executor resolves. The Env slices and map are shared with c, not copied.
// Call it on a config that passed [Local.Validate].
func (c Local) WithDefaults() Local {
	for _, n := range c.numeric() {
		if *n.v == 0 {
			*n.v = n.def
		}
	}
	c.TimeoutMs = min(c.TimeoutMs, c.MaxTimeoutMs)
	return c
}
