package config

import (
	"bytes"
	"errors"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseLocal decodes data, a YAML document whose top level is the local
// executor's section (the keys of SPEC.md §2.1), as strictly as
// [DecodeLocal] does. An empty document, or one holding only comments or
// null, gives the zero Local. More than one document is an error. Defaults
// are not applied: call [Local.WithDefaults].
func ParseLocal(data []byte) (Local, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Local{}, nil
		}
		return Local{}, errSyntax(err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return Local{}, errSyntax(err)
	default:
		return Local{}, errManyDocuments(next.Line)
	}
	return DecodeLocal(&doc)
}

// DecodeLocal decodes the local executor's section from n, so that a larger
// config file can hold it under a key of its own. n may be a document node,
// a mapping, or null (nil, a zero Node, or a YAML null: the zero Local).
// The result passes [Local.Validate]; defaults are not applied.
//
// The decoder is strict, and every error starts with "bash-local: ":
//   - a key that is not one of SPEC.md §2.1 (`unknown key "env.foo"`), a key
//     given twice (`duplicate key "timeoutMs"`), and a merge key (<<) fail;
//     aliases are followed;
//   - a numeric key takes a YAML number (int or float, .inf and .nan
//     included); an explicit number that is 0, negative, NaN or infinite fails
//     with the exact "<key> must be a positive finite number", anything else
//     (a quoted "5", a bool, a list) with "<key> must be a number";
//   - cwd, spillDir, shell and containment take a string; a number or a
//     bool is refused rather than turned into a path; keepDetached takes a
//     YAML bool (true/false);
//   - env.passthrough and env.scrub take a list of strings;
//   - env.set takes a map whose values are any non-null scalar, used as the
//     literal text written in the file (`DEBUG: 1` sets DEBUG to "1",
//     `RATIO: 1.50` to "1.50"), because environment values are strings and
//     numbers are common among them; a null value is refused, since it could
//     mean "empty" as well as "unset";
//   - null, for any key, means the key is absent.
//
// Messages other than the positive-finite one end with " (line N)".
func DecodeLocal(n *yaml.Node) (Local, error) {
	var c Local
	n = follow(n)
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return c, nil
		}
		n = follow(n.Content[0])
	}
	if isNull(n) {
		return c, nil
	}
	if n.Kind != yaml.MappingNode {
		return c, errType("config", "a mapping", n.Line)
	}
	err := eachKey(n, "config", "", func(key string, k, v *yaml.Node) error {
		switch key {
		case "cwd":
			return decodeString(&c.Cwd, key, v)
		case "spillDir":
			return decodeString(&c.SpillDir, key, v)
		case "shell":
			return decodeString(&c.Shell, key, v)
		case "containment":
			return decodeString(&c.Containment, key, v)
		case "keepDetached":
			return decodeBool(&c.KeepDetached, key, v)
		case "env":
			return decodeEnv(&c.Env, v)
		}
		for _, f := range c.numeric() {
			if f.key == key {
				return decodeNumber(f.v, key, v)
			}
		}
		return errUnknownKey(key, k.Line)
	})
	if err != nil {
		return Local{}, err
	}
	if err := c.Validate(); err != nil {
		return Local{}, err
	}
	return c, nil
}

// UnmarshalYAML makes a Local held by a larger struct decode as strictly as
// [DecodeLocal] does when that struct is decoded with the yaml package.
func (c *Local) UnmarshalYAML(n *yaml.Node) error {
	l, err := DecodeLocal(n)
	if err != nil {
		return err
	}
	*c = l
	return nil
}

func decodeEnv(e *Env, n *yaml.Node) error {
	n = follow(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return errType("env", "a mapping", n.Line)
	}
	return eachKey(n, "env", "env.", func(key string, k, v *yaml.Node) error {
		switch key {
		case "env.passthrough":
			return decodeStrings(&e.Passthrough, key, v)
		case "env.scrub":
			return decodeStrings(&e.Scrub, key, v)
		case "env.set":
			return decodeSet(&e.Set, key, v)
		}
		return errUnknownKey(key, k.Line)
	})
}

// eachKey calls fn for every key of the mapping n, with the key's full name
// (prefix + key), after refusing keys that are not scalars, merge keys and
// duplicates. scope names the mapping in the not-a-string message.
func eachKey(n *yaml.Node, scope, prefix string, fn func(key string, k, v *yaml.Node) error) error {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := follow(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			return errKeyNotString(scope, lineOf(n.Content[i], n))
		}
		if k.ShortTag() == "!!merge" {
			return errMergeKey(k.Line)
		}
		key := prefix + k.Value
		if seen[k.Value] {
			return errDuplicateKey(key, k.Line)
		}
		seen[k.Value] = true
		if err := fn(key, k, v); err != nil {
			return err
		}
	}
	return nil
}

func decodeNumber(dst *float64, key string, n *yaml.Node) error {
	n = follow(n)
	if isNull(n) {
		return nil
	}
	v, ok := number(n)
	if !ok {
		return errType(key, "a number", n.Line)
	}
	if !(v > 0) || math.IsInf(v, 1) {
		return errPositive(key)
	}
	*dst = v
	return nil
}

// decimal is the syntax of a YAML 1.2 decimal float, underscores removed.
var decimal = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// number returns the value of a scalar that YAML reads as a number.
func number(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}
	switch tag := n.ShortTag(); {
	case tag == "!!int" || tag == "!!float":
		var v float64
		if n.Decode(&v) == nil {
			return v, true
		}
		if tag != "!!float" {
			return 0, false
		}
	case tag == "!!str" && n.Style == 0:
		// The yaml package reads a plain decimal outside float64's range,
		// such as 1e400, as a string. It is a number, an infinite one.
	default:
		return 0, false
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	if !decimal.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

func decodeString(dst *string, key string, n *yaml.Node) error {
	n = follow(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return errType(key, "a string", n.Line)
	}
	*dst = n.Value
	return nil
}

func decodeBool(dst *bool, key string, n *yaml.Node) error {
	n = follow(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return errType(key, "a bool", n.Line)
	}
	if err := n.Decode(dst); err != nil {
		return errType(key, "a bool", n.Line)
	}
	return nil
}

func decodeStrings(dst *[]string, key string, n *yaml.Node) error {
	n = follow(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return errType(key, "a list of strings", n.Line)
	}
	var out []string
	for _, item := range n.Content {
		item = follow(item)
		if item == nil || item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
			return errType(key, "a list of strings", lineOf(item, n))
		}
		out = append(out, item.Value)
	}
	*dst = out
	return nil
}

func decodeSet(dst *map[string]string, key string, n *yaml.Node) error {
	n = follow(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return errType(key, "a map of strings", n.Line)
	}
	var out map[string]string
	err := eachKey(n, key, key+".", func(_ string, k, v *yaml.Node) error {
		v = follow(v)
		if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
			return errType(key, "a map of strings", lineOf(v, k))
		}
		if out == nil {
			out = make(map[string]string)
		}
		out[k.Value] = v.Value
		return nil
	})
	if err != nil {
		return err
	}
	*dst = out
	return nil
}

// follow resolves an alias to the node it names.
func follow(n *yaml.Node) *yaml.Node {
	// An anchor names a node that is not itself an alias; the bound only
	// guards against a hand-built cycle.
	for i := 0; i < 8 && n != nil && n.Kind == yaml.AliasNode; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n stands for "no value": missing, a zero Node, or a
// YAML null (`~`, `null`, nothing at all).
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// lineOf returns the line of n, or of parent when n is missing.
func lineOf(n, parent *yaml.Node) int {
	if n != nil {
		return n.Line
	}
	return parent.Line
}
