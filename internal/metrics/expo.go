package metrics

// The Prometheus text format (version 0.0.4), written by hand: dsh has a
// dozen metrics of three kinds, and the client library's package
// initialisation cost every dsh start, `dsh version` and `dsh run`
// included, about 0.8 ms (docs/performance.md).

import (
	"bufio"
	"cmp"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// family is one metric name: its HELP and TYPE lines, then its samples.
type family struct {
	name, help, typ string
	// labels are a func family's constant labels, which order the
	// families of one name.
	labels string
	// samples writes the sample lines; it reports false when there are
	// none, and then the family is left out, as client_golang does for a
	// vector no label value was used with.
	samples func(w *bufio.Writer) bool
	// own: samples writes several families, HELP and TYPE lines included
	// (name is their common prefix).
	own bool
}

// writeFamilies writes fams in the text format, sorted by name; the
// families of one name (a gauge with a constant label per source) are
// written under one HELP and TYPE.
func writeFamilies(out io.Writer, fams []family) error {
	fams = slices.Clone(fams)
	slices.SortStableFunc(fams, func(a, b family) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.labels, b.labels))
	})
	w := bufio.NewWriter(out)
	var body strings.Builder
	for i := 0; i < len(fams); {
		if fams[i].own {
			fams[i].samples(w)
			i++
			continue
		}
		j := i
		sw := bufio.NewWriter(&body)
		any := false
		for ; j < len(fams) && fams[j].name == fams[i].name && !fams[j].own; j++ {
			any = fams[j].samples(sw) || any
		}
		_ = sw.Flush()
		if any {
			w.WriteString("# HELP " + fams[i].name + " " + escapeHelp(fams[i].help) + "\n")
			w.WriteString("# TYPE " + fams[i].name + " " + fams[i].typ + "\n")
			w.WriteString(body.String())
		}
		body.Reset()
		i = j
	}
	return w.Flush()
}

// sample writes one line: name{labels} value.
func sample(w *bufio.Writer, name, labels string, v float64) {
	w.WriteString(name)
	if labels != "" {
		w.WriteString("{" + labels + "}")
	}
	w.WriteString(" " + formatValue(v) + "\n")
}

// labelPairs renders names and values as name="value",…, in order.
func labelPairs(names, values []string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n + `="` + escapeLabel(values[i]) + `"`)
	}
	return b.String()
}

// join adds one more pair to rendered labels.
func join(labels, more string) string {
	if labels == "" {
		return more
	}
	return labels + "," + more
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// vec is a counter or a histogram by label values; a series appears on
// its first use.
type vec struct {
	name, help string
	labels     []string
	buckets    []float64 // a histogram's upper bounds; nil for a counter
	mu         sync.Mutex
	series     map[string]*series // by the label values joined with \xff
}

type series struct {
	values []string
	count  uint64   // observations, of a histogram
	sum    float64  // a counter's value, or a histogram's sum
	counts []uint64 // a histogram's observations by bucket (not cumulative)
}

func newCounterVec(name, help string, labels ...string) *vec {
	return &vec{name: name, help: help, labels: labels, series: map[string]*series{}}
}

func newHistogramVec(name, help string, buckets []float64, labels ...string) *vec {
	v := newCounterVec(name, help, labels...)
	v.buckets = buckets
	return v
}

// get is the series of values, made on first use; v.mu is held.
func (v *vec) get(values []string) *series {
	key := strings.Join(values, "\xff")
	s := v.series[key]
	if s == nil {
		s = &series{values: slices.Clone(values)}
		if v.buckets != nil {
			s.counts = make([]uint64, len(v.buckets))
		}
		v.series[key] = s
	}
	return s
}

// add adds d to a counter's series.
func (v *vec) add(d float64, values ...string) {
	v.mu.Lock()
	v.get(values).sum += d
	v.mu.Unlock()
}

// observe records x in a histogram's series.
func (v *vec) observe(x float64, values ...string) {
	v.mu.Lock()
	s := v.get(values)
	s.count++
	s.sum += x
	if i, _ := slices.BinarySearch(v.buckets, x); i < len(s.counts) {
		s.counts[i]++
	}
	v.mu.Unlock()
}

// family is v's family: its series sorted by their label values.
func (v *vec) family() family {
	typ := "counter"
	if v.buckets != nil {
		typ = "histogram"
	}
	return family{name: v.name, help: v.help, typ: typ, samples: v.write}
}

func (v *vec) write(w *bufio.Writer) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	all := make([]*series, 0, len(v.series))
	for _, s := range v.series {
		all = append(all, s)
	}
	// Sorted as client_golang sorts: by the labels in name order.
	names := slices.Clone(v.labels)
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	sorted := func(s *series) ([]string, []string) {
		n, vals := make([]string, len(order)), make([]string, len(order))
		for i, o := range order {
			n[i], vals[i] = names[o], s.values[o]
		}
		return n, vals
	}
	slices.SortFunc(all, func(a, b *series) int {
		_, va := sorted(a)
		_, vb := sorted(b)
		return slices.Compare(va, vb)
	})
	for _, s := range all {
		labels := labelPairs(sorted(s))
		if v.buckets == nil {
			sample(w, v.name, labels, s.sum)
			continue
		}
		var cum uint64
		for i, ub := range v.buckets {
			cum += s.counts[i]
			sample(w, v.name+"_bucket", join(labels, `le="`+formatValue(ub)+`"`), float64(cum))
		}
		sample(w, v.name+"_bucket", join(labels, `le="+Inf"`), float64(s.count))
		sample(w, v.name+"_sum", labels, s.sum)
		sample(w, v.name+"_count", labels, float64(s.count))
	}
	return len(all) > 0
}

// funcFamily is a gauge or counter read from f when written, with
// constant labels.
func funcFamily(name, help, typ, labels string, f func() float64) family {
	return family{name: name, help: help, typ: typ, labels: labels, samples: func(w *bufio.Writer) bool {
		sample(w, name, labels, f())
		return true
	}}
}
