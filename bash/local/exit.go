package local

// Waiting for processes to exit: on Linux through pidfds, else by looking
// (exit_linux.go, exit_darwin.go).

import (
	"time"

	"github.com/dsh-go/dsh/internal/procfs"
)

// pollExit waits for pids to exit by looking every 10 ms: the fallback
// where a pidfd cannot be had. A zombie has exited.
func pollExit(pids []int, deadline time.Time) bool {
	for {
		left := pids[:0]
		for _, pid := range pids {
			if st, ok := procfs.ReadStat(pid); ok && !st.Dead() {
				left = append(left, pid)
			}
		}
		pids = left
		if len(pids) == 0 {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(min(10*time.Millisecond, time.Until(deadline)))
	}
}
