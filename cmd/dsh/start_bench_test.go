package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The benchmarks of the start-up issue (docs/performance.md): what a
// command pays before dsh does anything of its own, and what the first
// call pays over the ones after it. Each runs its candidates one after
// the other in every iteration, so a shared machine's drift hits all
// alike. With DSH_BENCH_BEFORE naming a directory that holds an older
// build (dsh, and dsh-release for the release flags), that build runs
// beside this one in the same loop:
//
//	go build -o /tmp/before/dsh ./cmd/dsh   # on the older commit
//	DSH_BENCH_BEFORE=/tmp/before go test -run '^$' -bench 'StartFloor|ColdStart|FirstCall|RunTrue' -count 5 ./cmd/dsh/

// candidate is one binary a benchmark starts.
type candidate struct{ name, path string }

// dshCandidates are this build of dsh and, with DSH_BENCH_BEFORE, the
// older one.
func dshCandidates() []candidate {
	c := []candidate{{"dsh", dshBin}}
	if dir := os.Getenv("DSH_BENCH_BEFORE"); dir != "" {
		c = append(c, candidate{"before", filepath.Join(dir, "dsh")})
	}
	return c
}

// goBuild builds a program whose main.go is src into dir, with extra go
// build flags, and returns the binary's path.
func goBuild(b *testing.B, dir, src string, env []string, flags ...string) string {
	b.Helper()
	for name, data := range map[string]string{"go.mod": "module hello\n\ngo 1.26\n", "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "prog")
	build := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, ".")...)
	build.Dir, build.Env = dir, append(os.Environ(), env...)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// releaseFlags are the release build's (scripts/release.sh).
var releaseFlags = []string{"-trimpath", "-ldflags", "-s -w"}

// buildRelease builds this dsh as the releases are: static, -trimpath.
func buildRelease(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "dsh-release")
	build := exec.Command("go", append(append([]string{"build"}, releaseFlags...), "-o", bin, ".")...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// spawnEach runs each argv once per iteration, in turn, and reports the
// mean time of each as name-ms/op.
func spawnEach(b *testing.B, names []string, argvs [][]string) {
	spent := make([]time.Duration, len(argvs))
	for b.Loop() {
		for i, argv := range argvs {
			t0 := time.Now()
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", argv, err, out)
			}
			spent[i] += time.Since(t0)
		}
	}
	for i, name := range names {
		b.ReportMetric(float64(spent[i].Microseconds())/float64(b.N)/1000, name+"-ms/op")
	}
}

// BenchmarkStartFloor is the floor under the cold start: spawning a Go
// hello-world built here and `dsh version`, in the default build and the
// release build, which do nothing of note once in main, against the bare
// spawn of `bash -c true`. What `dsh version` takes over the hello-world
// is loading dsh's binary and initialising the Go runtime and every
// package it links (docs/performance.md). hello-deps is the hello-world
// importing every package outside the standard library that dsh links:
// their package initialisation alone, none of dsh's code.
func BenchmarkStartFloor(b *testing.B) {
	hello := goBuild(b, b.TempDir(), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n", nil)
	names := []string{"bare", "hello", "hello-deps", "dsh-version", "dsh-release-version"}
	argvs := [][]string{{"bash", "-c", "true"}, {hello}, {helloDeps(b)}, {dshBin, "version"}, {buildRelease(b), "version"}}
	if dir := os.Getenv("DSH_BENCH_BEFORE"); dir != "" {
		names = append(names, "before-version", "before-release-version")
		argvs = append(argvs, []string{filepath.Join(dir, "dsh"), "version"}, []string{filepath.Join(dir, "dsh-release"), "version"})
	}
	spawnEach(b, names, argvs)
}

// helloDeps builds, inside this module (so that its go.mod resolves
// them), a hello-world that imports every package dsh links from outside
// the standard library and the module.
func helloDeps(b *testing.B) string {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		b.Fatalf("go list: %v", err)
	}
	src := "package main\n\nimport (\n\t\"fmt\"\n"
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, "github.com/dsh-go/dsh") && !strings.Contains(p, "/internal") && !strings.HasPrefix(p, "vendor/") {
			src += "\t_ \"" + p + "\"\n"
		}
	}
	src += ")\n\nfunc main() { fmt.Println(\"hello\") }\n"
	dir, err := os.MkdirTemp(".", "hello-deps-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "hello-deps")
	if out, err := exec.Command("go", "build", "-o", bin, "./"+dir).CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkRunTrue is `dsh run -- true` against a bare `bash -c true`
// and its floor: a Go program that does nothing but run `bash -c true`
// (a process that starts and then spawns the shell, as dsh run must).
func BenchmarkRunTrue(b *testing.B) {
	floor := goBuild(b, b.TempDir(), "package main\n\nimport \"os/exec\"\n\nfunc main() {\n\tif exec.Command(\"bash\", \"-c\", \"true\").Run() != nil {\n\t\tpanic(1)\n\t}\n}\n", nil)
	names := []string{"bare", "go-spawn"}
	argvs := [][]string{{"bash", "-c", "true"}, {floor}}
	for _, c := range dshCandidates() {
		names = append(names, c.name+"-run")
		argvs = append(argvs, []string{c.path, "run", "--", "true"})
	}
	spawnEach(b, names, argvs)
}

// BenchmarkColdStart spawns `dsh mcp`, initializes and has tools/list
// answered, then closes; alternating with a bare `bash -c true` spawn.
// dsh-ms is the time to the tools/list answer (the close is outside);
// dsh-nosandbox the same with local.sandbox.mode: off.
func BenchmarkColdStart(b *testing.B) {
	cands := dshCandidates()
	off := filepath.Join(b.TempDir(), "off.yaml")
	if err := os.WriteFile(off, []byte("local: {sandbox: {mode: off}}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cands = append(cands, candidate{"dsh-nosandbox", dshBin + " --config " + off})
	spent := make([]time.Duration, len(cands))
	var bare time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(t0)
		for i, c := range cands {
			t1 := time.Now()
			argv := strings.Fields(c.path)
			transport := &mcp.CommandTransport{Command: exec.Command(argv[0], append([]string{"mcp"}, argv[1:]...)...)}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "cold"}, nil).Connect(b.Context(), transport, nil)
			if err != nil {
				b.Fatal(err)
			}
			if res, err := cs.ListTools(b.Context(), nil); err != nil || len(res.Tools) == 0 {
				b.Fatal(res, err)
			}
			spent[i] += time.Since(t1)
			_ = cs.Close()
		}
	}
	b.ReportMetric(float64(bare.Microseconds())/float64(b.N)/1000, "bare-ms/op")
	for i, c := range cands {
		b.ReportMetric(float64(spent[i].Microseconds())/float64(b.N)/1000, c.name+"-ms/op")
	}
}

// steadyCalls is how many calls after the first give the steady state.
const steadyCalls = 7

// BenchmarkFirstCall starts `dsh mcp` with its default config, has
// initialize answered, then times the first `bash true` call and the
// steadyCalls after it (their median is the steady state), from a client
// that writes and reads the lines itself. The first call is sent at once
// after the handshake (at-once), or after a pause as short as a model's
// first turn could be (after-100ms), in which dsh makes ahead what the
// first command needs. first/steady is the ratio of the means over the
// iterations.
func BenchmarkFirstCall(b *testing.B) {
	for _, pause := range []time.Duration{0, 100 * time.Millisecond} {
		name := "at-once"
		if pause > 0 {
			name = "after-" + pause.String()
		}
		b.Run(name, func(b *testing.B) {
			cands := dshCandidates()
			first := make([]time.Duration, len(cands))
			steady := make([]time.Duration, len(cands))
			for b.Loop() {
				for i, c := range cands {
					f, s := firstAndSteady(b, c.path, pause)
					first[i] += f
					steady[i] += s
				}
			}
			for i, c := range cands {
				b.ReportMetric(float64(first[i].Microseconds())/float64(b.N)/1000, c.name+"-first-ms/op")
				b.ReportMetric(float64(steady[i].Microseconds())/float64(b.N)/1000, c.name+"-steady-ms/op")
				b.ReportMetric(float64(first[i])/float64(steady[i]), c.name+"-first/steady")
			}
		})
	}
}

// firstAndSteady starts bin's `dsh mcp` in a fresh working directory,
// waits pause after the handshake, and returns the first call's time and
// the median of the steadyCalls after.
func firstAndSteady(b *testing.B, bin string, pause time.Duration) (time.Duration, time.Duration) {
	in, out, stop := startRaw(b, bin, b.TempDir())
	defer stop()
	time.Sleep(pause)
	req := trueCall
	call := func() time.Duration {
		t0 := time.Now()
		if _, err := in.Write(req); err != nil {
			b.Fatal(err)
		}
		if line, err := out.ReadBytes('\n'); err != nil || !bytes.Contains(line, []byte(`"exitCode":0`)) {
			b.Fatalf("%s: %v", line, err)
		}
		return time.Since(t0)
	}
	f := call()
	var s []time.Duration
	for range steadyCalls {
		s = append(s, call())
	}
	slices.Sort(s)
	return f, s[len(s)/2]
}
