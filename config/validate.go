package config

import (
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/dsh-go/dsh/internal/num"
)

// Defaults of the numeric keys of [Local] (docs/spec.md §2.1).
const (
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxTimeout     = 10 * time.Minute
	DefaultMaxOutputBytes = 64000
	DefaultMaxSpillBytes  = 67108864 // 64 MiB
	// DefaultMaxSpillTotalBytes is 16 streams at maxSpillBytes.
	DefaultMaxSpillTotalBytes = 1 << 30 // 1 GiB
	DefaultGrace              = 3 * time.Second
	DefaultPids               = 4096
)

// containments are the values of Local.Containment.
var containments = []string{ContainAuto, ContainCgroup, ContainMarker, ContainGroup}

// numKey is one numeric key of a section: its name, where its value
// lives, its default and how the parser turns the file's number into it.
// A duration is held as the int64 it is, so that one list keeps the
// durations and sizes of a section in the order Validate reports them.
type numKey struct {
	key  string
	v    *int64
	def  int64
	conv func(float64) int64
}

// msKey is a duration key, written in milliseconds in a file.
func msKey(key string, v *time.Duration, def time.Duration) numKey {
	return numKey{key, (*int64)(v), int64(def), func(ms float64) int64 { return int64(num.Millis(ms)) }}
}

// byteKey is a size key (or a count that rounds up like one), written in
// bytes in a file.
func byteKey(key string, v *int64, def int64) numKey {
	return numKey{key, v, def, num.Bytes}
}

// numeric lists the numeric keys of c in the order of the docs/spec.md
// table, which is the order Validate reports them in.
func (c *Local) numeric() []numKey {
	return []numKey{
		msKey("timeoutMs", &c.Timeout, DefaultTimeout),
		msKey("maxTimeoutMs", &c.MaxTimeout, DefaultMaxTimeout),
		byteKey("maxOutputBytes", &c.MaxOutputBytes, DefaultMaxOutputBytes),
		byteKey("maxSpillBytes", &c.MaxSpillBytes, DefaultMaxSpillBytes),
		byteKey("maxSpillTotalBytes", &c.MaxSpillTotalBytes, DefaultMaxSpillTotalBytes),
		msKey("graceMs", &c.Grace, DefaultGrace),
		byteKey("limits.pids", &c.Limits.Pids, DefaultPids),
	}
}

// Validate reports the first value of c that no default can repair, as an
// *[Error] naming the key relative to the section ("graceMs must be a
// positive finite number"; the local executor adds its name).
//
// The numeric keys come first, in table order: 0 means unset and is valid;
// a negative number fails. Then keepHeadBytes, when set: it must be 0 or
// positive, and smaller than the effective maxOutputBytes ("keepHeadBytes
// must be smaller than maxOutputBytes", which a file reads with both keys
// rooted at local, as docs/spec.md §3.4a words it). Then
// limits.memoryBytes, when set: at least MinMemoryBytes. Then the
// environment: an env.set name must be non-empty and free of '=' and NUL,
// and its value free of NUL, since neither can reach a process (the spawn
// would fail for every command); an env.scrub or env.passthrough entry must be a
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
	if err := checkNumbers([]numKey{byteKey("limits.memoryBytes", &c.Limits.MemoryBytes, 0)}); err != nil {
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
// a negative number fails, with the message a file's gets.
func checkNumbers(keys []numKey) error {
	for _, n := range keys {
		if *n.v < 0 {
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
// against maxOutput (0: its default). A file's bytes were rounded up to
// whole ones by the parser: a head of 100.5 bytes is 101, as large as a
// maxOutputBytes of 101.
func checkKeepHead(keep *int64, maxOutput int64) error {
	if keep == nil {
		return nil
	}
	if *keep < 0 {
		return errNonNegative("keepHeadBytes", 0)
	}
	if maxOutput == 0 {
		maxOutput = DefaultMaxOutputBytes
	}
	if *keep >= maxOutput {
		e := keyErr("keepHeadBytes", 0, "must be smaller than")
		e.other = "maxOutputBytes"
		return e
	}
	return nil
}

// defaultKeepHead is a nil keepHeadBytes set to a quarter of maxOutput
// (whose default is applied), rounded down to a whole byte.
func defaultKeepHead(keep *int64, maxOutput int64) *int64 {
	if keep != nil {
		return keep
	}
	head := maxOutput / 4
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
// Timeout clamped to MaxTimeout (silently, docs/spec.md §2.1) and a nil
// KeepHeadBytes set to a quarter of MaxOutputBytes, rounded down to a whole
// byte. Cwd, SpillDir and Shell stay as they are: their empty value has a
// meaning that the executor resolves. The Env slices and map, and a set
// KeepHeadBytes, are shared with c, not copied. Call it on a config that
// passed [Local.Validate].
func (c Local) WithDefaults() Local {
	defaultNumbers(c.numeric())
	c.Timeout = min(c.Timeout, c.MaxTimeout)
	c.KeepHeadBytes = defaultKeepHead(c.KeepHeadBytes, c.MaxOutputBytes)
	c.Sandbox = c.Sandbox.WithDefaults()
	return c
}
