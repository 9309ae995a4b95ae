package otlp

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// keyValues writes attrs as repeated KeyValue fields.
func (b *buf) keyValues(field int, attrs []attribute.KeyValue) {
	for _, kv := range attrs {
		b.msg(field, func(m *buf) {
			m.str(1, string(kv.Key))
			m.msg(2, func(v *buf) { v.anyValue(kv.Value) })
		})
	}
}

// anyValue writes the fields of an AnyValue: one member of its oneof,
// written even at its zero value; none for an empty value.
func (b *buf) anyValue(v attribute.Value) {
	switch v.Type() {
	case attribute.STRING:
		b.strAlways(1, v.AsString())
	case attribute.BOOL:
		b.varintAlways(2, boolBit(v.AsBool()))
	case attribute.INT64:
		b.varintAlways(3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b.fixed64Always(4, math.Float64bits(v.AsFloat64()))
	case attribute.BYTESLICE:
		b.strAlways(7, string(v.AsByteSlice()))
	case attribute.MAP:
		b.msg(6, func(l *buf) { l.keyValues(1, v.AsMap()) })
	case attribute.EMPTY:
	default:
		if vs, ok := sliceValues(v); ok {
			b.msg(5, func(a *buf) {
				for _, e := range vs {
					a.msg(1, func(x *buf) { x.anyValue(e) })
				}
			})
			return
		}
		b.strAlways(1, "INVALID") // as the official exporters write a type they do not know
	}
}

// sliceValues is a slice value's elements.
func sliceValues(v attribute.Value) ([]attribute.Value, bool) {
	switch v.Type() {
	case attribute.SLICE:
		return v.AsSlice(), true
	case attribute.BOOLSLICE:
		return each(v.AsBoolSlice(), attribute.BoolValue), true
	case attribute.INT64SLICE:
		return each(v.AsInt64Slice(), attribute.Int64Value), true
	case attribute.FLOAT64SLICE:
		return each(v.AsFloat64Slice(), attribute.Float64Value), true
	case attribute.STRINGSLICE:
		return each(v.AsStringSlice(), attribute.StringValue), true
	}
	return nil, false
}

func each[T any](xs []T, f func(T) attribute.Value) []attribute.Value {
	out := make([]attribute.Value, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func boolBit(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// resource writes r as a Resource message's fields.
func (b *buf) resource(r *resource.Resource) {
	if r != nil {
		b.keyValues(1, r.Attributes())
	}
}

// scope writes s as an InstrumentationScope field; the empty scope is
// left out.
func (b *buf) scope(field int, s instrumentation.Scope) {
	if s == (instrumentation.Scope{}) {
		return
	}
	b.msg(field, func(m *buf) {
		m.str(1, s.Name)
		m.str(2, s.Version)
		m.keyValues(3, s.Attributes.ToSlice())
	})
}

// unixNano is t in nanoseconds since the epoch; 0 before it (and for
// the zero time).
func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(max(0, t.UnixNano()))
}

// clamp32 is n as a uint32 count.
func clamp32(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) }
