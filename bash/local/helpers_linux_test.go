package local

import "os"

// platformHelper runs the test binary as the pid namespace helper of the
// sweep tests when asked to, and reports whether it did.
func platformHelper() bool {
	if base := os.Getenv(pidnsHelperEnv); base != "" {
		runPidnsHelper(base)
		return true
	}
	return false
}
