package host_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// BenchmarkDefaultSandbox is what the default sandbox costs a call
// (docs/spec.md §11, goal ≤ 2×): `bash true` through the registry of the
// default stack (mode auto, sandboxed where a backend works) against the
// same stack with mode off, alternating call by call so the machine's
// drift hits both alike. Each side is one session's, its scope made
// before the timing.
//
//	go test -run '^$' -bench DefaultSandbox -count 6 ./host/
func BenchmarkDefaultSandbox(b *testing.B) {
	call := func(cfg config.File) func() {
		none := b.TempDir() // no Claude Code settings of the machine
		st, err := host.Standard(cfg, host.WithPermissions(permissions.Options{Home: none, ManagedDir: none, ProjectDir: none}))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		sess := session.New("bench", b.TempDir())
		b.Cleanup(sess.End)
		args, _ := json.Marshal(map[string]any{"command": "true", "description": "bench"})
		return func() {
			if res := st.Tools.Execute(context.Background(), tool.Call{Name: "bash", Args: args, Session: sess}); res.IsError || res.Text() != "(no output)" {
				b.Fatalf("bash true: %q", res.Text())
			}
		}
	}
	off := config.File{}
	off.Local.Sandbox.Mode = config.SandboxOff
	plain, boxed := call(off), call(config.File{})
	plain()
	boxed()
	var tp, tb time.Duration
	for b.Loop() {
		t0 := time.Now()
		plain()
		t1 := time.Now()
		boxed()
		tp, tb = tp+t1.Sub(t0), tb+time.Since(t1)
	}
	b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "off-ns/op")
	b.ReportMetric(float64(tb.Nanoseconds())/float64(b.N), "sandboxed-ns/op")
	b.ReportMetric(float64(tb)/float64(tp), "sandboxed/off")
}
