package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/mcpserver"
)

// The benchmarks of the performance issue (docs/performance.md), next to
// the round trip above. Each alternates with its floor in one loop where
// it has one, so a shared machine's drift hits both alike.
//
//	go test -run '^$' -bench 'Ping|ToolsList|ColdStart|Concurrent' -count 5 ./cmd/dsh/

// BenchmarkPing is the SDK's floor: an MCP ping over `dsh mcp`'s stdio.
func BenchmarkPing(b *testing.B) {
	cs := stdioSession(b)
	for b.Loop() {
		if err := cs.Ping(b.Context(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolsList is a tools/list round trip over stdio: from the Go
// SDK's client (sdk), which decodes every schema into maps, and from a
// client that writes the request line and reads the answer's line (raw),
// which leaves only dsh's side and the pipes; ping-raw is that client's
// floor.
func BenchmarkToolsList(b *testing.B) {
	b.Run("sdk", func(b *testing.B) {
		cs := stdioSession(b)
		for b.Loop() {
			if res, err := cs.ListTools(b.Context(), nil); err != nil || len(res.Tools) == 0 {
				b.Fatal(res, err)
			}
		}
	})
	for _, method := range []string{"tools/list", "ping"} {
		b.Run(strings.ReplaceAll(method, "/", "-")+"-raw", func(b *testing.B) {
			in, out := rawSession(b)
			req := []byte(`{"jsonrpc":"2.0","id":7,"method":"` + method + `"}` + "\n")
			for b.Loop() {
				if _, err := in.Write(req); err != nil {
					b.Fatal(err)
				}
				if line, err := out.ReadBytes('\n'); err != nil || !bytes.Contains(line, []byte(`"id":7`)) {
					b.Fatalf("%s: %v", line, err)
				}
			}
		})
	}
}

// BenchmarkStdioRoundTripRaw is BenchmarkStdioRoundTrip from a client
// that writes the tools/call line and reads the result's line itself: what
// is left is dsh's side of the call and the pipes, without the Go SDK
// client's encoding and decoding.
func BenchmarkStdioRoundTripRaw(b *testing.B) {
	in, out := rawSession(b)
	req := trueCall
	var bare, call time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := in.Write(req); err != nil {
			b.Fatal(err)
		}
		if line, err := out.ReadBytes('\n'); err != nil || !bytes.Contains(line, []byte(`"exitCode":0`)) {
			b.Fatalf("%s: %v", line, err)
		}
		bare, call = bare+t1.Sub(t0), call+time.Since(t1)
	}
	b.ReportMetric(float64(bare.Microseconds())/float64(b.N)/1000, "bare-ms/op")
	b.ReportMetric(float64(call.Microseconds())/float64(b.N)/1000, "dsh-ms/op")
	b.ReportMetric(float64(call)/float64(bare), "dsh/bare")
}

// rawSession starts `dsh mcp` and initializes a session by hand, for a
// client that reads and writes JSON-RPC lines itself.
func rawSession(b *testing.B) (io.Writer, *bufio.Reader) {
	in, out, stop := startRaw(b, dshBin, "")
	b.Cleanup(stop)
	return in, out
}

// startRaw starts bin's `dsh mcp` in dir ("" for this process's) and
// initializes a session by hand; stop closes its input and waits for it.
func startRaw(b *testing.B, bin, dir string) (in io.WriteCloser, out *bufio.Reader, stop func()) {
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop = func() { _ = in.Close(); _ = cmd.Wait() }
	out = bufio.NewReaderSize(stdout, 1<<16)
	_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	if _, err := out.ReadBytes('\n'); err != nil {
		stop()
		b.Fatal(err)
	}
	_, _ = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return in, out, stop
}

// trueCall is a tools/call line that runs bash `true`.
var trueCall = []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true","description":"do nothing"}}}` + "\n")

// BenchmarkConcurrent measures calls/s of bash `true` from 1, 4 and 16
// concurrent callers over one stdio session, from 16 callers each with an
// HTTP session of its own, and of the same concurrency of bare spawns.
// Each op is one call per caller.
func BenchmarkConcurrent(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("bare/%d", n), func(b *testing.B) {
			fanOut(b, n, func(int) {
				if err := exec.Command("bash", "-c", "true").Run(); err != nil {
					b.Error(err)
				}
			})
		})
		b.Run(fmt.Sprintf("stdio/%d", n), func(b *testing.B) {
			cs := stdioSession(b)
			fanOut(b, n, func(int) { callTrue(b, cs) })
		})
	}
	b.Run("http/16", func(b *testing.B) {
		_, stderr := startServe(b, "", nil, "--addr", "127.0.0.1:0", "--no-auth")
		url := stderr.await(b, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
		var css []*mcp.ClientSession
		for range 16 {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			css = append(css, cs)
		}
		fanOut(b, 16, func(i int) { callTrue(b, css[i]) })
	})
}

// fanOut runs call from n goroutines once per op and reports calls/s.
func fanOut(b *testing.B, n int, call func(i int)) {
	t0 := time.Now()
	for b.Loop() {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { call(i) })
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.N*n)/time.Since(t0).Seconds(), "calls/s")
}

// stdioSession starts `dsh mcp` and connects to it, for the benchmark.
func stdioSession(b *testing.B) *mcp.ClientSession {
	transport := &mcp.CommandTransport{Command: exec.Command(dshBin, "mcp")}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(b.Context(), transport, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	callTrue(b, cs) // warm
	return cs
}

// BenchmarkInProcessStdio is the stdio round trip of bash `true`, and of
// tools/list, with the
// server in this process (built as dsh mcp builds it, over pipes), so
// that -cpuprofile and -trace see both sides:
//
//	go test -run '^$' -bench InProcessStdio -cpuprofile cpu.out -trace trace.out ./cmd/dsh/
func BenchmarkInProcessStdio(b *testing.B) {
	dir := b.TempDir()
	var cfg config.File
	log := slog.New(slog.DiscardHandler)
	st, err := host.Standard(cfg, host.WithLogger(log))
	if err != nil {
		b.Fatal(err)
	}
	srv := mcpserver.New(serverOptions(st, dir, cfg, log))
	cin, sout, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	sin, cout, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.RunLines(context.Background(), sin, sout) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(b.Context(), &mcp.IOTransport{Reader: cin, Writer: cout}, nil)
	if err != nil {
		b.Fatal(err)
	}
	callTrue(b, cs)
	b.Run("call", func(b *testing.B) {
		for b.Loop() {
			callTrue(b, cs)
		}
	})
	b.Run("tools-list", func(b *testing.B) {
		for b.Loop() {
			if _, err := cs.ListTools(b.Context(), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	_ = cs.Close()
	_ = cout.Close()
	<-served
	_ = sout.Close()
	_ = cin.Close()
	_ = sin.Close()
	_ = st.Close()
}

// BenchmarkMemory measures, with the server in this process (built as dsh
// serve builds it, over loopback HTTP), the live heap per idle session
// (each ran one command) and per running foreground command (`sleep 2`),
// and the OS threads per running command. The client's share is in the
// heap too: the figures are an upper bound.
//
//	go test -run '^$' -bench Memory -benchtime 1x -count 3 ./cmd/dsh/
func BenchmarkMemory(b *testing.B) {
	const sessions, running = 100, 50
	css := make([]*mcp.ClientSession, 0, sessions)
	srv := opsURL(b, false)
	connect := func() *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "mem"}, nil).Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: srv}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return cs
	}
	warm := connect() // what any first session loads
	callTrue(b, warm)
	_ = warm.Close()
	for b.Loop() {
		heap0, threads0 := liveHeap(), statusField(b, os.Getpid(), "Threads:")
		for range sessions {
			cs := connect()
			css = append(css, cs)
			callTrue(b, cs)
		}
		heap1 := liveHeap()
		var wg sync.WaitGroup
		for i := range running {
			wg.Go(func() {
				_, _ = css[i].CallTool(b.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 2", "description": "wait"}})
			})
		}
		time.Sleep(time.Second)
		heap2, threads2 := liveHeap(), statusField(b, os.Getpid(), "Threads:")
		wg.Wait()
		b.ReportMetric(float64(heap1-heap0)/sessions/1024, "heap-KiB/idle-session")
		b.ReportMetric(float64(heap2-heap1)/running/1024, "heap-KiB/running-cmd")
		b.ReportMetric(float64(threads2-threads0)/running, "threads/running-cmd")
		for _, cs := range css {
			_ = cs.Close()
		}
		css = css[:0]
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
