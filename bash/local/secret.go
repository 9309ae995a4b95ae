package local

// Secret reports whether the credential scrub (docs/spec.md §2.4) drops a
// variable by its own rules, its name or its value, before env.scrub and
// env.passthrough: what dsh holds in memory only rather than in its
// environment (package guard).
func Secret(name, value string) bool {
	return credentialName(name) || secretValue(value)
}
