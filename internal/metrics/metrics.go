// Package metrics is dsh serve's Prometheus metrics (docs/spec.md §15.2):
// what an operator of many sessions puts on a dashboard and alerts on.
//
// Like the audit log it only observes: [Metrics.Call] is a [tool.Observer]
// on the registry, [Metrics.TaskEnd] a settled listener on the task
// runtime, and the gauges read the server, the tool and the executor when
// scraped, as do the Go runtime's go_* and the process's process_*.
//
// Every label has a bounded set of values: a tool name the registry does
// not list is counted as "other", so a client cannot grow the series by
// calling made-up tools; no command text, session id or task id is ever a
// label. The names and labels are documented in docs/operations.md.
//
// The text format is written here, not by Prometheus's client library:
// that library's package initialisation cost every dsh start, though
// only dsh serve exposes metrics (docs/performance.md). The Go runtime's
// and the process's metrics keep client_golang's names.
package metrics

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

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

// Metrics holds dsh's metrics. It is safe for concurrent use.
type Metrics struct {
	tools     []string
	calls     *vec
	duration  *vec
	decisions *vec
	output    *vec
	kills     *vec
	tasks     *vec
	families  []family
	vecs      []*vec
	funcs     []funcMetric // the gauges and counters read when collected
}

// funcMetric is a metric read from a source when collected.
type funcMetric struct {
	name, help, typ string
	key, value      string // its one label; "" when none
	f               func() float64
}

// New returns the metrics of a server whose registry lists tools.
func New(tools []string, src Sources) *Metrics {
	m := &Metrics{
		tools:     slices.Clone(tools),
		calls:     newCounterVec("dsh_tool_calls_total", "Tool calls that ended, by tool and outcome.", "tool", "outcome"),
		duration:  newHistogramVec("dsh_tool_call_duration_seconds", "Time from a tool call's arrival to its result, by tool.", durationBuckets, "tool"),
		decisions: newCounterVec("dsh_policy_decisions_total", "How tool calls were decided (the audit log's decision).", "decision"),
		output:    newCounterVec("dsh_output_bytes_total", "Bytes commands wrote, by stream (foreground calls and ended tasks).", "stream"),
		kills:     newCounterVec("dsh_command_kills_total", "Commands dsh killed, by reason: timeout, aborted (a cancelled or cut call), task (task_kill, a session's end, shutdown).", "reason"),
		tasks:     newCounterVec("dsh_tasks_ended_total", "Background and yielded tasks that ended, by status.", "status"),
	}
	m.vecs = []*vec{m.calls, m.duration, m.decisions, m.output, m.kills, m.tasks}
	for _, v := range m.vecs {
		m.families = append(m.families, v.family())
	}
	m.families = append(m.families, runtimeFamilies()...)
	m.gauges(src)
	return m
}

// durationBuckets are dsh_tool_call_duration_seconds's upper bounds.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// gauges adds the metrics read from src when scraped.
func (m *Metrics) gauges(src Sources) {
	add := func(name, help, typ, labels string, f func() float64) {
		m.families = append(m.families, funcFamily(name, help, typ, labels, f))
		fm := funcMetric{name: name, help: help, typ: typ, f: f}
		if k, v, ok := strings.Cut(labels, "="); ok {
			fm.key, fm.value = k, strings.Trim(v, `"`) // one label of dsh's own, never escaped
		}
		m.funcs = append(m.funcs, fm)
	}
	if f := src.Sessions; f != nil {
		add("dsh_sessions_open", "MCP sessions open.", "gauge", "", func() float64 { return float64(f()) })
	}
	const running = "Commands running, foreground or background."
	if f := src.Foreground; f != nil {
		add("dsh_commands_running", running, "gauge", `mode="foreground"`, func() float64 { return float64(f()) })
	}
	if f := src.Background; f != nil {
		add("dsh_commands_running", running, "gauge", `mode="background"`, func() float64 { return float64(f()) })
	}
	if f := src.HookFailures; f != nil {
		for _, ev := range []string{"PreToolUse", "PostToolUse"} {
			add("dsh_hook_failures_total", "Hook commands that failed (crashed, timed out, bad output), by event.", "counter",
				`event="`+ev+`"`, func() float64 { return float64(f(ev)) })
		}
	}
	if f := src.SpillBytes; f != nil {
		add("dsh_spill_bytes", "Bytes of spill files on disk.", "gauge", "", func() float64 { return float64(f()) })
	}
	if f := src.NetConnections; f != nil {
		for _, d := range []string{"allow", "deny"} {
			add("dsh_network_connections_total", "Connections of sandboxed commands decided by the network map, by decision.", "counter",
				`decision="`+d+`"`, func() float64 { return float64(f(d)) })
		}
	}
	if f := src.Swept; f != nil {
		add("dsh_sweep_kills_total", "Processes and cgroups left by a dsh that no longer runs, killed at start.", "counter", "",
			func() float64 { return float64(f()) })
	}
}

// ContentType is the text format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		_ = m.Write(w)
	})
}

// Write writes every metric in the Prometheus text format, the
// families sorted by name and each one's series by their labels.
func (m *Metrics) Write(w io.Writer) error { return writeFamilies(w, m.families) }

// Call counts an ended call; it is a [tool.Observer].
func (m *Metrics) Call(_ context.Context, call tool.Call, res tool.Result) {
	name := call.Name
	if !slices.Contains(m.tools, name) {
		name = otherTool
	}
	outcome := Outcome(res)
	m.calls.add(1, name, outcome)
	if !call.Started.IsZero() {
		m.duration.observe(sinceSeconds(call.Started), name)
	}
	m.decisions.add(1, decision(res.Ruling.Outcome))
	st, ok := res.Structured.(bashtool.Structured)
	switch {
	case res.IsError && firstText(res) == tool.ErrorPrefix+bashtool.Aborted:
		m.kills.add(1, "aborted")
	case ok && st.TimedOut:
		m.kills.add(1, "timeout")
	}
	if ok && !st.Yielded && st.TaskID == "" {
		// A yielded call's output is counted with its task's end.
		m.addOutput(streamBytes(st.Stdout), streamBytes(st.Stderr))
	}
}

// TaskEnd counts an ended task; it is a settled listener.
func (m *Metrics) TaskEnd(snap tasks.Snapshot) {
	m.tasks.add(1, taskStatus(snap.Status))
	switch {
	case snap.Exit.TimedOut:
		m.kills.add(1, "timeout")
	case snap.Status == tasks.Killed:
		m.kills.add(1, "task")
	}
	m.addOutput(snap.Exit.StdoutBytes, snap.Exit.StderrBytes)
}

func (m *Metrics) addOutput(stdout, stderr int64) {
	if stdout > 0 {
		m.output.add(float64(stdout), "stdout")
	}
	if stderr > 0 {
		m.output.add(float64(stderr), "stderr")
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
