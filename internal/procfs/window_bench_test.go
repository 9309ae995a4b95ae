//go:build linux

package procfs

import "testing"

// BenchmarkWindowReads: what a window costs, read by read, against the
// full table it saves.
//
//	go test -run '^$' -bench WindowReads ./internal/procfs/
func BenchmarkWindowReads(b *testing.B) {
	b.Run("forked", func(b *testing.B) {
		for b.Loop() {
			forked()
		}
	})
	b.Run("loadavg", func(b *testing.B) {
		for b.Loop() {
			loadavg()
		}
	})
	b.Run("Pids", func(b *testing.B) {
		for b.Loop() {
			_, _ = Pids()
		}
	})
	b.Run("Table", func(b *testing.B) {
		for b.Loop() {
			_, _ = Table()
		}
	})
}
