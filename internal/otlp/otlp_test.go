package otlp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/dsh-go/dsh/internal/otlp"
	"github.com/dsh-go/dsh/internal/otlp/otlptest"
)

// only is the body of the one request r got at path.
func only(t *testing.T, r *otlptest.Receiver, path string) []byte {
	t.Helper()
	bodies := r.Bodies(path)
	if len(bodies) != 1 {
		t.Fatalf("%s: %d requests, want 1", path, len(bodies))
	}
	return bodies[0]
}

// spans are spans with everything a span can carry: every attribute
// type, events, links, a status, a remote parent, two resources and two
// scopes.
func spans() []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("k=v")
	sc := func(sid byte, remote bool) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{sid}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: remote})
	}
	res1 := resource.NewSchemaless(attribute.String("service.name", "dsh"), attribute.Int("n", 1))
	res2 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "other"))
	scope1 := instrumentation.Scope{Name: "a", Version: "1", SchemaURL: "https://x/s", Attributes: attribute.NewSet(attribute.Bool("b", true))}
	scope2 := instrumentation.Scope{Name: "b"}
	t0 := time.Unix(1700000000, 123456789)
	all := []attribute.KeyValue{
		attribute.String("s", "x"), attribute.String("empty", ""), attribute.Bool("f", false), attribute.Bool("t", true),
		attribute.Int64("i", -5), attribute.Int64("zero", 0), attribute.Float64("d", 1.5), attribute.Float64("dz", 0),
		attribute.StringSlice("ss", []string{"a", ""}), attribute.Int64Slice("is", []int64{0, -1}),
		attribute.Float64Slice("ds", []float64{0.5}), attribute.BoolSlice("bs", []bool{true, false}),
		attribute.ByteSlice("by", []byte{0, 1}),
		{Key: "m", Value: attribute.MapValue(attribute.String("k", "v"), attribute.Int("n", 2))},
		{Key: "sl", Value: attribute.SliceValue(attribute.StringValue("x"), attribute.IntValue(3))},
	}
	stubs := tracetest.SpanStubs{
		{Name: "root", SpanContext: sc(1, false), SpanKind: trace.SpanKindInternal, StartTime: t0, EndTime: t0.Add(time.Second),
			Attributes: all, Resource: res1, InstrumentationScope: scope1,
			Status: sdktrace.Status{Code: codes.Error, Description: "boom"}, DroppedAttributes: 2, DroppedEvents: 1, DroppedLinks: 3,
			Events: []sdktrace.Event{{Name: "e", Time: t0, Attributes: all[:3], DroppedAttributeCount: 1}, {Name: "bare"}},
			Links:  []sdktrace.Link{{SpanContext: sc(9, true), Attributes: all[4:6], DroppedAttributeCount: 4}}},
		{Name: "child", SpanContext: sc(2, false), Parent: sc(1, false), SpanKind: trace.SpanKindClient, StartTime: t0, EndTime: t0,
			Resource: res1, InstrumentationScope: scope2, Status: sdktrace.Status{Code: codes.Ok}},
		{Name: "remote-child", SpanContext: sc(3, false), Parent: sc(7, true), Resource: res2, InstrumentationScope: scope1},
		{Name: "", SpanContext: sc(4, false), Resource: res1, InstrumentationScope: scope1},
	}
	return stubs.Snapshots()
}

// TestSpansAsOfficialExporter: the spans this package encodes decode as
// the same request the official OTLP/HTTP exporter sends for them.
func TestSpansAsOfficialExporter(t *testing.T) {
	ctx := context.Background()
	theirs, mine := otlptest.New(t), otlptest.New(t)
	official, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(theirs.URL+otlp.TracesPath), otlptracehttp.WithCompression(otlptracehttp.NoCompression))
	if err != nil {
		t.Fatal(err)
	}
	if err := official.ExportSpans(ctx, spans()); err != nil {
		t.Fatal(err)
	}
	ours := otlp.NewSpanExporter(otlp.NewClient(otlp.ClientConfig{URL: mine.URL + otlp.TracesPath, Gzip: true}))
	if err := ours.ExportSpans(ctx, spans()); err != nil {
		t.Fatal(err)
	}
	var want, got coltrace.ExportTraceServiceRequest
	decode(t, only(t, theirs, otlp.TracesPath), &want)
	decode(t, only(t, mine, otlp.TracesPath), &got)
	// The official exporter groups through a map: its order varies.
	sortBy(want.ResourceSpans, func(i int) string { return want.ResourceSpans[i].Resource.String() })
	sortBy(got.ResourceSpans, func(i int) string { return got.ResourceSpans[i].Resource.String() })
	if !proto.Equal(&want, &got) {
		t.Fatalf("requests differ\nofficial: %v\nours:     %v", &want, &got)
	}
	if len(got.ResourceSpans) != 2 || len(got.ResourceSpans[0].ScopeSpans) != 2 {
		t.Fatalf("grouping: %v", &got)
	}
}

// TestLogsAsOfficialExporter: likewise for log records.
func TestLogsAsOfficialExporter(t *testing.T) {
	ctx := context.Background()
	records := logRecords(t)
	theirs, mine := otlptest.New(t), otlptest.New(t)
	official, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(theirs.URL+otlp.LogsPath), otlploghttp.WithCompression(otlploghttp.NoCompression))
	if err != nil {
		t.Fatal(err)
	}
	if err := official.Export(ctx, records); err != nil {
		t.Fatal(err)
	}
	ours := otlp.NewLogExporter(otlp.NewClient(otlp.ClientConfig{URL: mine.URL + otlp.LogsPath}))
	if err := ours.Export(ctx, records); err != nil {
		t.Fatal(err)
	}
	var want, got collogs.ExportLogsServiceRequest
	decode(t, only(t, theirs, otlp.LogsPath), &want)
	decode(t, only(t, mine, otlp.LogsPath), &got)
	if !proto.Equal(&want, &got) {
		t.Fatalf("requests differ\nofficial: %v\nours:     %v", &want, &got)
	}
	if n := len(got.ResourceLogs[0].ScopeLogs); n != 2 {
		t.Fatalf("%d scopes, want 2: %v", n, &got)
	}
}

// capture keeps what the loggers emit.
type capture struct{ records []sdklog.Record }

func (c *capture) OnEmit(_ context.Context, r *sdklog.Record) error {
	c.records = append(c.records, r.Clone())
	return nil
}
func (c *capture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *capture) Shutdown(context.Context) error                         { return nil }
func (c *capture) ForceFlush(context.Context) error                       { return nil }

func logRecords(t *testing.T) []sdklog.Record {
	c := &capture{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(c), sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "dsh"))))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	var rec otellog.Record
	rec.SetTimestamp(time.Unix(1700000000, 5))
	rec.SetObservedTimestamp(time.Unix(1700000001, 0))
	rec.SetSeverity(otellog.SeverityInfo)
	rec.SetSeverityText("INFO")
	rec.SetEventName("dsh.audit.call")
	rec.SetBody(attribute.StringValue("call"))
	rec.AddAttributes(attribute.String("tool", "bash"), attribute.Int("exitCode", 0), attribute.Bool("timedOut", false))
	lp.Logger("a", otellog.WithInstrumentationVersion("1")).Emit(ctx, rec)
	var bare otellog.Record
	lp.Logger("b").Emit(context.Background(), bare)
	return c.records
}

// TestMetricsDecode: a counter, a gauge and a histogram decode with every
// field in its place.
func TestMetricsDecode(t *testing.T) {
	res := resource.NewSchemaless(attribute.String("service.name", "dsh"))
	start, now := time.Unix(1700000000, 0), time.Unix(1700000060, 0)
	body := otlp.EncodeMetrics(res, instrumentation.Scope{Name: "dsh"}, start, now, []otlp.Metric{
		{Name: "calls", Description: "Calls.", Kind: otlp.Counter, Points: []otlp.Point{{Attrs: []attribute.KeyValue{attribute.String("tool", "bash")}, Value: 3}, {Value: 0}}},
		{Name: "open", Unit: "{session}", Kind: otlp.Gauge, Points: []otlp.Point{{Value: 2}}},
		{Name: "duration", Unit: "s", Kind: otlp.Histogram, Points: []otlp.Point{{Count: 3, Sum: 0.75, Bounds: []float64{0.1, 1}, Buckets: []uint64{1, 2, 0}}}},
	})
	var got colmetrics.ExportMetricsServiceRequest
	decode(t, body, &got)
	ms := got.ResourceMetrics[0].ScopeMetrics[0].Metrics
	if got.ResourceMetrics[0].Resource.Attributes[0].Value.GetStringValue() != "dsh" || len(ms) != 3 {
		t.Fatalf("request: %v", &got)
	}
	sum := ms[0].GetSum()
	if ms[0].Name != "calls" || ms[0].Description != "Calls." || !sum.IsMonotonic || sum.AggregationTemporality != 2 ||
		sum.DataPoints[0].GetAsDouble() != 3 || sum.DataPoints[0].Attributes[0].Key != "tool" ||
		sum.DataPoints[0].StartTimeUnixNano != uint64(start.UnixNano()) || sum.DataPoints[0].TimeUnixNano != uint64(now.UnixNano()) ||
		len(sum.DataPoints) != 2 || sum.DataPoints[1].Value == nil {
		t.Errorf("counter: %v", ms[0])
	}
	if g := ms[1].GetGauge(); ms[1].Unit != "{session}" || g.DataPoints[0].GetAsDouble() != 2 {
		t.Errorf("gauge: %v", ms[1])
	}
	h := ms[2].GetHistogram()
	if h.AggregationTemporality != 2 || h.DataPoints[0].Count != 3 || h.DataPoints[0].GetSum() != 0.75 ||
		!slices.Equal(h.DataPoints[0].BucketCounts, []uint64{1, 2, 0}) || !slices.Equal(h.DataPoints[0].ExplicitBounds, []float64{0.1, 1}) {
		t.Errorf("histogram: %v", ms[2])
	}
}

// TestRetries: a receiver that answers 503 once is sent the request
// again; a 400 is not.
func TestRetries(t *testing.T) {
	var mu sync.Mutex
	var codes []int
	answer := []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusBadRequest}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		c := answer[len(codes)%len(answer)]
		codes = append(codes, c)
		mu.Unlock()
		w.WriteHeader(c)
	}))
	defer srv.Close()
	var logged bytes.Buffer
	c := otlp.NewClient(otlp.ClientConfig{URL: srv.URL, Logger: newLogger(&logged)})
	e := otlp.NewSpanExporter(c)
	if err := e.ExportSpans(context.Background(), spans()); err != nil {
		t.Fatalf("a 503 then 200: %v", err)
	}
	if err := e.ExportSpans(context.Background(), spans()); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a 400: %v", err)
	}
	if !slices.Equal(codes, answer) {
		t.Errorf("answers: %v", codes)
	}
	if !strings.Contains(logged.String(), "export failed") {
		t.Errorf("the failure was not logged: %q", logged.String())
	}
	_ = e.Shutdown(context.Background())
	if err := e.ExportSpans(context.Background(), spans()); err == nil {
		t.Error("an export after Shutdown went through")
	}
}

// decode unmarshals b into m and fails on any field m's schema does not
// know: a field written under a wrong number.
func decode(t *testing.T, b []byte, m proto.Message) {
	t.Helper()
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	noUnknown(t, m.ProtoReflect())
}

func noUnknown(t *testing.T, m protoreflect.Message) {
	t.Helper()
	if u := m.GetUnknown(); len(u) > 0 {
		t.Fatalf("%s has unknown fields %x", m.Descriptor().FullName(), u)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				noUnknown(t, v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			noUnknown(t, v.Message())
		}
		return true
	})
}

func sortBy[T any](xs []T, key func(int) string) {
	keys := make([]string, len(xs))
	for i := range xs {
		keys[i] = key(i)
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	sorted := make([]T, len(xs))
	for i, j := range idx {
		sorted[i] = xs[j]
	}
	copy(xs, sorted)
}

// TestFinalAndFinalErrors: after Final a post is one attempt; a request
// HTTP cannot send is not retried either.
func TestFinalAndFinalErrors(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var logged bytes.Buffer
	c := otlp.NewClient(otlp.ClientConfig{URL: srv.URL, Logger: newLogger(&logged)})
	c.Final()
	if err := c.Post(context.Background(), []byte{}); err == nil || n != 1 {
		t.Errorf("after Final: %v, %d attempts", err, n)
	}
	bad := otlp.NewClient(otlp.ClientConfig{URL: srv.URL, Headers: map[string]string{"X-Key": "a\nb"}, Logger: newLogger(&logged), Timeout: time.Hour})
	if err := bad.Post(context.Background(), []byte{}); err == nil || !strings.Contains(err.Error(), "invalid header") || n != 1 {
		t.Errorf("a header HTTP cannot carry: %v, %d attempts", err, n)
	}
	c.Close()
	bad.Close()
}
