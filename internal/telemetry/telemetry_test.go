package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/otlp/otlptest"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/internal/telemetry"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolve(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name     string
		cfg      config.Otel
		env      map[string]string
		traces   string // the traces URL; "" off
		metrics  string
		headers  map[string]string
		warnings []string
	}{
		{name: "nothing"},
		{name: "section", cfg: config.Otel{Endpoint: "http://c:4318/", Headers: map[string]string{"a": "cfg"}},
			env:    map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=env,b=x%20y", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://other/t"},
			traces: "http://c:4318/v1/traces", metrics: "http://c:4318/v1/metrics", headers: map[string]string{"A": "cfg", "B": "x y"}},
		{name: "header names in any case", cfg: config.Otel{Endpoint: "http://c", Headers: map[string]string{"X-Api-Key": "cfg"}},
			env:    map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=env,bad=a%0Ab"},
			traces: "http://c/v1/traces", metrics: "http://c/v1/metrics", headers: map[string]string{"X-Api-Key": "cfg"},
			warnings: []string{
				`OTEL_EXPORTER_OTLP_HEADERS: "bad=a%0Ab" is not name=value of a valid header; left out`,
				`OTEL_EXPORTER_OTLP_HEADERS: "bad=a%0Ab" is not name=value of a valid header; left out`,
				`OTEL_EXPORTER_OTLP_HEADERS: "bad=a%0Ab" is not name=value of a valid header; left out`,
			}},
		{name: "a signal's headers replace the general ones", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c",
			"OTEL_EXPORTER_OTLP_HEADERS": "key=general", "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "other=metrics"},
			traces: "http://c/v1/traces", metrics: "http://c/v1/metrics", headers: map[string]string{"Other": "metrics"}},
		{name: "variables", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c/otlp", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/x"},
			traces: "http://t:1/x", metrics: "https://c/otlp/v1/metrics", headers: map[string]string{}},
		{name: "switched off", cfg: config.Otel{Endpoint: "http://c", Traces: &off},
			env: map[string]string{"OTEL_METRICS_EXPORTER": "none"}},
		{name: "disabled", cfg: config.Otel{Endpoint: "http://c"}, env: map[string]string{"OTEL_SDK_DISABLED": "true"}},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			warnings: []string{
				`OTEL_EXPORTER_OTLP_PROTOCOL="grpc": dsh speaks OTLP over HTTP only (http/protobuf); traces are off`,
				`OTEL_EXPORTER_OTLP_PROTOCOL="grpc": dsh speaks OTLP over HTTP only (http/protobuf); logs are off`,
				`OTEL_EXPORTER_OTLP_PROTOCOL="grpc": dsh speaks OTLP over HTTP only (http/protobuf); metrics are off`,
			}},
		{name: "bad values", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "zipkin",
			"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "soon", "OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
			metrics: "http://c/v1/metrics", headers: map[string]string{},
			warnings: []string{
				`OTEL_TRACES_EXPORTER="zipkin": dsh exports only otlp; traces are off`,
				`OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not name=value of a valid header; left out`,
				`OTEL_EXPORTER_OTLP_METRICS_TIMEOUT="soon" is not a positive number of milliseconds: using 10000`,
				`OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not name=value of a valid header; left out`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, warnings := telemetry.Resolve(tc.cfg, env(tc.env))
			url := func(sig *telemetry.Signal) string {
				if sig == nil {
					return ""
				}
				return sig.URL
			}
			if url(s.Traces) != tc.traces || url(s.Metrics) != tc.metrics {
				t.Errorf("traces %q, metrics %q", url(s.Traces), url(s.Metrics))
			}
			if s.Metrics != nil && !mapsEqual(s.Metrics.Headers, tc.headers) {
				t.Errorf("headers %v, want %v", s.Metrics.Headers, tc.headers)
			}
			if !slices.Equal(warnings, tc.warnings) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestOffIsNil: without a receiver named, New makes nothing, and a nil
// Telemetry's methods do nothing.
func TestOffIsNil(t *testing.T) {
	asked := false
	tel := telemetry.New(config.Otel{}, telemetry.Options{Getenv: env(nil), Version: func() string { asked = true; return "" }})
	if tel != nil || asked {
		t.Fatalf("New made %v; the version was asked: %v", tel, asked)
	}
	if tel.Tracer() != nil || tel.MetricsOn() || tel.Shutdown() != nil {
		t.Error("a nil Telemetry did something")
	}
	tel.Call(context.Background(), toolCall(), toolResult())
	tel.ExportMetrics(nil)
}

// TestShutdownBounded: a receiver that never answers holds Shutdown for
// at most its bound.
func TestShutdownBounded(t *testing.T) {
	hang := newHangingReceiver(t)
	tel := telemetry.New(config.Otel{Endpoint: hang}, telemetry.Options{Getenv: env(nil)})
	_, span := tel.Tracer().Start(context.Background(), "x")
	span.End()
	start := time.Now()
	_ = tel.Shutdown()
	if d := time.Since(start); d > proctest.Scale(4*time.Second) {
		t.Errorf("Shutdown took %v", d)
	}
}

// TestRecords: with logCommands, a call's span and record carry the
// command and its workdir; a task's end and a connection are records too;
// a hook that decided is named without its command line unless
// logCommands.
func TestRecords(t *testing.T) {
	for _, logCommands := range []bool{true, false} {
		r := otlptest.New(t)
		tel := telemetry.New(config.Otel{Endpoint: r.URL, LogCommands: logCommands}, telemetry.Options{Getenv: env(nil), Version: func() string { return "v1" }})
		ctx, span := tel.Tracer().Start(context.Background(), "execute_tool bash")
		code := 0
		call := tool.Call{Name: "bash", Args: []byte(`{"command":"echo cmd-secret","workdir":"/w"}`), Started: time.Now()}
		tel.Call(ctx, call, tool.Result{Structured: bashtool.Structured{ExitCode: &code},
			Ruling: tool.Ruling{Outcome: tool.OutcomeAllow, By: "hook: TOKEN=hook-secret check.sh (dsh config)"}})
		span.End()
		tel.TaskEnd(tasks.Snapshot{ID: "t1", Owner: "s1", Status: tasks.Completed, Started: time.Now(), Finished: time.Now()})
		tel.Net("s1", gateway.Record{Host: "example.com", Port: 443, Decision: gateway.Allow, Rule: "allow: example.com"})
		if err := tel.Shutdown(); err != nil {
			t.Fatal(err)
		}
		spans := r.Spans()
		if len(spans) != 1 {
			t.Fatalf("%d spans", len(spans))
		}
		a := otlptest.Attrs(spans[0].Attributes)
		wantBy := "hook (dsh config)"
		if logCommands {
			wantBy = "hook: TOKEN=hook-secret check.sh (dsh config)"
		}
		if (a["process.command_line"] == "echo cmd-secret") != logCommands || (a["process.working_directory"] == "/w") != logCommands ||
			a["dsh.decided_by"] != wantBy || a["process.exit.code"] != "0" {
			t.Errorf("logCommands %v: span attributes %v", logCommands, a)
		}
		var events []string
		for _, lr := range r.Logs() {
			events = append(events, lr.EventName)
			la := otlptest.Attrs(lr.Attributes)
			if lr.EventName == "dsh.audit.call" && ((la["command"] == "echo cmd-secret") != logCommands || la["decidedBy"] != wantBy) {
				t.Errorf("logCommands %v: call record %v", logCommands, la)
			}
			if lr.EventName == "dsh.audit.net" && (la["host"] != "example.com" || la["port"] != "443") {
				t.Errorf("net record %v", la)
			}
		}
		if !slices.Equal(events, []string{"dsh.audit.call", "dsh.audit.task-end", "dsh.audit.net"}) {
			t.Errorf("records %v", events)
		}
	}
}
