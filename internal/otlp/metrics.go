package otlp

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// MetricsPath is the path OTLP/HTTP receives metrics at.
const MetricsPath = "/v1/metrics"

// Kind is what a [Metric] is.
type Kind int

// The kinds of metric.
const (
	// Counter is a monotonic cumulative sum.
	Counter Kind = iota
	// Gauge is a value read when collected.
	Gauge
	// Histogram is a cumulative histogram with explicit bounds.
	Histogram
)

// Metric is one metric as collected: its name and its points.
type Metric struct {
	Name, Description, Unit string
	Kind                    Kind
	Points                  []Point
}

// Point is one series of a metric at collection.
type Point struct {
	Attrs []attribute.KeyValue
	// Value is a counter's or a gauge's value.
	Value float64
	// Count, Sum, Bounds and Buckets are a histogram's: Buckets has one
	// count per bound and one more above the last, not cumulative.
	Count   uint64
	Sum     float64
	Bounds  []float64
	Buckets []uint64
}

// Temporality and the aggregation it is.
const cumulative = 2

// EncodeMetrics is the ExportMetricsServiceRequest of ms, collected at
// now, counted since start.
func EncodeMetrics(res *resource.Resource, scope instrumentation.Scope, start, now time.Time, ms []Metric) []byte {
	var b buf
	b.msg(1, func(rm *buf) {
		rm.msg(1, func(m *buf) { m.resource(res) })
		rm.msg(2, func(sm *buf) {
			sm.scope(1, scope)
			for _, m := range ms {
				sm.msg(2, func(mb *buf) { mb.metric(m, unixNano(start), unixNano(now)) })
			}
			sm.str(3, scope.SchemaURL)
		})
		rm.str(3, res.SchemaURL())
	})
	return b
}

// metric writes the fields of a Metric message.
func (b *buf) metric(m Metric, start, now uint64) {
	b.str(1, m.Name)
	b.str(2, m.Description)
	b.str(3, m.Unit)
	numbers := func(d *buf) {
		for _, p := range m.Points {
			d.msg(1, func(n *buf) {
				n.fixed64(2, start)
				n.fixed64(3, now)
				n.fixed64Always(4, math.Float64bits(p.Value))
				n.keyValues(7, p.Attrs)
			})
		}
	}
	switch m.Kind {
	case Counter:
		b.msg(7, func(s *buf) {
			numbers(s)
			s.varint(2, cumulative)
			s.varint(3, 1)
		})
	case Gauge:
		b.msg(5, numbers)
	case Histogram:
		b.msg(9, func(h *buf) {
			for _, p := range m.Points {
				h.msg(1, func(d *buf) { d.histogramPoint(p, start, now) })
			}
			h.varint(2, cumulative)
		})
	}
}

func (b *buf) histogramPoint(p Point, start, now uint64) {
	b.fixed64(2, start)
	b.fixed64(3, now)
	b.fixed64(4, p.Count)
	b.fixed64Always(5, math.Float64bits(p.Sum))
	b.packedFixed64(6, p.Buckets)
	bounds := make([]uint64, len(p.Bounds))
	for i, f := range p.Bounds {
		bounds[i] = math.Float64bits(f)
	}
	b.packedFixed64(7, bounds)
	b.keyValues(9, p.Attrs)
}
