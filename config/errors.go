package config

import "fmt"

// The error texts of this package. The positive-finite text is exact
// (SPEC.md §2.1): it never carries a line number, so a Go caller and a YAML
// file get the same message.

const prefix = "bash-local: "

func errPositive(key string) error {
	return fmt.Errorf("%s%s must be a positive finite number", prefix, key)
}

func errUnknownKey(key string, line int) error {
	return fmt.Errorf("%sunknown key %q (line %d)", prefix, key, line)
}

func errDuplicateKey(key string, line int) error {
	return fmt.Errorf("%sduplicate key %q (line %d)", prefix, key, line)
}

func errKeyNotString(scope string, line int) error {
	return fmt.Errorf("%s%s keys must be strings (line %d)", prefix, scope, line)
}

func errMergeKey(line int) error {
	return fmt.Errorf("%smerge keys (<<) are not supported (line %d)", prefix, line)
}

// errType says what key must be: "a number", "a string", "a mapping", "a list
// of strings", "a map of strings".
func errType(key, want string, line int) error {
	return fmt.Errorf("%s%s must be %s (line %d)", prefix, key, want, line)
}

func errSyntax(err error) error {
	return fmt.Errorf("%s%w", prefix, err)
}

func errManyDocuments(line int) error {
	return fmt.Errorf("%sconfig must be a single YAML document (second one at line %d)", prefix, line)
}

func errSetName(name string) error {
	return fmt.Errorf("%senv.set name %q is not a valid variable name", prefix, name)
}

func errSetValueNUL(name string) error {
	return fmt.Errorf("%senv.set value of %q contains a NUL byte", prefix, name)
}

func errPattern(key, pattern string) error {
	return fmt.Errorf("%s%s pattern %q is malformed", prefix, key, pattern)
}

func errContainment(v string) error {
	return fmt.Errorf("%scontainment %q must be one of %q, %q, %q", prefix, v, ContainAuto, ContainCgroup, ContainMarker)
}
