package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/dsh-go/dsh/internal/otlp/otlptest"
)

// TestOpenTelemetry drives dsh mcp with the Go SDK's client through an
// allowed, a denied, an asked and a timed-out call, and one a hook
// blocks, and reads what a loopback OTLP/HTTP receiver got once the
// session ended: a span per call named as GenAI's conventions say, with
// the decision, exit code, bytes and error type; the policy's check, the
// question and the hooks as its children; the audit records as log
// records of the same trace; the metrics; and no command text, hook
// command line or error text quoting a command anywhere, since
// otel.logCommands is off.
func TestOpenTelemetry(t *testing.T) {
	t.Parallel()
	r := otlptest.New(t)
	dir := t.TempDir()
	cfg := writeFile(t, "dsh.yaml", `permissions:
  allow: ["echo *", "sleep *"]
  ask: ["touch *"]
  deny: ["rm -rf *"]
  claudeSettings: false
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "HOOKSECRET=hook-secret; grep -q blockme && { echo nope >&2; exit 2; }; exit 0"
otel:
  endpoint: `+r.URL+`
  headers: {X-Api-Key: k1}
`)
	cmd := exec.Command(dshBin, "mcp", "--config", cfg, "--workdir", dir)
	cs, err := (&mcpAsker{}).client().Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	bash := func(command string, timeoutMs int) string {
		args := map[string]any{"command": command, "description": "otel"}
		if timeoutMs > 0 {
			args["timeoutMs"] = timeoutMs
		}
		return sdkText(t, sdkCall(t, cs, "bash", args))
	}
	for _, c := range []struct{ command, want string }{
		{"echo allowed-secret", "allowed-secret\n"},
		{"rm -rf /denied-secret", "Error: denied by policy"},
		{"touch asked", "(no output)"},
		{"echo blockme", "Error: "},
	} {
		if got := bash(c.command, 0); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q", c.command, got)
		}
	}
	if got := bash("sleep 60", 200); !strings.Contains(got, "[timed out after 200ms]") {
		t.Errorf("sleep: %q", got)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	_ = cmd.Wait()

	spans := r.Spans()
	calls := map[string]*tracepb.Span{}
	children := map[string][]*tracepb.Span{}
	for _, s := range spans {
		a := otlptest.Attrs(s.Attributes)
		if s.Name == "execute_tool bash" {
			calls[a["dsh.decision"]+"/"+a["dsh.timed_out"]] = s
		} else {
			children[string(s.ParentSpanId)] = append(children[string(s.ParentSpanId)], s)
		}
	}
	check := func(key string, want map[string]string, status tracepb.Status_StatusCode, kids ...string) {
		t.Helper()
		s := calls[key]
		if s == nil {
			t.Errorf("no span of the %s call among %d spans", key, len(spans))
			return
		}
		got := otlptest.Attrs(s.Attributes)
		for k, v := range map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.type": "function"} {
			want[k] = v
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", key, k, got[k], v, got)
			}
		}
		if s.Status.GetCode() != status || s.Kind != tracepb.Span_SPAN_KIND_INTERNAL || len(s.ParentSpanId) != 0 {
			t.Errorf("%s: status %v, kind %v, parent %x", key, s.Status, s.Kind, s.ParentSpanId)
		}
		var names []string
		for _, c := range children[string(s.SpanId)] {
			if !slices.Equal(c.TraceId, s.TraceId) {
				t.Errorf("%s: child %s in another trace", key, c.Name)
			}
			a := otlptest.Attrs(c.Attributes)
			names = append(names, c.Name+":"+a["dsh.policy.decision"]+a["dsh.ask.answer"]+a["dsh.hook.outcome"])
		}
		slices.Sort(names)
		if !slices.Equal(names, kids) {
			t.Errorf("%s: children %v, want %v", key, names, kids)
		}
	}
	check("allow/", map[string]string{"process.exit.code": "0", "dsh.stdout.bytes": "15", "dsh.stderr.bytes": "0"},
		tracepb.Status_STATUS_CODE_UNSET, "dsh.hook:ok", "dsh.policy:allow")
	check("deny/", map[string]string{"error.type": "DENIED", "dsh.decided_by": `deny rule "rm -rf *" (dsh config)`},
		tracepb.Status_STATUS_CODE_ERROR, "dsh.hook:ok", "dsh.policy:deny")
	check("ask:accepted/", map[string]string{"process.exit.code": "0"},
		tracepb.Status_STATUS_CODE_UNSET, "dsh.ask:accepted", "dsh.hook:ok", "dsh.policy:ask", "dsh.policy:ask")
	check("allow/true", map[string]string{"error.type": "timeout", "dsh.signal": "SIGTERM"},
		tracepb.Status_STATUS_CODE_ERROR, "dsh.hook:ok", "dsh.policy:allow")
	check("blocked/", map[string]string{"dsh.decided_by": "hook (dsh config)"},
		tracepb.Status_STATUS_CODE_ERROR, "dsh.hook:block")

	// The audit records: one per call, in its span.
	var records int
	for _, lr := range r.Logs() {
		a := otlptest.Attrs(lr.Attributes)
		if lr.EventName != "dsh.audit.call" || lr.Body.GetStringValue() != "call" || a["tool"] != "bash" {
			t.Errorf("log record %v", lr)
			continue
		}
		records++
		timedOut := map[bool]string{true: "true"}[a["timedOut"] == "true"]
		if s := calls[a["decision"]+"/"+timedOut]; s == nil || !slices.Equal(lr.TraceId, s.TraceId) || !slices.Equal(lr.SpanId, s.SpanId) {
			t.Errorf("log record %v is not in its call's span", a)
		}
	}
	if records != 5 {
		t.Errorf("%d call records, want 5", records)
	}
	// The metrics, sent once more at the end.
	var counted bool
	for _, mt := range r.Metrics() {
		if mt.Name == "dsh_tool_calls_total" {
			var n float64
			for _, p := range mt.GetSum().DataPoints {
				n += p.GetAsDouble()
			}
			counted = counted || n == 5
		}
	}
	if !counted {
		t.Error("no dsh_tool_calls_total of 5 among the metrics received")
	}
	for _, h := range r.Headers() {
		if h.Get("X-Api-Key") != "k1" {
			t.Errorf("a request without the configured header: %v", h)
		}
	}
	// No command text, hook command line or quoted command anywhere.
	for _, s := range spans {
		for _, secret := range []string{"allowed-secret", "denied-secret", "hook-secret"} {
			if strings.Contains(s.String(), secret) {
				t.Errorf("span %s holds %s", s.Name, secret)
			}
		}
	}
	for _, lr := range r.Logs() {
		for _, secret := range []string{"allowed-secret", "denied-secret", "hook-secret", "nope"} {
			if strings.Contains(lr.String(), secret) {
				t.Errorf("log record holds %s: %v", secret, lr)
			}
		}
	}
}
