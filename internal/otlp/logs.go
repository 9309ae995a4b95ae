package otlp

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
)

// LogsPath is the path OTLP/HTTP receives logs at.
const LogsPath = "/v1/logs"

// LogExporter sends log records to an OTLP/HTTP receiver; it is an
// [sdklog.Exporter].
type LogExporter struct{ c *Client }

// NewLogExporter returns the exporter that posts to c.
func NewLogExporter(c *Client) *LogExporter { return &LogExporter{c: c} }

// Export sends records in one request.
func (e *LogExporter) Export(ctx context.Context, records []sdklog.Record) error {
	if len(records) == 0 {
		return nil
	}
	return e.c.Post(ctx, EncodeLogs(records))
}

// Shutdown ends the exporter; a later export fails.
func (e *LogExporter) Shutdown(context.Context) error { e.c.Close(); return nil }

// ForceFlush has nothing to do: Export sends at once.
func (e *LogExporter) ForceFlush(context.Context) error { return nil }

// EncodeLogs is the ExportLogsServiceRequest of records, grouped as
// [EncodeSpans] groups spans.
func EncodeLogs(records []sdklog.Record) []byte {
	ptrs := make([]*sdklog.Record, len(records))
	for i := range records {
		ptrs[i] = &records[i]
	}
	groups := group(ptrs, func(r *sdklog.Record) (*resource.Resource, instrumentation.Scope) {
		return r.Resource(), r.InstrumentationScope()
	})
	// The official exporter leaves out a resource without attributes.
	return encodeGroups(groups, false, (*buf).logRecord)
}

// logRecord writes the fields of a LogRecord message.
func (b *buf) logRecord(r *sdklog.Record) {
	b.fixed64(1, unixNano(r.Timestamp()))
	b.varint(2, uint64(r.Severity()))
	b.str(3, r.SeverityText())
	b.msg(5, func(m *buf) { m.anyValue(r.Body()) })
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		b.keyValues(6, []attribute.KeyValue{kv})
		return true
	})
	b.varint(7, clamp32(r.DroppedAttributes()))
	b.fixed32(8, uint32(r.TraceFlags()))
	if id := r.TraceID(); id.IsValid() {
		b.bytes(9, id[:])
	}
	if id := r.SpanID(); id.IsValid() {
		b.bytes(10, id[:])
	}
	b.fixed64(11, unixNano(r.ObservedTimestamp()))
	b.str(12, r.EventName())
}
