package local

import "time"

// awaitExit waits until every pid has exited or deadline passes, by
// looking (pollExit): macOS has no pidfd.
func awaitExit(pids []int, deadline time.Time) bool { return pollExit(pids, deadline) }
