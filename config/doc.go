// Package config is dsh's configuration file: its types, their defaults,
// their validation and the one parser that reads it (docs/config.md lists
// every key).
//
//	f, err := config.Parse(data) // strict: unknown keys, wrong types, 0 and negatives refused
//	if err != nil {
//		return err // "local.timeoutMsec: unknown key (line 3); did you mean local.timeoutMs?"
//	}
//	st, err := host.Standard(f.WithDefaults())
//
// [File] holds the whole file: the executor, its sections [Local] and [SSH]
// (the latter only with executor ssh, and then with a host), the
// tools to load, and the sections [Bash] and [Tasks]. Every package that
// is configured takes its section from here, so one walker decides what a
// file may say, and its errors name keys the way the user wrote them: the
// key's path from the top of the file and its line.
//
// A zero Go value means "use the default": a Local whose Timeout is 0
// runs commands with [DefaultTimeout]. WithDefaults spells the defaults
// out, and Validate refuses what no default can repair (a negative
// duration or size, a malformed scrub pattern). In a file, by contrast, an
// explicit 0 is a mistake rather than a request for the default, which is
// asked for by leaving the key out (or writing null). The exceptions are
// local.keepHeadBytes and bash.yieldAfterMs, where 0 is a value of its own
// (the tail only; never yield): in Go they are pointers, and nil is their
// default.
//
// The Go types are Go's: durations are [time.Duration] and sizes int64,
// named for what they hold (Timeout, with the file's key timeoutMs in its
// yaml tag). A file writes them as numbers of milliseconds (seconds for a
// hook's timeout, as Claude Code does) and bytes; [Parse] rounds a
// fraction up to a whole millisecond or byte and saturates what is beyond
// the Go type, so a parsed File holds what the executors use. A File
// written with the yaml package reads back equal through Parse.
//
// [Local.Validate], [SSH.Validate] and [Tasks.Validate] name keys relative to their
// section ("graceMs must be a positive finite number"), for a Go caller who
// built the section by hand; the local executor and the task tools put
// their names in front ("bash-local: graceMs must be …", docs/spec.md
// §2.1). [Parse] and [File.Validate] root the key at the top of the file
// and add its line when it is known. Every error is an *[Error].
//
// In a file every count, size and duration must be a positive finite
// number (keepHeadBytes and yieldAfterMs may also be 0); package
// internal/num holds that rule and the conversions, for the model's
// arguments as well.
package config
