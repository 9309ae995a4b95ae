//go:build linux

package local

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/session"
)

// BenchmarkSandboxTrue compares a sandboxed Run of `true` (a session's,
// so joining its network namespace) with what it stands on (docs/spec.md
// §11): for bwrap, a bare `bwrap … bash -c true` (goal: within 1.3×),
// once minimal (the sandbox's namespaces, a read-only root, fresh /dev,
// /proc and /tmp) and once with the very mounts the sandbox makes
// (FloorCommand: what dsh adds, the starter, the cgroup, the namespace
// join and its Go side); for landlock, an unsandboxed Run (reported). Each
// iteration does one of each, alternating, so the machine's drift hits
// both alike; the metrics split the pair.
//
//	go test -run '^$' -bench SandboxTrue -count 6 ./bash/local/
func BenchmarkSandboxTrue(b *testing.B) {
	for _, backend := range backends[:2] {
		b.Run(backend, func(b *testing.B) {
			cfg := config.Local{Cwd: b.TempDir(), SpillDir: b.TempDir(),
				Sandbox: config.Sandbox{Mode: config.SandboxWorkspaceWrite, Backend: backend}}
			e, err := New(cfg)
			if errors.Is(err, sandbox.ErrUnavailable) {
				b.Skipf("SKIP-REASON: %v", err)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			owner := session.New("bench", cfg.Cwd)
			defer owner.End()
			run := func() error { return runTrue(e, owner) }
			if backend == config.BackendLandlock {
				plain := benchExecutor(b, config.Local{})
				benchPair(b, func() error { return runTrue(plain, nil) }, run)
				return
			}
			b.Run("minimal", func(b *testing.B) { benchPair(b, bareBwrap, run) })
			floor := e.Sandbox().FloorCommand(cfg.Cwd)
			b.Run("same-mounts", func(b *testing.B) {
				benchPair(b, func() error { return exec.Command(floor[0], floor[1:]...).Run() }, run)
			})
		})
	}
}

// bareBwrap is bwrap with the sandbox's namespaces and a read-only root,
// running bash -c true: the floor of a bwrap sandbox.
func bareBwrap() error {
	return exec.Command("bwrap", "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc",
		"--unshare-net", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--tmpfs", "/tmp", "--", "bash", "-c", "true").Run()
}

func runTrue(e *Executor, owner bash.Owner) error {
	spec, err := e.Resolve(bash.Request{Command: "true", Owner: owner})
	if err != nil {
		return err
	}
	r, err := bash.Run(context.Background(), e, spec)
	if err == nil && (r.ExitCode == nil || *r.ExitCode != 0) {
		err = errors.New("true failed: " + r.Stderr.Text)
	}
	return err
}

// benchPair times bare and run alternately and reports each and their
// ratio.
func benchPair(b *testing.B, bare, run func() error) {
	if err := run(); err != nil { // the session's scope, made once
		b.Fatal(err)
	}
	tb, tr := pairTimes(b, bare, run)
	b.ReportMetric(float64(tb.Nanoseconds())/float64(b.N), "bare-ns/op")
	b.ReportMetric(float64(tr.Nanoseconds())/float64(b.N), "Run-ns/op")
	b.ReportMetric(float64(tr)/float64(tb), "Run/bare")
}

// pairTimes runs x and y alternately, b.N times each, and returns the
// time each took in all.
func pairTimes(b *testing.B, x, y func() error) (tx, ty time.Duration) {
	for b.Loop() {
		t0 := time.Now()
		if err := x(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := y(); err != nil {
			b.Fatal(err)
		}
		tx, ty = tx+t1.Sub(t0), ty+time.Since(t1)
	}
	return tx, ty
}

// BenchmarkSandboxProbe is what a sandbox adds to an executor's start:
// New with a workspace-write sandbox, probes included (bwrap runs a
// sandboxed `exit 7`; landlock reads its ABI), against New without one,
// alternating. It is paid once per executor, never per call.
//
//	go test -run '^$' -bench SandboxProbe -count 5 ./bash/local/
func BenchmarkSandboxProbe(b *testing.B) {
	for _, backend := range backends[:2] {
		b.Run(backend, func(b *testing.B) {
			sandboxed := config.Local{Cwd: b.TempDir(), SpillDir: b.TempDir(),
				Sandbox: config.Sandbox{Mode: config.SandboxWorkspaceWrite, Backend: backend}}
			plain := config.Local{Cwd: sandboxed.Cwd, SpillDir: sandboxed.SpillDir}
			start := func(cfg config.Local) error {
				e, err := New(cfg)
				if err != nil {
					return err
				}
				return e.Close()
			}
			if err := start(sandboxed); errors.Is(err, sandbox.ErrUnavailable) {
				b.Skipf("SKIP-REASON: %v", err)
			}
			tp, ts := pairTimes(b, func() error { return start(plain) }, func() error { return start(sandboxed) })
			b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "plain-ns/op")
			b.ReportMetric(float64(ts.Nanoseconds())/float64(b.N), "sandboxed-ns/op")
			b.ReportMetric(float64((ts-tp).Nanoseconds())/float64(b.N), "probe-ns/op")
		})
	}
}
