package metrics

import (
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/dsh-go/dsh/internal/otlp"
)

// OTLP collects dsh's own metrics (not the Go runtime's and the
// process's) for an OTLP export (docs/spec.md §15.4): the same names,
// help texts and labels as the Prometheus text, counters as monotonic
// cumulative sums, gauges as gauges, the histogram with its buckets.
func (m *Metrics) OTLP() []otlp.Metric {
	var out []otlp.Metric
	for _, v := range m.vecs {
		if mt, ok := v.otlp(); ok {
			out = append(out, mt)
		}
	}
	byName := map[string]int{}
	for _, f := range m.funcs {
		p := otlp.Point{Value: f.f()}
		if f.key != "" {
			p.Attrs = []attribute.KeyValue{attribute.String(f.key, f.value)}
		}
		if i, ok := byName[f.name]; ok {
			out[i].Points = append(out[i].Points, p)
			continue
		}
		kind := otlp.Gauge
		if f.typ == "counter" {
			kind = otlp.Counter
		}
		byName[f.name] = len(out)
		out = append(out, otlp.Metric{Name: f.name, Description: f.help, Kind: kind, Points: []otlp.Point{p}})
	}
	slices.SortStableFunc(out, func(a, b otlp.Metric) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// otlp is v's series; false when it has none.
func (v *vec) otlp() (otlp.Metric, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.series) == 0 {
		return otlp.Metric{}, false
	}
	mt := otlp.Metric{Name: v.name, Description: v.help, Kind: otlp.Counter}
	if v.buckets != nil {
		mt.Kind, mt.Unit = otlp.Histogram, "s"
	}
	for _, s := range v.series {
		p := otlp.Point{Attrs: make([]attribute.KeyValue, len(v.labels))}
		for i, l := range v.labels {
			p.Attrs[i] = attribute.String(l, s.values[i])
		}
		if v.buckets == nil {
			p.Value = s.sum
		} else {
			above := s.count
			for _, c := range s.counts {
				above -= c
			}
			p.Count, p.Sum, p.Bounds = s.count, s.sum, v.buckets
			p.Buckets = append(slices.Clone(s.counts), above)
		}
		mt.Points = append(mt.Points, p)
	}
	slices.SortFunc(mt.Points, func(a, b otlp.Point) int {
		return slices.CompareFunc(a.Attrs, b.Attrs, func(x, y attribute.KeyValue) int { return strings.Compare(x.Value.AsString(), y.Value.AsString()) })
	})
	return mt, true
}
