package otlp

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TracesPath is the path OTLP/HTTP receives traces at.
const TracesPath = "/v1/traces"

// SpanExporter sends spans to an OTLP/HTTP receiver; it is an
// [sdktrace.SpanExporter].
type SpanExporter struct{ c *Client }

// NewSpanExporter returns the exporter that posts to c.
func NewSpanExporter(c *Client) *SpanExporter { return &SpanExporter{c: c} }

// ExportSpans sends spans in one request.
func (e *SpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	return e.c.Post(ctx, EncodeSpans(spans))
}

// Shutdown ends the exporter; a later export fails.
func (e *SpanExporter) Shutdown(context.Context) error { e.c.Close(); return nil }

// EncodeSpans is the ExportTraceServiceRequest of spans: one
// ResourceSpans per resource and one ScopeSpans per scope, in the order
// they first appear.
func EncodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	groups := group(spans, func(s sdktrace.ReadOnlySpan) (*resource.Resource, instrumentation.Scope) {
		return s.Resource(), s.InstrumentationScope()
	})
	return encodeGroups(groups, true, (*buf).span)
}

// encodeGroups is an export request of groups: per resource a
// Resource{Spans,Logs} (its resource left out when it has no attributes
// unless always), per scope a Scope{Spans,Logs} of items written by item.
// Spans and logs share the field numbers.
func encodeGroups[T any](groups []*resourceGroup[T], always bool, item func(*buf, T)) []byte {
	var b buf
	for _, r := range groups {
		b.msg(1, func(rs *buf) {
			if always || r.res.Len() > 0 {
				rs.msg(1, func(m *buf) { m.resource(r.res) })
			}
			for _, sc := range r.scopes {
				rs.msg(2, func(ss *buf) {
					ss.scope(1, sc.scope)
					for _, it := range sc.items {
						ss.msg(2, func(m *buf) { item(m, it) })
					}
					ss.str(3, sc.scope.SchemaURL)
				})
			}
			rs.str(3, r.res.SchemaURL())
		})
	}
	return b
}

// span writes the fields of a Span message.
func (b *buf) span(s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b.bytes(1, tid[:])
	b.bytes(2, sid[:])
	b.str(3, sc.TraceState().String())
	if p := s.Parent().SpanID(); p.IsValid() {
		b.bytes(4, p[:])
	}
	b.str(5, s.Name())
	b.varint(6, uint64(s.SpanKind()))
	b.fixed64(7, unixNano(s.StartTime()))
	b.fixed64(8, unixNano(s.EndTime()))
	b.keyValues(9, s.Attributes())
	b.varint(10, clamp32(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		b.msg(11, func(m *buf) {
			m.fixed64(1, unixNano(ev.Time))
			m.str(2, ev.Name)
			m.keyValues(3, ev.Attributes)
			m.varint(4, clamp32(ev.DroppedAttributeCount))
		})
	}
	b.varint(12, clamp32(s.DroppedEvents()))
	for _, l := range s.Links() {
		b.msg(13, func(m *buf) {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			m.bytes(1, ltid[:])
			m.bytes(2, lsid[:])
			m.keyValues(4, l.Attributes)
			m.varint(5, clamp32(l.DroppedAttributeCount))
			m.fixed32(6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		})
	}
	b.varint(14, clamp32(s.DroppedLinks()))
	b.msg(15, func(m *buf) {
		st := s.Status()
		m.str(2, st.Description)
		m.varint(3, statusCode(st.Code))
	})
	b.fixed32(16, spanFlags(sc.TraceFlags(), s.Parent()))
}

// The SpanFlags bits: whether the parent's remoteness is known, and is.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// statusCode is c as OTLP's StatusCode: unset 0, ok 1, error 2.
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// resourceGroup is the items of one resource, by scope.
type resourceGroup[T any] struct {
	res    *resource.Resource
	scopes []*scopeGroup[T]
}

type scopeGroup[T any] struct {
	scope instrumentation.Scope
	items []T
}

// group sorts items by resource, then scope, in the order each first
// appears.
func group[T any](items []T, of func(T) (*resource.Resource, instrumentation.Scope)) []*resourceGroup[T] {
	var out []*resourceGroup[T]
	for _, it := range items {
		res, sc := of(it)
		var r *resourceGroup[T]
		for _, g := range out {
			if g.res.Equivalent() == res.Equivalent() {
				r = g
				break
			}
		}
		if r == nil {
			r = &resourceGroup[T]{res: res}
			out = append(out, r)
		}
		var s *scopeGroup[T]
		for _, g := range r.scopes {
			if g.scope == sc {
				s = g
				break
			}
		}
		if s == nil {
			s = &scopeGroup[T]{scope: sc}
			r.scopes = append(r.scopes, s)
		}
		s.items = append(s.items, it)
	}
	return out
}
