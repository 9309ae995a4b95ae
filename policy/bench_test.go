package policy

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchPolicy has rules of every kind, some matched on joined arguments.
func benchPolicy(b *testing.B) *Policy {
	rules := []string{"deny:rm -rf *", "deny:curl*", "deny:git push --force*", "deny:sudo *",
		"ask:git push:*", "ask:npm publish", "ask:docker *", "ask:kubectl delete *"}
	for _, a := range []string{"git status", "npm run *", "go test *", "go build *", "make *", "cargo *", "python3 -m pytest *"} {
		rules = append(rules, "allow:"+a)
	}
	return pol(b, Config{Default: Ask, ReadOnly: true, Home: "/home/u"}, rules...)
}

// cpuTime is the process's user and system time so far (getrusage), GC
// and the runtime's other threads included.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loopCPU runs f in the benchmark loop and reports the CPU time per
// operation beside the wall time (the budgets are CPU time).
func loopCPU(b *testing.B, f func()) {
	start := cpuTime(b)
	n := 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(n), "cpu-ns/op")
}

// The budget is 50 µs for a one-line command (docs/spec.md §9.6).
func BenchmarkCheckOneLine(b *testing.B) {
	p := benchPolicy(b)
	cmd := `cd /work/x && GOFLAGS=-mod=mod go test ./... 2>&1 | grep -v '^ok' | head -50 || echo "failed: $(date)"`
	loopCPU(b, func() { p.Check(cmd) })
}

// The budget is 20 ms for a 272 KiB heredoc (docs/spec.md §9.6): one of
// prose, and one whose every line holds text that would be code if bash
// ran it. The body of a here-document going to a program is data: it is
// not parsed again (issue 25).
func BenchmarkCheckHeredoc(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"prose", "The quick brown fox jumps over the lazy dog, then writes a line of notes.\n"},
		{"code", "Run `make test` or $(go env GOPATH)/bin/tool, and ${HOME} is set.\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := benchPolicy(b)
			body := strings.Repeat(bc.line, 272*1024/len(bc.line))
			cmd := "cat > notes.md <<'EOF'\n" + body + "EOF\n"
			b.SetBytes(int64(len(cmd)))
			loopCPU(b, func() { p.Check(cmd) })
		})
	}
}
