package config

import (
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// A File written with the yaml package reads back equal through [Parse]
// (the parser's fuzz test checks it). The yaml package would write a
// time.Duration as "2m0s", which no key takes, so each section holding
// one writes itself with [durationsAsNumbers].

// MarshalYAML writes c with its durations in milliseconds.
func (c Local) MarshalYAML() (any, error) { return durationsAsNumbers(c) }

// MarshalYAML writes c with its durations in milliseconds.
func (c SSH) MarshalYAML() (any, error) { return durationsAsNumbers(c) }

// MarshalYAML writes b with its durations in milliseconds.
func (b Bash) MarshalYAML() (any, error) { return durationsAsNumbers(b) }

// MarshalYAML writes t with its durations in milliseconds.
func (t Tasks) MarshalYAML() (any, error) { return durationsAsNumbers(t) }

// MarshalYAML writes v with its durations in milliseconds.
func (v Serve) MarshalYAML() (any, error) { return durationsAsNumbers(v) }

// MarshalYAML writes p with its durations in milliseconds.
func (p Permissions) MarshalYAML() (any, error) { return durationsAsNumbers(p) }

// MarshalYAML writes h with its timeout in seconds.
func (h Hook) MarshalYAML() (any, error) { return durationsAsNumbers(h) }

// durationsAsNumbers writes the struct v as a YAML mapping the way the yaml
// package does (its yaml tags, omitempty as the package reads it), except
// that a time.Duration, or a set *time.Duration, is the number of the unit
// its key names: milliseconds for a key ending in Ms, else seconds (a
// hook's timeout).
func durationsAsNumbers(v any) (*yaml.Node, error) {
	rv := reflect.ValueOf(v)
	out := &yaml.Node{Kind: yaml.MappingNode}
	for i := range rv.NumField() {
		name, opts, _ := strings.Cut(rv.Type().Field(i).Tag.Get("yaml"), ",")
		fv := rv.Field(i)
		if opts == "omitempty" && emptyForYAML(fv) {
			continue
		}
		val := fv.Interface()
		switch d := val.(type) {
		case time.Duration:
			val = inUnit(name, d)
		case *time.Duration:
			val = inUnit(name, *d) // set: emptyForYAML skipped nil
		}
		var node yaml.Node
		if err := node.Encode(val); err != nil {
			return nil, err
		}
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, &node)
	}
	return out, nil
}

// inUnit is d as the number key writes it: whole milliseconds as an
// integer, the rest as a fraction that Parse rounds up again.
func inUnit(key string, d time.Duration) any {
	unit := time.Second
	if strings.HasSuffix(key, "Ms") {
		unit = time.Millisecond
	}
	if d%unit == 0 {
		return int64(d / unit)
	}
	if d%time.Millisecond == 0 { // seconds with a fraction: num.Seconds reads the millisecond back
		return float64(d/time.Millisecond) / float64(unit/time.Millisecond)
	}
	return float64(d) / float64(unit)
}

// emptyForYAML is the yaml package's omitempty test: an IsZero method
// when the value has one, else nil, no elements, or every field empty.
func emptyForYAML(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		return z.IsZero()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Struct:
		for i := range v.NumField() {
			if !emptyForYAML(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return v.IsZero()
}
