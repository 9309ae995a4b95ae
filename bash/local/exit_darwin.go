package local

import "time"

// awaitExit waits until every pid has exited or deadline passes, by
// looking (pollExit): macOS has no pidfd.
func awaitExit(pids []int, deadline time.Time) bool { return pollExit(pids, deadline) }

// awaitChildExit returns at once: macOS has no pidfd, so the caller's
// Wait blocks a thread while the child runs.
func awaitChildExit(int) {}
