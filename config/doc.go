// Package config is dsh's YAML configuration: its types, their defaults and
// their validation. [Local] is the section of the local executor (SPEC.md
// §2.1).
//
// A zero Go value means "use the default": a [Local] whose TimeoutMs is 0 runs
// commands with [DefaultTimeoutMs]. [Local.WithDefaults] fills the zeros in,
// and [Local.Validate] refuses what no default can repair (a negative, NaN or
// infinite number).
//
// The YAML decoder is strict. [ParseLocal] and [DecodeLocal] walk the document
// themselves and refuse an unknown or duplicate key, a value of the wrong type,
// and an explicit number that is not positive and finite. That includes 0: in a
// file, 0 is a mistake rather than a request for the default, which is asked
// for by leaving the key out (or writing null). Errors start with the section
// name, name the key, and give the line where that helps:
//
//	bash-local: unknown key "env.scrubs" (line 7)
//	bash-local: graceMs must be a positive finite number
//
// [Millis], [WholeMillis] and [Bytes] turn the float64 numbers of the config
// into the integers an executor uses, rounding up and saturating.
package config
