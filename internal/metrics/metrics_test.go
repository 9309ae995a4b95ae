package metrics_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/internal/metrics"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func intp(n int) *int { return &n }

// families is m's exposition of the named metrics only, in its order.
func families(t *testing.T, m *metrics.Metrics, names ...string) string {
	t.Helper()
	var b strings.Builder
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for line := range strings.Lines(b.String()) {
		name := line
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			name = rest[strings.IndexByte(rest, ' ')+1:]
		}
		name = strings.TrimSuffix(name[:strings.IndexAny(name, " {")], "_bucket")
		name = strings.TrimSuffix(strings.TrimSuffix(name, "_sum"), "_count")
		if slices.Contains(names, name) {
			out.WriteString(line)
		}
	}
	return out.String()
}

func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		res  tool.Result
		want string
	}{
		{tool.Result{IsError: true}, "error"},
		{tool.Result{}, "ok"},
		{tool.Result{Structured: bashtool.Structured{ExitCode: intp(0)}}, "ok"},
		{tool.Result{Structured: bashtool.Structured{ExitCode: intp(2)}}, "exit_nonzero"},
		{tool.Result{Structured: bashtool.Structured{Signal: "SIGTERM", TimedOut: true}}, "timed_out"},
		{tool.Result{Structured: bashtool.Structured{Signal: "SIGKILL"}}, "signal"},
		{tool.Result{Structured: bashtool.Structured{TaskID: "bash-1"}}, "background"},
		{tool.Result{Structured: bashtool.Structured{TaskID: "bash-1", Yielded: true}}, "yielded"},
	} {
		if got := metrics.Outcome(c.res); got != c.want {
			t.Errorf("Outcome(%+v) = %q, want %q", c.res, got, c.want)
		}
	}
}

// TestLabelsBounded: a tool the registry does not list, and a decision
// dsh does not know, are counted as "other": a client cannot add series.
func TestLabelsBounded(t *testing.T) {
	m := metrics.New([]string{"bash"}, metrics.Sources{})
	for _, name := range []string{"made-up-1", "made-up-2", "bash"} {
		m.Call(t.Context(), tool.Call{Name: name, Started: time.Now()}, tool.Result{Ruling: tool.Ruling{Outcome: "made-up"}})
	}
	want := `
# HELP dsh_policy_decisions_total How tool calls were decided (the audit log's decision).
# TYPE dsh_policy_decisions_total counter
dsh_policy_decisions_total{decision="other"} 3
# HELP dsh_tool_calls_total Tool calls that ended, by tool and outcome.
# TYPE dsh_tool_calls_total counter
dsh_tool_calls_total{outcome="ok",tool="bash"} 1
dsh_tool_calls_total{outcome="ok",tool="other"} 2
`
	if got := families(t, m, "dsh_tool_calls_total", "dsh_policy_decisions_total"); got != want[1:] {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, want[1:])
	}
}

// TestCountsAndGauges: a foreground call's bytes, a timeout and a killed
// task are counted; the gauges read their sources when gathered.
func TestCountsAndGauges(t *testing.T) {
	sessions := 3
	m := metrics.New([]string{"bash"}, metrics.Sources{
		Sessions:     func() int { return sessions },
		Foreground:   func() int64 { return 2 },
		Background:   func() int { return 5 },
		HookFailures: func(ev string) uint64 { return map[string]uint64{"PreToolUse": 4}[ev] },
		SpillBytes:   func() int64 { return 1 << 20 },
		Swept:        func() int { return 1 },
	})
	args, _ := json.Marshal(map[string]any{"command": "x", "description": "d"})
	m.Call(t.Context(), tool.Call{Name: "bash", Args: args, Started: time.Now()}, tool.Result{Ruling: tool.Ruling{Outcome: tool.OutcomeAllow},
		Structured: bashtool.Structured{Signal: "SIGTERM", TimedOut: true, Stdout: &bashtool.StreamFacts{TotalBytes: 7}, Stderr: &bashtool.StreamFacts{TotalBytes: 2}}})
	m.Call(t.Context(), tool.Call{Name: "bash", Started: time.Now()}, tool.Result{IsError: true, Content: []tool.Content{tool.TextContent("Error: command aborted")}, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow}})
	m.TaskEnd(tasks.Snapshot{ID: "bash-1", Status: tasks.Killed, Exit: tasks.Exit{Signal: "SIGTERM", StdoutBytes: 10}})
	sessions = 4
	want := `
# HELP dsh_command_kills_total Commands dsh killed, by reason: timeout, aborted (a cancelled or cut call), task (task_kill, a session's end, shutdown).
# TYPE dsh_command_kills_total counter
dsh_command_kills_total{reason="aborted"} 1
dsh_command_kills_total{reason="task"} 1
dsh_command_kills_total{reason="timeout"} 1
# HELP dsh_commands_running Commands running, foreground or background.
# TYPE dsh_commands_running gauge
dsh_commands_running{mode="background"} 5
dsh_commands_running{mode="foreground"} 2
# HELP dsh_hook_failures_total Hook commands that failed (crashed, timed out, bad output), by event.
# TYPE dsh_hook_failures_total counter
dsh_hook_failures_total{event="PostToolUse"} 0
dsh_hook_failures_total{event="PreToolUse"} 4
# HELP dsh_output_bytes_total Bytes commands wrote, by stream (foreground calls and ended tasks).
# TYPE dsh_output_bytes_total counter
dsh_output_bytes_total{stream="stderr"} 2
dsh_output_bytes_total{stream="stdout"} 17
# HELP dsh_sessions_open MCP sessions open.
# TYPE dsh_sessions_open gauge
dsh_sessions_open 4
# HELP dsh_spill_bytes Bytes of spill files on disk.
# TYPE dsh_spill_bytes gauge
dsh_spill_bytes 1.048576e+06
# HELP dsh_sweep_kills_total Processes and cgroups left by a dsh that no longer runs, killed at start.
# TYPE dsh_sweep_kills_total counter
dsh_sweep_kills_total 1
# HELP dsh_tasks_ended_total Background and yielded tasks that ended, by status.
# TYPE dsh_tasks_ended_total counter
dsh_tasks_ended_total{status="killed"} 1
`
	names := []string{"dsh_command_kills_total", "dsh_commands_running", "dsh_hook_failures_total", "dsh_output_bytes_total",
		"dsh_sessions_open", "dsh_spill_bytes", "dsh_sweep_kills_total", "dsh_tasks_ended_total"}
	if got := families(t, m, names...); got != want[1:] {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, want[1:])
	}
}

// TestExpositionParses: the whole exposition, the Go runtime's and the
// process's metrics included, is read by Prometheus's own text parser,
// with each family's type, and a histogram's buckets are cumulative.
func TestExpositionParses(t *testing.T) {
	m := metrics.New([]string{"bash"}, metrics.Sources{Sessions: func() int { return 1 }})
	for _, d := range []time.Duration{time.Millisecond, 20 * time.Millisecond, time.Hour} {
		m.Call(t.Context(), tool.Call{Name: "bash", Started: time.Now().Add(-d)}, tool.Result{})
	}
	var b strings.Builder
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	// client_golang's Go and process collectors' names, as dsh exposed
	// them before it wrote the format itself (but for process_network_*,
	// the host's, and go_gc_gogc_percent, which the runtime only tells
	// runtime/metrics).
	for name, typ := range map[string]dto.MetricType{
		"go_goroutines": dto.MetricType_GAUGE, "go_threads": dto.MetricType_GAUGE, "go_info": dto.MetricType_GAUGE,
		"go_gc_duration_seconds": dto.MetricType_SUMMARY, "go_memstats_alloc_bytes_total": dto.MetricType_COUNTER,
		"go_memstats_heap_inuse_bytes": dto.MetricType_GAUGE, "go_sched_gomaxprocs_threads": dto.MetricType_GAUGE,
		"go_gc_gomemlimit_bytes": dto.MetricType_GAUGE, "process_cpu_seconds_total": dto.MetricType_COUNTER,
		"process_resident_memory_bytes": dto.MetricType_GAUGE, "process_open_fds": dto.MetricType_GAUGE,
		"process_max_fds": dto.MetricType_GAUGE, "process_start_time_seconds": dto.MetricType_GAUGE,
		"process_virtual_memory_bytes": dto.MetricType_GAUGE, "process_virtual_memory_max_bytes": dto.MetricType_GAUGE,
		"dsh_sessions_open": dto.MetricType_GAUGE, "dsh_tool_call_duration_seconds": dto.MetricType_HISTOGRAM,
	} {
		f := fams[name]
		if f == nil || f.GetType() != typ {
			t.Errorf("%s: %v, want a %v", name, f, typ)
		}
	}
	if rss := fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue(); rss < 1<<20 {
		t.Errorf("process_resident_memory_bytes = %v", rss)
	}
	// Unlimited reads as RLIM_INFINITY, 2^64-1, as client_golang gave it.
	var as syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &as) == nil {
		if got := fams["process_virtual_memory_max_bytes"].GetMetric()[0].GetGauge().GetValue(); got != float64(as.Cur) || got < 0 {
			t.Errorf("process_virtual_memory_max_bytes = %v, the limit is %d", got, as.Cur)
		}
	}
	if start := fams["process_start_time_seconds"].GetMetric()[0].GetGauge().GetValue(); math.Abs(start-float64(time.Now().Unix())) > 3600 {
		t.Errorf("process_start_time_seconds = %v, now %v", start, time.Now().Unix())
	}
	h := fams["dsh_tool_call_duration_seconds"].GetMetric()[0].GetHistogram()
	got := map[float64]uint64{}
	for _, bk := range h.GetBucket() {
		got[bk.GetUpperBound()] = bk.GetCumulativeCount()
	}
	if h.GetSampleCount() != 3 || got[0.005] != 1 || got[0.01] != 1 || got[0.025] != 2 || got[600] != 2 || h.GetSampleSum() < 3600 {
		t.Errorf("histogram: count %d sum %v buckets %v", h.GetSampleCount(), h.GetSampleSum(), got)
	}
}
