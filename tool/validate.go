package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The validator checks the part of JSON Schema that tool parameters use:
// type (one or several), properties (in order), required, items and enum.
// [Registry.Register] refuses a schema that uses any other validation
// keyword, so a schema never promises a check that is not made.
//
// Decisions:
//   - Absent arguments (empty, or JSON null) are the empty object: a tool
//     without parameters may be called with none.
//   - A property whose value is null counts as absent: optional ones are
//     skipped, required ones are reported missing. Clients commonly send
//     null for "not given".
//   - Extra properties are ignored, as docs/spec.md §3.1 asks.
//   - Paths in messages: a property at the top is "name"; nested ones are
//     "outer.inner", array items "list[2]".
//   - Arguments that are not valid JSON are reported as such, in the same
//     "invalid arguments: " form.

// InvalidArgsPrefix starts every validation message (exact).
const InvalidArgsPrefix = "invalid arguments: "

// Validate checks args against the object schema s. It returns the decoded
// arguments (numbers as json.Number), or an *Error with code INVALID_ARGS
// whose message lists every violation, joined by "; ".
func Validate(s *jsonschema.Schema, args json.RawMessage) (map[string]any, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, invalidArgs([]string{"arguments are not valid JSON: " + jsonError(err)})
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalidArgs([]string{"arguments are not valid JSON: unexpected data after the value"})
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalidArgs([]string{`"arguments" must be an object`})
	}
	var problems []string
	checkObject(s, obj, "", &problems)
	if len(problems) > 0 {
		return nil, invalidArgs(problems)
	}
	return obj, nil
}

// validate is [Validate] against def's parameters, with def's
// MissingHints: a line for each required property the arguments lack.
func (def Definition) validate(args json.RawMessage) (map[string]any, error) {
	m, err := Validate(def.Parameters, args)
	if err == nil || len(def.MissingHints) == 0 {
		return m, err
	}
	var obj map[string]any
	if trimmed := bytes.TrimSpace(args); len(trimmed) != 0 && string(trimmed) != "null" {
		if json.Unmarshal(trimmed, &obj) != nil {
			return nil, err // not an object: nothing is missing yet
		}
	}
	te, ok := err.(*Error)
	if !ok {
		return nil, err
	}
	for _, name := range propertyOrder(def.Parameters) {
		hint, ok := def.MissingHints[name]
		if ok && slices.Contains(def.Parameters.Required, name) && obj[name] == nil {
			te.Message += "\n" + hint
		}
	}
	return nil, te
}

func invalidArgs(problems []string) error {
	return &Error{Code: CodeInvalidArgs, Message: InvalidArgsPrefix + strings.Join(problems, "; ")}
}

func jsonError(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%s (at byte %d)", syn.Error(), syn.Offset)
	}
	return err.Error()
}

// check validates v against s at path, appending problems.
func check(s *jsonschema.Schema, v any, path string, problems *[]string) {
	if s == nil {
		return
	}
	types := schemaTypes(s)
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(v, t) }) {
		*problems = append(*problems, fmt.Sprintf("%q must be %s", path, typeNames(types)))
		return
	}
	if len(s.Enum) > 0 && !inEnum(v, s.Enum) {
		*problems = append(*problems, fmt.Sprintf("%q must be one of %s", path, enumText(s.Enum)))
		return
	}
	switch v := v.(type) {
	case map[string]any:
		checkObject(s, v, path+".", problems)
	case []any:
		if s.Items != nil {
			for i, item := range v {
				check(s.Items, item, fmt.Sprintf("%s[%d]", path, i), problems)
			}
		}
	}
}

// checkObject validates the properties of obj in schema order; prefix is
// the path of obj followed by a dot ("" at the top).
func checkObject(s *jsonschema.Schema, obj map[string]any, prefix string, problems *[]string) {
	for _, name := range propertyOrder(s) {
		val, present := obj[name]
		if !present || val == nil {
			if slices.Contains(s.Required, name) {
				*problems = append(*problems, fmt.Sprintf("missing required property %q", prefix+name))
			}
			continue
		}
		check(s.Properties[name], val, prefix+name, problems)
	}
}

// propertyOrder lists the properties to check: PropertyOrder first, then
// the other properties by name, then required names that have no schema.
func propertyOrder(s *jsonschema.Schema) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok {
			add(n)
		}
	}
	rest := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		rest = append(rest, n)
	}
	slices.Sort(rest)
	for _, n := range rest {
		add(n)
	}
	for _, n := range s.Required {
		add(n)
	}
	return names
}

func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		return ok && isInteger(n)
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}

// isInteger reports whether the JSON number n has no fractional part,
// exactly and in time linear in its length, however many digits or however
// large an exponent it has: 2.0 and 1e400 are integers, 1.5 and
// 100000000000000000000.5 are not.
//
// n = D × 10^(e − len(F)), where D is the digits of I.F and e the exponent;
// with z trailing zeros in D, n is an integer iff z ≥ len(F) − e.
func isInteger(n json.Number) bool {
	mantissa, exp, hasExp := strings.Cut(strings.ToLower(strings.TrimPrefix(string(n), "-")), "e")
	intPart, frac, _ := strings.Cut(mantissa, ".")
	digits := intPart + frac
	significant := strings.TrimRight(digits, "0")
	if strings.TrimLeft(significant, "0") == "" {
		return true // zero
	}
	e := int64(0)
	if hasExp {
		var ok bool
		if e, ok = parseExponent(exp); !ok {
			// Beyond int64: a huge positive exponent leaves no fraction,
			// a huge negative one leaves nothing but.
			return !strings.HasPrefix(exp, "-")
		}
	}
	zeros := int64(len(digits) - len(significant))
	return zeros >= int64(len(frac))-e
}

// parseExponent parses a JSON exponent ("+5", "-12", "7") that fits int64.
func parseExponent(exp string) (int64, bool) {
	v, err := strconv.ParseInt(strings.TrimPrefix(exp, "+"), 10, 64)
	return v, err == nil
}

// typeNames renders "a string", "an object", "a string or null".
func typeNames(types []string) string {
	parts := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "object", "array", "integer":
			parts[i] = "an " + t
		case "null":
			parts[i] = "null"
		default:
			parts[i] = "a " + t
		}
	}
	return strings.Join(parts, " or ")
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if sameJSON(v, e) {
			return true
		}
	}
	return false
}

// sameJSON compares a decoded value with an enum member by their JSON.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func enumText(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		j, _ := json.Marshal(e)
		parts[i] = string(j)
	}
	return strings.Join(parts, ", ")
}

func isTrueSchema(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && (string(b) == "{}" || string(b) == "true")
}

// checkSupported refuses schema keywords the validator does not enforce.
func checkSupported(s *jsonschema.Schema, path string) error {
	if s == nil {
		return nil
	}
	unsupported := map[string]bool{
		"$ref": s.Ref != "", "allOf": len(s.AllOf) > 0, "anyOf": len(s.AnyOf) > 0,
		"oneOf": len(s.OneOf) > 0, "not": s.Not != nil, "if": s.If != nil,
		"const": s.Const != nil, "multipleOf": s.MultipleOf != nil,
		"minimum": s.Minimum != nil, "maximum": s.Maximum != nil,
		"exclusiveMinimum": s.ExclusiveMinimum != nil, "exclusiveMaximum": s.ExclusiveMaximum != nil,
		"minLength": s.MinLength != nil, "maxLength": s.MaxLength != nil, "pattern": s.Pattern != "",
		"prefixItems": len(s.PrefixItems) > 0, "minItems": s.MinItems != nil, "maxItems": s.MaxItems != nil,
		"uniqueItems": s.UniqueItems, "contains": s.Contains != nil,
		"minProperties": s.MinProperties != nil, "maxProperties": s.MaxProperties != nil,
		"dependentRequired": len(s.DependentRequired) > 0, "dependentSchemas": len(s.DependentSchemas) > 0,
		"patternProperties": len(s.PatternProperties) > 0, "propertyNames": s.PropertyNames != nil,
		"unevaluatedProperties": s.UnevaluatedProperties != nil, "unevaluatedItems": s.UnevaluatedItems != nil,
		"items (as an array)": len(s.ItemsArray) > 0, "additionalItems": s.AdditionalItems != nil,
		"minContains": s.MinContains != nil, "maxContains": s.MaxContains != nil,
		// true ({}) is what the validator does anyway: extra keys are ignored.
		"additionalProperties": s.AdditionalProperties != nil && !isTrueSchema(s.AdditionalProperties),
	}
	for kw, used := range unsupported {
		if used {
			return fmt.Errorf("schema %s uses %q, which the validator does not check", path, kw)
		}
	}
	for name, p := range s.Properties {
		if err := checkSupported(p, path+"."+name); err != nil {
			return err
		}
	}
	return checkSupported(s.Items, path+"[]")
}
