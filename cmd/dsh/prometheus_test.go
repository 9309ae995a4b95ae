package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPrometheusScrapes: a real Prometheus server (Debian's prometheus)
// scrapes dsh serve's --metrics-addr every second while a load runs; its
// HTTP API then shows the counters moved as the load says: 30 calls that
// exited 0, 10 that exited 1, one that timed out, 130 bytes of stdout, and
// as many allow decisions.
func TestPrometheusScrapes(t *testing.T) {
	t.Parallel()
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("SKIP-REASON: no prometheus binary (Debian package prometheus; .ci/run installs it) to scrape dsh's metrics")
	}
	dir := t.TempDir()
	_, stderr := startServe(t, "", []string{tokenEnv + "="}, "--addr", "127.0.0.1:0", "--no-auth", "--workdir", dir, "--metrics-addr", "127.0.0.1:0")
	mcpURL := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]
	metricsURL := stderr.await(t, regexp.MustCompile(`msg="dsh serving metrics" url=(http://\S+/metrics)`))[1]
	target := strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics")

	prom := startPrometheus(t, promBin, target)
	load(t, mcpURL)

	for query, want := range map[string]float64{
		`dsh_tool_calls_total{tool="bash",outcome="ok"}`:           30,
		`dsh_tool_calls_total{tool="bash",outcome="exit_nonzero"}`: 10,
		`dsh_tool_calls_total{tool="bash",outcome="timed_out"}`:    1,
		`dsh_command_kills_total{reason="timeout"}`:                1,
		`dsh_policy_decisions_total{decision="allow"}`:             41,
		`dsh_output_bytes_total{stream="stdout"}`:                  130,
		`dsh_tool_call_duration_seconds_count{tool="bash"}`:        41,
		`dsh_sessions_open`: 0,
	} {
		prom.await(t, query, want)
	}
}

// load runs 41 calls over 4 sessions, then closes them: 30 `echo ok`
// (3 bytes each), 10 `echo bad; exit 1` (4 bytes each) and one that times
// out.
func load(t *testing.T, mcpURL string) {
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "prom-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: mcpURL}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer cs.Close()
			run := func(args map[string]any) {
				args["description"] = "load"
				if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: args}); err != nil {
					t.Error(err)
				}
			}
			for range 10 {
				if s < 3 {
					run(map[string]any{"command": "echo ok"})
				} else {
					run(map[string]any{"command": "echo bad; exit 1"})
				}
			}
			if s == 0 {
				run(map[string]any{"command": "sleep 10", "timeoutMs": 200})
			}
		})
	}
	wg.Wait()
}

// prometheus is a Prometheus server the test started.
type prometheus struct{ api string }

// startPrometheus starts Prometheus on a free loopback port, scraping
// target every second; the test's end stops it and waits for it.
func startPrometheus(t *testing.T, bin, target string) prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	yml := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: dsh\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	out := newNotifyBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus said:\n%s", out.String())
		}
	})
	p := prometheus{api: "http://" + addr + "/api/v1/query"}
	// Ready once the target was scraped: up{job="dsh"} is 1.
	p.await(t, `up{job="dsh"}`, 1)
	return p
}

// await queries Prometheus until query's single value is want, for at
// most a minute (scrapes come every second).
func (p prometheus) await(t *testing.T, query string, want float64) {
	t.Helper()
	var last string
	giveUp := time.After(proctest.Scale(time.Minute))
	for {
		got, ok, raw := p.query(query)
		if ok && got == want {
			return
		}
		last = raw
		select {
		case <-giveUp:
			t.Fatalf("Prometheus never answered %s = %v; last answer: %s", query, want, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// query asks Prometheus's HTTP API for an instant vector of one sample.
func (p prometheus) query(q string) (value float64, ok bool, raw string) {
	resp, err := http.Get(p.api + "?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false, err.Error()
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, false, err.Error()
	}
	b, _ := json.Marshal(r)
	if r.Status != "success" || len(r.Data.Result) != 1 {
		return 0, false, string(b)
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	_, err = fmt.Sscan(s, &value)
	return value, err == nil, string(b)
}
