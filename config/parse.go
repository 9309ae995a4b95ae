package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/dsh-go/dsh/internal/lazyre"
	"github.com/dsh-go/dsh/internal/num"
	"github.com/dsh-go/dsh/policy"
)

// Parse decodes data, a whole configuration file, strictly and returns it
// as written (the defaults are not applied: call [File.WithDefaults]). An
// empty document, or one holding only comments or null, is the default
// configuration. On error the File is the zero value and the error an
// *[Error] naming the key and its line.
//
// Strict means:
//   - a key that is not in docs/config.md fails, with the nearest known key
//     of the same mapping as a hint; so do a key given twice and a merge key
//     (<<); aliases are followed;
//   - a number key takes a YAML number (int or float, .inf and .nan
//     included); an explicit number that is 0, negative, NaN or infinite
//     fails with "must be a positive finite number": 0 is a mistake rather
//     than a request for the default, which is asked for by leaving the key
//     out (or writing null); a count takes a positive integer;
//   - a duration is a number of milliseconds (a hook's timeout, of seconds)
//     and a size a number of bytes, rounded up to a whole millisecond or
//     byte and saturating at the largest the Go type holds; values are
//     compared after rounding (keepHeadBytes with maxOutputBytes, the
//     waits, limits.memoryBytes with its minimum);
//   - local.keepHeadBytes and bash.yieldAfterMs take a number ≥ 0: there
//     an explicit 0 is a value (tail only; never yield), and null or no key
//     the default;
//   - a string key takes a string: a number or a bool is refused rather than
//     turned into a path; a bool key takes a YAML bool (true/false);
//   - local.env.set takes a map whose values are any non-null scalar, used
//     as the literal text written in the file (`DEBUG: 1` sets DEBUG to "1",
//     `RATIO: 1.50` to "1.50"), because environment values are strings and
//     numbers are common among them; a null value is refused, since it
//     could mean "empty" as well as "unset";
//   - null, for any key, means the key is absent;
//   - more than one YAML document is an error.
//
// Then the whole is checked by [File.Validate], with the lines of the keys.
func Parse(data []byte) (File, error) {
	doc, err := document(data)
	if err != nil {
		return File{}, err
	}
	var f File
	p := &parser{lines: make(map[string]int)}
	if err := p.decode(f.decoder(), doc, ""); err != nil {
		return File{}, err
	}
	if err := f.validate(p.lines); err != nil {
		return File{}, err
	}
	return f, nil
}

// document returns the top node of data's single YAML document, or nil for
// an empty one.
func document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxErr(data, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxErr(data, err)
	default:
		return nil, docErr(next.Line, "config must be a single YAML document, not several")
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// yamlLine is the line the yaml package puts in front of most messages.
var (
	yamlLine   = lazyre.New(`^line (\d+): (.*)$`)
	yamlAnchor = lazyre.New(`^unknown anchor '(.*)' referenced$`)
)

// syntaxErr is a YAML syntax error of data, with its line: the yaml
// package gives it in the message, except for a problem on the first line,
// an undefined alias and bytes that are not YAML text, whose line is found
// here. Only a document nested deeper than the yaml package allows has
// none.
func syntaxErr(data []byte, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return docErr(line, "not valid YAML: %s", m[2])
	}
	line := 1
	switch m := yamlAnchor().FindStringSubmatch(msg); {
	case m != nil:
		line = lineAt(data, bytes.Index(data, []byte("*"+m[1])))
	case strings.HasPrefix(msg, "exceeded max depth"):
		line = 0
	case strings.Contains(msg, "UTF-8") || strings.Contains(msg, "control characters"):
		line = lineAt(data, notText(data))
	}
	return docErr(line, "not valid YAML: %s", msg)
}

// lineAt is the line of byte i of data (1 for a negative i).
func lineAt(data []byte, i int) int {
	if i < 0 {
		return 1
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

// notText is the index of the first byte of data that YAML does not take
// as text (invalid UTF-8, a control character), or -1.
func notText(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r < 0xa0 && r != 0x85 {
			return i
		}
		i += size
	}
	return -1
}

// The schema: a decoder decodes one value (never null: null is an absent
// key) for the key at path into its destination.
type decoder func(p *parser, n *yaml.Node, path string) error

// field is one key of a mapping.
type field struct {
	key string
	dec decoder
}

// parser holds what the walk learns on its way: the line of every key, for
// the errors of [File.validate].
type parser struct {
	lines map[string]int
}

// decode follows an alias and decodes n unless it is null.
func (p *parser) decode(dec decoder, n *yaml.Node, path string) error {
	n = follow(n)
	if isNull(n) {
		return nil
	}
	return dec(p, n, path)
}

// decoder is the schema of the whole file.
func (f *File) decoder() decoder {
	return mapping(
		field{"executor", str(&f.Executor)},
		field{"local", f.Local.decoder()},
		field{"ssh", f.SSH.decoder()},
		field{"tools", toolList(&f.Tools)},
		field{"bash", mapping(
			field{"enableRunInBackground", optBool(&f.Bash.EnableRunInBackground)},
			field{"maxForegroundPerSession", count(&f.Bash.MaxForegroundPerSession)},
			field{"maxForeground", count(&f.Bash.MaxForeground)},
			field{"yieldAfterMs", nonNegative(&f.Bash.YieldAfter, num.Millis)},
		)},
		field{"tasks", mapping(
			field{"maxRunningPerSession", count(&f.Tasks.MaxRunningPerSession)},
			field{"maxRunning", count(&f.Tasks.MaxRunning)},
			field{"waitTimeoutMs", positive(&f.Tasks.WaitTimeout, num.Millis)},
			field{"maxWaitTimeoutMs", positive(&f.Tasks.MaxWaitTimeout, num.Millis)},
		)},
		field{"permissions", present(&f.Permissions, (*Permissions).decoder)},
		field{"hooks", f.Hooks.decoder()},
		field{"claudeHooks", boolean(&f.ClaudeHooks)},
		field{"trustProjectHooks", boolean(&f.TrustProjectHooks)},
		field{"serve", mapping(
			field{"maxSessions", count(&f.Serve.MaxSessions)},
			field{"maxRequestBytes", positive(&f.Serve.MaxRequestBytes, num.Bytes)},
			field{"idleSessionMs", positive(&f.Serve.IdleSession, num.Millis)},
		)},
		field{"audit", mapping(
			field{"path", str(&f.Audit.Path)},
		)},
		field{"redact", str(&f.Redact)},
		field{"otel", mapping(
			field{"endpoint", str(&f.Otel.Endpoint)},
			field{"headers", scalarMap(&f.Otel.Headers, checkHeader)},
			field{"traces", optBool(&f.Otel.Traces)},
			field{"logs", optBool(&f.Otel.Logs)},
			field{"metrics", optBool(&f.Otel.Metrics)},
			field{"logCommands", boolean(&f.Otel.LogCommands)},
		)},
	)
}

// list decodes a list whose items have the schema of T; a null item is
// T's zero value.
func list[T any](dst *[]T, schema func(*T) decoder) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		if n.Kind != yaml.SequenceNode {
			return errType(path, "a list", n.Line)
		}
		out := make([]T, len(n.Content))
		for i, item := range n.Content {
			key := itemKey(path, i)
			p.lines[key] = lineOf(follow(item), n)
			if err := p.decode(schema(&out[i]), item, key); err != nil {
				return err
			}
		}
		if len(out) > 0 {
			*dst = out
		}
		return nil
	}
}

// decoder is the schema of the permissions section.
func (c *Permissions) decoder() decoder {
	fields := []field{
		{"default", str(&c.Default)},
		{"readOnly", optBool(&c.ReadOnly)},
		{"askFallback", str(&c.AskFallback)},
		{"askTimeoutMs", positive(&c.AskTimeout, num.Millis)},
		{"claudeSettings", optBool(&c.ClaudeSettings)},
		{"trustProjectAllow", boolean(&c.TrustProjectAllow)},
	}
	for _, l := range c.lists() {
		fields = append(fields, field{l.key, rules(l.rules, l.kind)})
	}
	return mapping(fields...)
}

// present decodes an optional section whose presence means something: the
// section is allocated when its key is there and not null.
func present[T any](dst **T, schema func(*T) decoder) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		v := new(T)
		if err := schema(v)(p, n, path); err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// rules decodes a list of policy rules of one kind, each checked with its
// line.
func rules(dst *[]string, kind policy.Kind) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		items, err := stringItems(n, path)
		if err != nil {
			return err
		}
		key := path[strings.LastIndexByte(path, '.')+1:]
		for i, text := range items {
			line := follow(n.Content[i]).Line
			p.lines[itemKey(path, i)] = line
			if e := checkRule(key, i, text, kind, line); e != nil {
				return e.within(strings.TrimSuffix(path, "."+key), nil)
			}
		}
		*dst = items
		return nil
	}
}

// decoder is the schema of the local section.
func (c *Local) decoder() decoder {
	fields := []field{
		{"cwd", str(&c.Cwd)},
		{"spillDir", str(&c.SpillDir)},
		{"shell", str(&c.Shell)},
		{"env", mapping(
			field{"passthrough", patterns(&c.Env.Passthrough)},
			field{"scrub", patterns(&c.Env.Scrub)},
			field{"set", envSet(&c.Env.Set)},
		)},
		{"keepHeadBytes", nonNegative(&c.KeepHeadBytes, num.Bytes)},
		{"keepDetached", boolean(&c.KeepDetached)},
		{"containment", str(&c.Containment)},
		{"sandbox", c.Sandbox.decoder()},
		{"limits", mapping(
			field{"pids", positive(&c.Limits.Pids, num.Bytes)},
			field{"memoryBytes", positive(&c.Limits.MemoryBytes, num.Bytes)},
		)},
	}
	for _, n := range c.numeric() {
		if !strings.Contains(n.key, ".") { // limits.*: in their mapping
			fields = append(fields, field{n.key, n.decoder()})
		}
	}
	return mapping(fields...)
}

// decoder is the schema of local.sandbox. Its lists keep an explicit
// empty list, which for protect and hide means none rather than the
// default.
func (s *Sandbox) decoder() decoder {
	return mapping(
		field{"mode", str(&s.Mode)},
		field{"backend", str(&s.Backend)},
		field{"writableRoots", strList(&s.WritableRoots)},
		field{"network", network(&s.Network)},
		field{"allowUnsandboxed", optBool(&s.AllowUnsandboxed)},
		field{"allowSockets", strList(&s.AllowSockets)},
		field{"protect", strList(&s.Protect)},
		field{"hide", strList(&s.Hide)},
		field{"helper", str(&s.Helper)},
	)
}

// network decodes local.sandbox.network: true, false or a map.
func network(dst **Network) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		if n.Kind != yaml.MappingNode {
			var host bool
			if err := boolean(&host)(p, n, path); err != nil {
				return errType(path, "true, false or a map", n.Line)
			}
			*dst = &Network{Host: host}
			return nil
		}
		m := new(NetworkMap)
		err := mapping(
			field{"allow", strList(&m.Allow)},
			field{"deny", strList(&m.Deny)},
			field{"default", str(&m.Default)},
			field{"hosts", envSet(&m.Hosts)},
			field{"allowAddresses", strList(&m.AllowAddresses)},
			field{"toolRegistries", boolean(&m.ToolRegistries)},
		)(p, n, path)
		if err == nil {
			*dst = &Network{Map: m}
		}
		return err
	}
}

// strList decodes a list of strings, an empty one included.
func strList(dst *[]string) decoder {
	return func(_ *parser, n *yaml.Node, path string) error {
		items, err := stringItems(n, path)
		if err == nil {
			*dst = items
		}
		return err
	}
}

// mapping decodes a mapping with the given keys, refusing any other.
func mapping(fields ...field) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		if n.Kind != yaml.MappingNode {
			if path == "" {
				return docErr(n.Line, "config must be a mapping")
			}
			return errType(path, "a mapping", n.Line)
		}
		return p.eachKey(n, path, func(key string, k, v *yaml.Node) error {
			for _, f := range fields {
				if f.key == k.Value {
					return p.decode(f.dec, v, key)
				}
			}
			return errUnknownKey(key, k.Line, hint(path, k.Value, fields))
		})
	}
}

// hint is the key of fields, at path, that key most likely meant, or "".
func hint(path, key string, fields []field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.key
	}
	if w := suggestWord(key, names); w != "" {
		return join(path, w)
	}
	return ""
}

// eachKey calls fn for every key of the mapping n with the key's path,
// after refusing keys that are not scalars, merge keys and duplicates, and
// records each key's line.
func (p *parser) eachKey(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node) error) error {
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := follow(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			return keyProblem(orConfig(path), lineOf(n.Content[i], n), "keys must be strings")
		}
		if k.ShortTag() == "!!merge" {
			return keyProblem(orConfig(path), k.Line, "merge keys (<<) are not supported")
		}
		key := join(path, k.Value)
		if seen[k.Value] {
			return keyProblem(key, k.Line, "duplicate key")
		}
		seen[k.Value] = true
		p.lines[key] = k.Line
		if err := fn(key, k, v); err != nil {
			return err
		}
	}
	return nil
}

func orConfig(path string) string {
	if path == "" {
		return "config"
	}
	return path
}

func str(dst *string) decoder {
	return func(_ *parser, n *yaml.Node, path string) error {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			return errType(path, "a string", n.Line)
		}
		*dst = n.Value
		return nil
	}
}

func boolean(dst *bool) decoder {
	return func(_ *parser, n *yaml.Node, path string) error {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(dst) != nil {
			return errType(path, "true or false", n.Line)
		}
		return nil
	}
}

// optBool decodes a bool whose absence means something of its own.
func optBool(dst **bool) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		var b bool
		if err := boolean(&b)(p, n, path); err != nil {
			return err
		}
		*dst = &b
		return nil
	}
}

// positive decodes a positive finite number into the Go value conv makes
// of it: a duration or a size, rounded up to a whole millisecond or byte
// (num.Millis, num.Bytes), so the File holds what the executor uses.
func positive[T any](dst *T, conv func(float64) T) decoder {
	return func(_ *parser, n *yaml.Node, path string) error {
		v, err := numberWhere(n, path, num.PositiveFinite, errPositive)
		if err == nil {
			*dst = conv(v)
		}
		return err
	}
}

// nonNegative decodes a number ≥ 0 whose absence (null) means something
// of its own, so an explicit 0 is a value and not the default.
func nonNegative[T any](dst **T, conv func(float64) T) decoder {
	return func(_ *parser, n *yaml.Node, path string) error {
		v, err := numberWhere(n, path, num.NonNegativeFinite, errNonNegative)
		if err == nil {
			c := conv(v)
			*dst = &c
		}
		return err
	}
}

// decoder decodes the numeric key n into its place.
func (n numKey) decoder() decoder { return positive(n.v, n.conv) }

// numberWhere is the number n when rule accepts it; else an error that n
// is no number, or the one refuse gives for the rule.
func numberWhere(n *yaml.Node, path string, rule func(float64) bool, refuse func(key string, line int) *Error) (float64, error) {
	v, ok := numberValue(n)
	if !ok {
		return 0, errType(path, "a number", n.Line)
	}
	if !rule(v) {
		return 0, refuse(path, n.Line)
	}
	return v, nil
}

// count decodes a positive integer.
func count(dst *int) decoder {
	return func(_ *parser, n *yaml.Node, path string) error {
		var v int
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil || v <= 0 {
			return errType(path, "a positive integer", n.Line)
		}
		*dst = v
		return nil
	}
}

// decimal is the syntax of a YAML 1.2 decimal float, underscores removed.
var decimal = lazyre.New(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// numberValue returns the value of a scalar that YAML reads as a number.
func numberValue(n *yaml.Node) (float64, bool) {
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
	if !decimal().MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

// stringItems returns the items of a list of strings.
func stringItems(n *yaml.Node, path string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, errType(path, "a list of strings", n.Line)
	}
	out := []string{}
	for _, item := range n.Content {
		item = follow(item)
		if item == nil || item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
			return nil, errType(path, "a list of strings", lineOf(item, n))
		}
		out = append(out, item.Value)
	}
	return out, nil
}

// patterns decodes env.passthrough and env.scrub: names or globs.
func patterns(dst *[]string) decoder {
	return func(_ *parser, n *yaml.Node, path string) error {
		items, err := stringItems(n, path)
		if err != nil {
			return err
		}
		for i, pat := range items {
			if e := checkPattern(path, pat, follow(n.Content[i]).Line); e != nil {
				return e
			}
		}
		if len(items) > 0 {
			*dst = items
		}
		return nil
	}
}

// toolList decodes the tools list; an empty list is kept (it loads none).
func toolList(dst *[]string) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		items, err := stringItems(n, path)
		if err != nil {
			return err
		}
		for i, name := range items {
			key, line := toolKey(i), follow(n.Content[i]).Line
			p.lines[key] = line
			if err := checkTool(items[:i], name, key, line); err != nil {
				return err
			}
		}
		*dst = items
		return nil
	}
}

func toolKey(i int) string { return itemKey("tools", i) }

// itemKey is the path of item i of the list at key: "tools[1]".
func itemKey(key string, i int) string { return fmt.Sprintf("%s[%d]", key, i) }

// envSet decodes env.set: a map of non-null scalars.
func envSet(dst *map[string]string) decoder { return scalarMap(dst, checkSet) }

// scalarMap decodes a map of non-null scalars, each entry checked.
func scalarMap(dst *map[string]string, check func(key, name, value string, line int) *Error) decoder {
	return func(p *parser, n *yaml.Node, path string) error {
		if n.Kind != yaml.MappingNode {
			return errType(path, "a map of strings", n.Line)
		}
		out := make(map[string]string)
		err := p.eachKey(n, path, func(_ string, k, v *yaml.Node) error {
			v = follow(v)
			if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
				return errType(path, "a map of strings", lineOf(v, k))
			}
			out[k.Value] = v.Value
			if e := check(path, k.Value, v.Value, k.Line); e != nil {
				return e
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(out) > 0 {
			*dst = out
		}
		return nil
	}
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
	if n != nil && n.Line > 0 {
		return n.Line
	}
	return parent.Line
}
