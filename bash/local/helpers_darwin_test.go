package local

// platformHelper reports false: the pid namespace helper of the sweep
// tests is Linux's.
func platformHelper() bool { return false }
