package metrics_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/internal/metrics"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func intp(n int) *int { return &n }

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
# HELP dsh_tool_calls_total Tool calls that ended, by tool and outcome.
# TYPE dsh_tool_calls_total counter
dsh_tool_calls_total{outcome="ok",tool="bash"} 1
dsh_tool_calls_total{outcome="ok",tool="other"} 2
# HELP dsh_policy_decisions_total How tool calls were decided (the audit log's decision).
# TYPE dsh_policy_decisions_total counter
dsh_policy_decisions_total{decision="other"} 3
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "dsh_tool_calls_total", "dsh_policy_decisions_total"); err != nil {
		t.Error(err)
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
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}
