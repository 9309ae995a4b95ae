// Package otlptest is an OTLP/HTTP receiver for tests, on loopback: it
// decodes what it is sent with the protocol's generated Go types, as a
// collector would, and keeps it.
package otlptest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is a loopback OTLP/HTTP receiver; its URL is the base URL.
type Receiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	logs    []*logspb.LogRecord
	metrics []*metricspb.Metric
	headers []http.Header
	bodies  map[string][][]byte // by path, gunzipped
}

// New starts a receiver, closed at the test's end.
func New(t testing.TB) *Receiver {
	r := &Receiver{bodies: map[string][][]byte{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	r.bodies[req.URL.Path] = append(r.bodies[req.URL.Path], b)
	switch req.URL.Path {
	case "/v1/traces":
		var m coltrace.ExportTraceServiceRequest
		err = proto.Unmarshal(b, &m)
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
	case "/v1/logs":
		var m collogs.ExportLogsServiceRequest
		err = proto.Unmarshal(b, &m)
		for _, rl := range m.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				r.logs = append(r.logs, sl.LogRecords...)
			}
		}
	case "/v1/metrics":
		var m colmetrics.ExportMetricsServiceRequest
		err = proto.Unmarshal(b, &m)
		for _, rm := range m.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				r.metrics = append(r.metrics, sm.Metrics...)
			}
		}
	default:
		http.NotFound(w, req)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}

// Spans are the spans received so far.
func (r *Receiver) Spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// Logs are the log records received so far.
func (r *Receiver) Logs() []*logspb.LogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*logspb.LogRecord(nil), r.logs...)
}

// Metrics are the metrics received so far, request after request.
func (r *Receiver) Metrics() []*metricspb.Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*metricspb.Metric(nil), r.metrics...)
}

// Bodies are the bodies of the requests to path so far, uncompressed.
func (r *Receiver) Bodies(path string) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies[path]...)
}

// Headers are the headers of every request received so far.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Attrs are attributes by key, each value as text: a string as it is,
// another value as its protobuf text ("int_value:3" is "3").
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.GetValue().(type) {
		case nil:
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = strconv.FormatBool(v.BoolValue)
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}
