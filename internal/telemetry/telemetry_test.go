package telemetry_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/telemetry"
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
			traces: "http://c:4318/v1/traces", metrics: "http://c:4318/v1/metrics", headers: map[string]string{"a": "cfg", "b": "x y"}},
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
				`OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not name=value; left out`,
				`OTEL_EXPORTER_OTLP_METRICS_TIMEOUT="soon" is not a positive number of milliseconds: using 10000`,
				`OTEL_EXPORTER_OTLP_HEADERS: "novalue" is not name=value; left out`,
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
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
}
