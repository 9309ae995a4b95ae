//go:build linux

package local

import (
	"log/slog"
	"os"
	"os/exec"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
)

// BenchmarkRunParts times, one by one, the pieces a Run of `true` does
// besides the spawn, for docs/performance.md's breakdown:
//
//	go test -run '^$' -bench RunParts -count 5 ./bash/local/
func BenchmarkRunParts(b *testing.B) {
	e := benchExecutor(b, config.Local{})
	e.started()
	spec, _ := e.Resolve(bash.Request{Command: "true"})
	b.Run("Resolve", func(b *testing.B) {
		for b.Loop() {
			_, _ = e.Resolve(bash.Request{Command: "true"})
		}
	})
	b.Run("checkWorkdir+lookShell", func(b *testing.B) {
		for b.Loop() {
			_ = checkWorkdir(spec.Workdir)
			_, _ = lookShell(e.shell)
		}
	})
	b.Run("openPipes", func(b *testing.B) {
		for b.Loop() {
			p, err := openPipes(spec)
			if err != nil {
				b.Fatal(err)
			}
			closeAll(p.child)
			closeAll(p.parent)
		}
	})
	b.Run("collectors", func(b *testing.B) {
		for b.Loop() {
			out, errc := e.collectors(bash.Spec{}, true, e.spill)
			out.Close()
			errc.Close()
		}
	})
	if e.contain.mode == config.ContainCgroup {
		b.Run("cgroup-mkdir+rmdir", func(b *testing.B) {
			for b.Loop() {
				cc, err := e.contain.command()
				if err != nil {
					b.Fatal(err)
				}
				cc.release()
			}
		})
		b.Run("cgroupPopulated", func(b *testing.B) {
			for b.Loop() {
				_, _ = cgroupPopulated(e.contain.base)
			}
		})
	}
	b.Run("procfs.Start", func(b *testing.B) {
		for b.Loop() {
			procfs.Start(os.Getpid())
		}
	})
	b.Run("procfs.NewMark", func(b *testing.B) {
		for b.Loop() {
			procfs.NewMark()
		}
	})
	b.Run("scan/window", func(b *testing.B) {
		m := procfs.NewMark()
		for b.Loop() {
			_, _ = scanMembers(0, 0, 0, true, true, "x", nil, namespaces{}, window{first: os.Getpid(), mark: m})
		}
	})
	b.Run("scan/narrow", func(b *testing.B) {
		// A window opened just before a child: what a short command's scan
		// reads on a machine that forks little meanwhile.
		m := procfs.NewMark()
		child := exec.Command("true")
		if err := child.Run(); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			_, _ = scanMembers(0, 0, 0, true, true, "x", nil, namespaces{}, window{first: child.Process.Pid, mark: m})
		}
	})
	b.Run("scan/whole", func(b *testing.B) {
		for b.Loop() {
			_, _ = scanMembers(0, 0, 0, true, true, "x", nil, namespaces{}, window{})
		}
	})
}

// BenchmarkStartParts times what New does before an executor can run a
// command (the cold start of dsh mcp waits for it):
//
//	go test -run '^$' -bench StartParts -count 5 ./bash/local/
func BenchmarkStartParts(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	b.Run("New+Close", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			e, err := New(config.Local{SpillDir: dir}, WithLogger(log))
			if err != nil {
				b.Fatal(err)
			}
			_ = e.Close()
		}
	})
	b.Run("sweepLeftovers", func(b *testing.B) {
		for b.Loop() {
			sweepLeftovers(log)
		}
	})
	b.Run("newContainment", func(b *testing.B) {
		for b.Loop() {
			c, err := newContainment("")
			if err != nil {
				b.Fatal(err)
			}
			c.close()
		}
	})
	b.Run("sweepSpillDirs", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			sweepSpillDirs(log, dir)
		}
	})
}
