package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP receiver on loopback that decodes what it
// is sent with the protocol's own Go types.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	logs    *collogs.ExportLogsServiceRequest
	metrics []*colmetrics.ExportMetricsServiceRequest
	auth    []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{logs: &collogs.ExportLogsServiceRequest{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.auth = append(r.auth, req.Header.Get("X-Api-Key"))
		switch req.URL.Path {
		case "/v1/traces":
			var m coltrace.ExportTraceServiceRequest
			err = proto.Unmarshal(body, &m)
			for _, rs := range m.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					r.spans = append(r.spans, ss.Spans...)
				}
			}
		case "/v1/logs":
			var m collogs.ExportLogsServiceRequest
			err = proto.Unmarshal(body, &m)
			r.logs.ResourceLogs = append(r.logs.ResourceLogs, m.ResourceLogs...)
		case "/v1/metrics":
			m := &colmetrics.ExportMetricsServiceRequest{}
			err = proto.Unmarshal(body, m)
			r.metrics = append(r.metrics, m)
		default:
			http.NotFound(w, req)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// attrs is a span's or a record's attributes by key, as text.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.Value
		switch {
		case v.GetValue() == nil:
		case v.GetStringValue() != "" || v.GetValue() == (&commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{}}).Value:
			m[kv.Key] = v.GetStringValue()
		default:
			m[kv.Key] = strings.TrimSpace(strings.SplitN(v.String(), ":", 2)[1])
		}
	}
	return m
}

// TestOpenTelemetry drives dsh mcp with the Go SDK's client through an
// allowed, a denied, an asked and a timed-out call, with a PreToolUse
// hook, and reads what a loopback OTLP/HTTP receiver got once the session
// ended: a span per call named as GenAI's conventions say, with the
// decision, exit code, bytes and error type; the policy's check, the
// question and the hook as its children; the audit records as log
// records of the same trace; the metrics; and no command text anywhere,
// since otel.logCommands is off.
func TestOpenTelemetry(t *testing.T) {
	t.Parallel()
	r := newOTLPReceiver(t)
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
          command: "true"
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
		{"rm -rf /nonexistent", "Error: denied by policy"},
		{"touch asked", "(no output)"},
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

	r.mu.Lock()
	defer r.mu.Unlock()
	calls := map[string]*tracepb.Span{}
	children := map[string][]*tracepb.Span{}
	for _, s := range r.spans {
		if s.Name == "execute_tool bash" {
			calls[attrs(s.Attributes)["dsh.decision"]+"/"+attrs(s.Attributes)["dsh.timed_out"]] = s
		} else {
			children[string(s.ParentSpanId)] = append(children[string(s.ParentSpanId)], s)
		}
	}
	check := func(key string, want map[string]string, status tracepb.Status_StatusCode, kids ...string) {
		t.Helper()
		s := calls[key]
		if s == nil {
			t.Errorf("no span of the %s call among %d spans", key, len(r.spans))
			return
		}
		got := attrs(s.Attributes)
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
			names = append(names, c.Name+":"+attrs(c.Attributes)["dsh.policy.decision"]+attrs(c.Attributes)["dsh.ask.answer"]+attrs(c.Attributes)["dsh.hook.outcome"])
		}
		slices.Sort(names)
		if !slices.Equal(names, kids) {
			t.Errorf("%s: children %v, want %v", key, names, kids)
		}
	}
	base := map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.type": "function"}
	with := func(m map[string]string) map[string]string {
		for k, v := range base {
			m[k] = v
		}
		return m
	}
	check("allow/", with(map[string]string{"process.exit.code": "0", "dsh.stdout.bytes": "15", "dsh.stderr.bytes": "0"}),
		tracepb.Status_STATUS_CODE_UNSET, "dsh.hook:ok", "dsh.policy:allow")
	check("deny/", with(map[string]string{"error.type": "DENIED", "dsh.decided_by": `deny rule "rm -rf *" (dsh config)`}),
		tracepb.Status_STATUS_CODE_ERROR, "dsh.hook:ok", "dsh.policy:deny")
	check("ask:accepted/", with(map[string]string{"process.exit.code": "0"}),
		tracepb.Status_STATUS_CODE_UNSET, "dsh.ask:accepted", "dsh.hook:ok", "dsh.policy:ask", "dsh.policy:ask")
	check("allow/true", with(map[string]string{"error.type": "timeout", "dsh.signal": "SIGTERM"}),
		tracepb.Status_STATUS_CODE_ERROR, "dsh.hook:ok", "dsh.policy:allow")

	// The audit records: one per call, in its span's trace.
	var records int
	for _, rl := range r.logs.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, lr := range sl.LogRecords {
				a := attrs(lr.Attributes)
				if lr.EventName != "dsh.audit.call" || lr.Body.GetStringValue() != "call" || a["tool"] != "bash" {
					t.Errorf("log record %v", lr)
					continue
				}
				records++
				if s := calls[a["decision"]+"/"+map[bool]string{true: "true"}[a["timedOut"] == "true"]]; s == nil ||
					!slices.Equal(lr.TraceId, s.TraceId) || !slices.Equal(lr.SpanId, s.SpanId) {
					t.Errorf("log record %v is not in its call's span", a)
				}
				if _, ok := a["command"]; ok {
					t.Errorf("log record has the command: %v", a)
				}
			}
		}
	}
	if records != 4 {
		t.Errorf("%d call records, want 4", records)
	}
	// The metrics, sent once more at the end.
	var calls4 bool
	for _, m := range r.metrics {
		for _, mt := range m.ResourceMetrics[0].ScopeMetrics[0].Metrics {
			if mt.Name != "dsh_tool_calls_total" {
				continue
			}
			var n float64
			for _, p := range mt.GetSum().DataPoints {
				n += p.GetAsDouble()
			}
			calls4 = calls4 || n == 4
		}
	}
	if !calls4 {
		t.Errorf("no dsh_tool_calls_total of 4 in %d metric requests", len(r.metrics))
	}
	for _, a := range r.auth {
		if a != "k1" {
			t.Errorf("a request without the configured header: %q", a)
		}
	}
	// No command text anywhere: logCommands is off.
	for _, s := range r.spans {
		if strings.Contains(s.String(), "allowed-secret") {
			t.Errorf("span %s holds the command", s.Name)
		}
	}
	if strings.Contains(r.logs.String(), "allowed-secret") {
		t.Error("a log record holds the command")
	}
}
