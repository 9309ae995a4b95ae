package config

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/internal/num"
)

// Defaults of the numeric keys of [Local] (docs/spec.md §2.1).
const (
	DefaultTimeoutMs      = 120000
	DefaultMaxTimeoutMs   = 600000
	DefaultMaxOutputBytes = 64000
	DefaultMaxSpillBytes  = 67108864 // 64 MiB
	// DefaultMaxSpillTotalBytes is 16 streams at maxSpillBytes.
	DefaultMaxSpillTotalBytes = 1 << 30 // 1 GiB
	DefaultGraceMs            = 3000
	DefaultPids               = 4096
)

// containments are the values of Local.Containment.
var containments = []string{ContainAuto, ContainCgroup, ContainMarker, ContainGroup}

// numKey is one numeric key of a section: its name, where its value
// lives and its default.
type numKey struct {
	key string
	v   *float64
	def float64
}

// numeric lists the numeric keys of c in the order of the docs/spec.md
// table, which is the order Validate reports them in.
func (c *Local) numeric() []numKey {
	return []numKey{
		{"timeoutMs", &c.TimeoutMs, DefaultTimeoutMs},
		{"maxTimeoutMs", &c.MaxTimeoutMs, DefaultMaxTimeoutMs},
		{"maxOutputBytes", &c.MaxOutputBytes, DefaultMaxOutputBytes},
		{"maxSpillBytes", &c.MaxSpillBytes, DefaultMaxSpillBytes},
		{"maxSpillTotalBytes", &c.MaxSpillTotalBytes, DefaultMaxSpillTotalBytes},
		{"graceMs", &c.GraceMs, DefaultGraceMs},
		{"limits.pids", &c.Limits.Pids, DefaultPids},
	}
}

// Validate reports the first value of c that no default can repair, as an
// *[Error] naming the key relative to the section ("graceMs must be a
// positive finite number"; the local executor adds its name).
//
// The numeric keys come first, in table order: 0 means unset and is valid;
// a negative, NaN or infinite number fails. Then keepHeadBytes, when set:
// it must be 0 or positive and finite, and, in whole bytes, smaller than
// the effective maxOutputBytes ("keepHeadBytes must be smaller than
// maxOutputBytes", which a file reads with both keys rooted at local, as
// docs/spec.md §3.4a words it). Then limits.memoryBytes, when set: at
// least MinMemoryBytes. Then the environment: an
// env.set name must be non-empty and free of '=' and NUL, and its value
// free of NUL, since neither can reach a process (the spawn would fail for
// every command); an env.scrub or env.passthrough entry must be a
// well-formed [path.Match] pattern, because a malformed one would match
// nothing and silently leave a credential in place. Then the containment,
// last the sandbox ([Sandbox.Validate]).
func (c Local) Validate() error {
	if err := checkNumbers(c.numeric()); err != nil {
		return err
	}
	if err := checkKeepHead(c.KeepHeadBytes, c.MaxOutputBytes); err != nil {
		return err
	}
	if err := checkNumbers([]numKey{{"limits.memoryBytes", &c.Limits.MemoryBytes, 0}}); err != nil {
		return err // no default: 0 is none
	}
	if m := c.Limits.MemoryBytes; m != 0 && m < MinMemoryBytes {
		return keyErr("limits.memoryBytes", 0, "must be at least %d", MinMemoryBytes)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Env.Set)) {
		if err := checkSet("env.set", name, c.Env.Set[name], 0); err != nil {
			return err
		}
	}
	for _, l := range []struct {
		key      string
		patterns []string
	}{{"env.passthrough", c.Env.Passthrough}, {"env.scrub", c.Env.Scrub}} {
		for _, p := range l.patterns {
			if err := checkPattern(l.key, p, 0); err != nil {
				return err
			}
		}
	}
	if c.Containment != "" && !slices.Contains(containments, c.Containment) {
		return errOneOf("containment", c.Containment, 0, containments)
	}
	return c.Sandbox.Validate()
}

// countKey is one count key of a section: its name, where its value
// lives and its default.
type countKey struct {
	key string
	v   *int
	def int
}

// checkCounts checks count keys in order: 0 means unset and is valid; a
// negative count fails.
func checkCounts(keys []countKey) error {
	for _, n := range keys {
		if *n.v < 0 {
			return errType(n.key, "a positive integer", 0)
		}
	}
	return nil
}

// defaultCounts sets every count key that is 0 to its default.
func defaultCounts(keys []countKey) {
	for _, n := range keys {
		if *n.v == 0 {
			*n.v = n.def
		}
	}
}

// checkNumbers checks numeric keys in order: 0 means unset and is valid;
// a negative, NaN or infinite number fails.
func checkNumbers(keys []numKey) error {
	for _, n := range keys {
		if v := *n.v; v != 0 && !num.PositiveFinite(v) {
			return errPositive(n.key, 0)
		}
	}
	return nil
}

// defaultNumbers sets every numeric key that is 0 to its default.
func defaultNumbers(keys []numKey) {
	for _, n := range keys {
		if *n.v == 0 {
			*n.v = n.def
		}
	}
}

// checkKeepHead checks keepHeadBytes, when set, against its own rule and
// against maxOutput (0: its default). The bytes are compared as the
// executor uses them, rounded up to whole bytes: a head of 100.5 bytes is
// 101, as large as a maxOutputBytes of 101.
func checkKeepHead(keep *float64, maxOutput float64) error {
	if keep == nil {
		return nil
	}
	v := *keep
	if !num.NonNegativeFinite(v) {
		return errNonNegative("keepHeadBytes", 0)
	}
	if maxOutput == 0 {
		maxOutput = DefaultMaxOutputBytes
	}
	if num.Bytes(v) >= num.Bytes(maxOutput) {
		e := keyErr("keepHeadBytes", 0, "must be smaller than")
		e.other = "maxOutputBytes"
		return e
	}
	return nil
}

// defaultKeepHead is a nil keepHeadBytes set to a quarter of maxOutput
// (whose default is applied), rounded down to a whole byte.
func defaultKeepHead(keep *float64, maxOutput float64) *float64 {
	if keep != nil {
		return keep
	}
	head := float64(num.Bytes(maxOutput) / 4)
	return &head
}

// checkSet checks one entry of the env.set at key.
func checkSet(key, name, value string, line int) *Error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return keyErr(key, line, "name %q is not a valid variable name", name)
	}
	if strings.ContainsRune(value, 0) {
		return keyErr(key, line, "value of %q contains a NUL byte", name)
	}
	return nil
}

// checkPattern checks an env.scrub or env.passthrough entry.
func checkPattern(key, p string, line int) *Error {
	// Since Go 1.16 Match checks the whole pattern, matched or not.
	if _, err := path.Match(p, ""); err != nil {
		return keyErr(key, line, "pattern %q is malformed", p)
	}
	return nil
}

// WithDefaults returns c with every zero numeric key set to its default,
// TimeoutMs clamped to MaxTimeoutMs (silently, docs/spec.md §2.1) and a nil
// KeepHeadBytes set to a quarter of MaxOutputBytes, rounded down to a whole
// byte. Cwd, SpillDir and Shell stay as they are: their empty value has a
// meaning that the executor resolves. The Env slices and map, and a set
// KeepHeadBytes, are shared with c, not copied. Call it on a config that
// passed [Local.Validate].
func (c Local) WithDefaults() Local {
	defaultNumbers(c.numeric())
	c.TimeoutMs = min(c.TimeoutMs, c.MaxTimeoutMs)
	c.KeepHeadBytes = defaultKeepHead(c.KeepHeadBytes, c.MaxOutputBytes)
	c.Sandbox = c.Sandbox.WithDefaults()
	return c
}
