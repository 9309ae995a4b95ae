// Package metrics is dsh serve's Prometheus metrics (docs/spec.md §15.2):
// what an operator of many sessions puts on a dashboard and alerts on.
//
// Like the audit log it only observes: [Metrics.Call] is a [tool.Observer]
// on the registry, [Metrics.TaskEnd] a settled listener on the task
// runtime, and the gauges read the server, the tool and the executor when
// scraped. Its registry is its own (not the process-wide default), with
// the Go runtime's and the process's standard collectors.
//
// Every label has a bounded set of values: a tool name the registry does
// not list is counted as "other", so a client cannot grow the series by
// calling made-up tools; no command text, session id or task id is ever a
// label. The names and labels are documented in docs/operations.md.
package metrics

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// Sources are what the gauges read when scraped; a nil one leaves its
// metric out.
type Sources struct {
	// Sessions counts the MCP sessions open.
	Sessions func() int
	// Foreground counts the foreground commands running; Background the
	// background tasks that have not ended.
	Foreground func() int64
	Background func() int
	// HookFailures counts the failed hooks of an event (PreToolUse,
	// PostToolUse).
	HookFailures func(event string) uint64
	// SpillBytes is the size of the spill files on disk.
	SpillBytes func() int64
	// Swept is what the executor's start-up sweep killed.
	Swept func() int
	// NetConnections counts the sandbox's connections decided by the
	// network map, by decision ("allow", "deny").
	NetConnections func(decision string) int64
}

// Outcomes of a call, the values of dsh_tool_calls_total's outcome label.
const (
	OutcomeOK          = "ok"           // ran, and a command exited 0
	OutcomeExitNonZero = "exit_nonzero" // a command exited non-zero
	OutcomeTimedOut    = "timed_out"    // its timeout killed the command
	OutcomeSignal      = "signal"       // a signal ended the command
	OutcomeBackground  = "background"   // a background task started
	OutcomeYielded     = "yielded"      // the command went on as a task
	OutcomeError       = "error"        // an error result: refused, invalid, aborted, failed
)

// otherTool is the tool label of a name the registry does not list.
const otherTool = "other"

// Metrics holds dsh's collectors. It is safe for concurrent use.
type Metrics struct {
	reg       *prometheus.Registry
	tools     []string
	calls     *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	output    *prometheus.CounterVec
	kills     *prometheus.CounterVec
	tasks     *prometheus.CounterVec
}

// New returns the metrics of a server whose registry lists tools.
func New(tools []string, src Sources) *Metrics {
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		tools: slices.Clone(tools),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dsh_tool_calls_total", Help: "Tool calls that ended, by tool and outcome.",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "dsh_tool_call_duration_seconds", Help: "Time from a tool call's arrival to its result, by tool.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"tool"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dsh_policy_decisions_total", Help: "How tool calls were decided (the audit log's decision).",
		}, []string{"decision"}),
		output: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dsh_output_bytes_total", Help: "Bytes commands wrote, by stream (foreground calls and ended tasks).",
		}, []string{"stream"}),
		kills: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dsh_command_kills_total", Help: "Commands dsh killed, by reason: timeout, aborted (a cancelled or cut call), task (task_kill, a session's end, shutdown).",
		}, []string{"reason"}),
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dsh_tasks_ended_total", Help: "Background and yielded tasks that ended, by status.",
		}, []string{"status"}),
	}
	m.reg.MustRegister(m.calls, m.duration, m.decisions, m.output, m.kills, m.tasks,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.gauges(src)
	return m
}

// gauges registers the metrics read from src when scraped.
func (m *Metrics) gauges(src Sources) {
	if f := src.Sessions; f != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "dsh_sessions_open", Help: "MCP sessions open."},
			func() float64 { return float64(f()) }))
	}
	if f := src.Foreground; f != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "dsh_commands_running", Help: "Commands running, foreground or background.",
			ConstLabels: prometheus.Labels{"mode": "foreground"}}, func() float64 { return float64(f()) }))
	}
	if f := src.Background; f != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "dsh_commands_running", Help: "Commands running, foreground or background.",
			ConstLabels: prometheus.Labels{"mode": "background"}}, func() float64 { return float64(f()) }))
	}
	if f := src.HookFailures; f != nil {
		for _, ev := range []string{"PreToolUse", "PostToolUse"} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "dsh_hook_failures_total", Help: "Hook commands that failed (crashed, timed out, bad output), by event.",
				ConstLabels: prometheus.Labels{"event": ev}}, func() float64 { return float64(f(ev)) }))
		}
	}
	if f := src.SpillBytes; f != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "dsh_spill_bytes", Help: "Bytes of spill files on disk."},
			func() float64 { return float64(f()) }))
	}
	if f := src.NetConnections; f != nil {
		for _, d := range []string{"allow", "deny"} {
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "dsh_network_connections_total", Help: "Connections of sandboxed commands decided by the network map, by decision.",
				ConstLabels: prometheus.Labels{"decision": d}}, func() float64 { return float64(f(d)) }))
		}
	}
	if f := src.Swept; f != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "dsh_sweep_kills_total", Help: "Processes and cgroups left by a dsh that no longer runs, killed at start."},
			func() float64 { return float64(f()) }))
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is the metrics' registry, for tests and embedders.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Call counts an ended call; it is a [tool.Observer].
func (m *Metrics) Call(_ context.Context, call tool.Call, res tool.Result) {
	name := call.Name
	if !slices.Contains(m.tools, name) {
		name = otherTool
	}
	outcome := Outcome(res)
	m.calls.WithLabelValues(name, outcome).Inc()
	if !call.Started.IsZero() {
		m.duration.WithLabelValues(name).Observe(sinceSeconds(call.Started))
	}
	m.decisions.WithLabelValues(decision(res.Ruling.Outcome)).Inc()
	st, ok := res.Structured.(bashtool.Structured)
	switch {
	case res.IsError && firstText(res) == tool.ErrorPrefix+bashtool.Aborted:
		m.kills.WithLabelValues("aborted").Inc()
	case ok && st.TimedOut:
		m.kills.WithLabelValues("timeout").Inc()
	}
	if ok && !st.Yielded && st.TaskID == "" {
		// A yielded call's output is counted with its task's end.
		m.addOutput(streamBytes(st.Stdout), streamBytes(st.Stderr))
	}
}

// TaskEnd counts an ended task; it is a settled listener.
func (m *Metrics) TaskEnd(snap tasks.Snapshot) {
	m.tasks.WithLabelValues(taskStatus(snap.Status)).Inc()
	switch {
	case snap.Exit.TimedOut:
		m.kills.WithLabelValues("timeout").Inc()
	case snap.Status == tasks.Killed:
		m.kills.WithLabelValues("task").Inc()
	}
	m.addOutput(snap.Exit.StdoutBytes, snap.Exit.StderrBytes)
}

func (m *Metrics) addOutput(stdout, stderr int64) {
	if stdout > 0 {
		m.output.WithLabelValues("stdout").Add(float64(stdout))
	}
	if stderr > 0 {
		m.output.WithLabelValues("stderr").Add(float64(stderr))
	}
}

// Outcome is the outcome label of a call's result.
func Outcome(res tool.Result) string {
	if res.IsError {
		return OutcomeError
	}
	st, ok := res.Structured.(bashtool.Structured)
	switch {
	case !ok:
		return OutcomeOK
	case st.Yielded:
		return OutcomeYielded
	case st.TaskID != "":
		return OutcomeBackground
	case st.TimedOut:
		return OutcomeTimedOut
	case st.Signal != "":
		return OutcomeSignal
	case st.ExitCode != nil && *st.ExitCode != 0:
		return OutcomeExitNonZero
	}
	return OutcomeOK
}

// decisions are the values of the decision label.
var decisions = []tool.Outcome{tool.OutcomeAllow, tool.OutcomeAccepted, tool.OutcomeDeclined, tool.OutcomeDismissed,
	tool.OutcomeUnavailable, tool.OutcomeDeny, tool.OutcomeBlocked, tool.OutcomeInvalid}

// decision is o as a label value: one of the known outcomes, else "other".
func decision(o tool.Outcome) string {
	if slices.Contains(decisions, o) {
		return string(o)
	}
	return "other"
}

// taskStatus is s as a label value.
func taskStatus(s tasks.Status) string {
	if s.Terminal() {
		return string(s)
	}
	return "other"
}

func streamBytes(f *bashtool.StreamFacts) int64 {
	if f == nil {
		return 0
	}
	return f.TotalBytes
}

// firstText is the first text block of res.
func firstText(res tool.Result) string {
	for _, c := range res.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// sinceSeconds is the time since t in seconds.
func sinceSeconds(t time.Time) float64 { return time.Since(t).Seconds() }
