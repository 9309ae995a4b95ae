package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// FuzzValidate feeds arbitrary bytes to the validator with the bash-like
// schema. It must never panic, and must either accept arguments that
// really fit the schema or list exactly every violation, in order, as an
// independent, flat re-statement of the rules computes them.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, ``, `[]`, `"x"`, `{"command": "ls", "description": "d"}`,
		`{"command": 1, "description": true, "timeoutMs": "5", "workdir": 2, "run_in_background": "yes"}`,
		`{"command": null, "timeoutMs": 1e999, "extra": {"deep": [1, 2]}}`, `{"command": "x"`, `{} {}`,
		`{"command": "a", "command": 2, "description": "d"}`,
	} {
		f.Add([]byte(seed))
	}
	schema := bashLikeSchema()
	f.Fuzz(func(t *testing.T, data []byte) {
		args, err := Validate(schema, data)
		want, wantErr := expectedViolations(data)
		if wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), InvalidArgsPrefix+wantErr) {
				t.Fatalf("%q: err = %v, want prefix %q", data, err, wantErr)
			}
			return
		}
		if len(want) == 0 {
			if err != nil || args == nil {
				t.Fatalf("%q: valid arguments refused: %v", data, err)
			}
			return
		}
		var te *Error
		if !errors.As(err, &te) || te.Code != CodeInvalidArgs || te.Message != InvalidArgsPrefix+strings.Join(want, "; ") {
			t.Fatalf("%q:\n got %v\nwant %s", data, err, InvalidArgsPrefix+strings.Join(want, "; "))
		}
	})
}

// expectedViolations restates the rules for the flat bash-like schema.
func expectedViolations(data []byte) (problems []string, fatal string) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	if !json.Valid(trimmed) {
		return nil, "arguments are not valid JSON"
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, "arguments are not valid JSON"
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, `"arguments" must be an object`
	}
	for _, p := range []struct {
		name, kind string
		required   bool
	}{
		{"command", "a string", true}, {"description", "a string", true},
		{"timeoutMs", "a number", false}, {"workdir", "a string", false}, {"run_in_background", "a boolean", false},
	} {
		val, present := obj[p.name]
		if !present || val == nil {
			if p.required {
				problems = append(problems, fmt.Sprintf("missing required property %q", p.name))
			}
			continue
		}
		var fits bool
		switch p.kind {
		case "a string":
			_, fits = val.(string)
		case "a number":
			_, fits = val.(json.Number)
		case "a boolean":
			_, fits = val.(bool)
		}
		if !fits {
			problems = append(problems, fmt.Sprintf("%q must be %s", p.name, p.kind))
		}
	}
	return problems, ""
}

// problemForm is the shape every listed violation must have.
var problemForm = regexp.MustCompile(`^(missing required property "[^"]*"|"[^"]*" must be (a|an) [a-z]+( or (a|an|null)[a-z ]*)*|"[^"]*" must be one of .+|"arguments" must be an object|arguments are not valid JSON: .+)$`)

// FuzzValidateNested runs the nested schema (objects, arrays, integers,
// enums, type unions): no panic, and an error lists only well-formed
// violations, one per offending path, in order.
func FuzzValidateNested(f *testing.F) {
	for _, seed := range []string{`{}`, `{"count": 1.5, "paths": ["a", 2], "opts": {"depth": "x", "mode": "m"}, "either": 3}`,
		`{"opts": {}}`, `{"count": 1e400}`, `{"paths": [[[]]]}`, `{"opts": null}`} {
		f.Add([]byte(seed))
	}
	schema := nestedSchema()
	f.Fuzz(func(t *testing.T, data []byte) {
		args, err := Validate(schema, data)
		if err == nil {
			if args == nil {
				t.Fatal("no error and no arguments")
			}
			return
		}
		msg, ok := strings.CutPrefix(err.Error(), InvalidArgsPrefix)
		if !ok {
			t.Fatalf("message %q lacks the prefix", err)
		}
		if strings.HasPrefix(msg, "arguments are not valid JSON: ") {
			return
		}
		seen := map[string]bool{}
		for _, p := range strings.Split(msg, "; ") {
			if !problemForm.MatchString(p) {
				t.Fatalf("violation %q in %q is malformed", p, msg)
			}
			if seen[p] {
				t.Fatalf("violation %q listed twice in %q", p, msg)
			}
			seen[p] = true
		}
	})
}
