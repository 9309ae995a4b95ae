package config

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"
)

// cmpLocal compares Locals with NaN equal to NaN, for the fuzz test's sake.
var cmpLocal = cmpopts.EquateNaNs()

func TestParseLocal(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want Local
		err  string
	}{
		// Empty and null documents.
		{name: "empty", doc: ""},
		{name: "comments only", doc: "# nothing here\n\n# still nothing\n"},
		{name: "document marker only", doc: "---\n"},
		{name: "document marker and comment", doc: "---\n# nothing\n...\n"},
		{name: "null document", doc: "~\n"},
		{name: "empty mapping", doc: "{}\n"},

		// Every key.
		{name: "every key", doc: `
cwd: /work
timeoutMs: 1000
maxTimeoutMs: 2000.5
maxOutputBytes: 100
maxSpillBytes: 1e6
graceMs: 250
spillDir: /var/tmp
shell: /bin/bash
env:
  passthrough: [GITHUB_TOKEN, "MY_*"]
  scrub:
    - FOO
    - BAR_*
  set:
    A: x
    B: ""
`, want: Local{
			Cwd: "/work", TimeoutMs: 1000, MaxTimeoutMs: 2000.5, MaxOutputBytes: 100,
			MaxSpillBytes: 1e6, GraceMs: 250, SpillDir: "/var/tmp", Shell: "/bin/bash",
			Env: Env{
				Passthrough: []string{"GITHUB_TOKEN", "MY_*"},
				Scrub:       []string{"FOO", "BAR_*"},
				Set:         map[string]string{"A": "x", "B": ""},
			},
		}},
		{name: "flow style", doc: `{timeoutMs: 5, env: {set: {A: b}}}`,
			want: Local{TimeoutMs: 5, Env: Env{Set: map[string]string{"A": "b"}}}},

		// Numbers in every YAML spelling.
		{name: "int", doc: "timeoutMs: 42", want: Local{TimeoutMs: 42}},
		{name: "float", doc: "timeoutMs: 0.5", want: Local{TimeoutMs: 0.5}},
		{name: "leading dot", doc: "timeoutMs: .5", want: Local{TimeoutMs: 0.5}},
		{name: "plus sign", doc: "timeoutMs: +7", want: Local{TimeoutMs: 7}},
		{name: "exponent", doc: "maxSpillBytes: 1.5e3", want: Local{MaxSpillBytes: 1500}},
		{name: "hex", doc: "maxOutputBytes: 0x100", want: Local{MaxOutputBytes: 256}},
		{name: "octal", doc: "maxOutputBytes: 0o17", want: Local{MaxOutputBytes: 15}},
		{name: "underscores", doc: "maxSpillBytes: 67_108_864", want: Local{MaxSpillBytes: 67108864}},
		{name: "beyond int64", doc: "maxSpillBytes: 18446744073709551615",
			want: Local{MaxSpillBytes: 18446744073709551615}},
		{name: "beyond uint64", doc: "maxSpillBytes: 100000000000000000000000",
			want: Local{MaxSpillBytes: 1e23}},
		{name: "explicit int tag", doc: "graceMs: !!int 9", want: Local{GraceMs: 9}},
		{name: "explicit float tag on a quoted number", doc: `graceMs: !!float "9.5"`, want: Local{GraceMs: 9.5}},
		{name: "tiny but positive", doc: "graceMs: 1e-300", want: Local{GraceMs: 1e-300}},

		// null means unset, for every kind of key.
		{name: "nulls", doc: `
cwd:
timeoutMs: ~
maxTimeoutMs: null
maxOutputBytes: Null
maxSpillBytes: NULL
graceMs:
spillDir: ~
shell: null
`},
		{name: "null env", doc: "env: ~"},
		{name: "null env members", doc: "env:\n  passthrough:\n  scrub: ~\n  set: null\n"},
		{name: "empty lists and map", doc: "env: {passthrough: [], scrub: [], set: {}}"},

		// Strings.
		{name: "quoted strings", doc: `{cwd: "/a b", spillDir: '/c', shell: "5"}`,
			want: Local{Cwd: "/a b", SpillDir: "/c", Shell: "5"}},
		{name: "explicit str tag", doc: "cwd: !!str 123", want: Local{Cwd: "123"}},
		{name: "block scalar", doc: "shell: |-\n  /bin/sh\n", want: Local{Shell: "/bin/sh"}},
		{name: "empty string is unset", doc: `cwd: ""`},
		{name: "tilde path kept as written", doc: "cwd: ~/src", want: Local{Cwd: "~/src"}},

		// env.set values: any non-null scalar, as written.
		{name: "set scalars as literal text", doc: `
env:
  set:
    NUM: 1
    FLOAT: 1.50
    HEX: 0x10
    BOOL: true
    YES: yes
    QUOTED: "007"
    TIME: 2001-12-14
    INF: .inf
    EQUALS: a=b
`, want: Local{Env: Env{Set: map[string]string{
			"NUM": "1", "FLOAT": "1.50", "HEX": "0x10", "BOOL": "true", "YES": "yes",
			"QUOTED": "007", "TIME": "2001-12-14", "INF": ".inf", "EQUALS": "a=b",
		}}}},
		{name: "set keys as literal text", doc: "env: {set: {1: a, true: b, lower.dot-name: c}}",
			want: Local{Env: Env{Set: map[string]string{"1": "a", "true": "b", "lower.dot-name": "c"}}}},

		// Aliases are followed.
		{name: "aliases", doc: `
env:
  passthrough: &names [A, B]
  scrub: *names
  set: {X: &v hello, Y: *v}
`, want: Local{Env: Env{
			Passthrough: []string{"A", "B"}, Scrub: []string{"A", "B"},
			Set: map[string]string{"X": "hello", "Y": "hello"},
		}}},
		{name: "alias to a number", doc: "timeoutMs: &t 10\ngraceMs: *t\n",
			want: Local{TimeoutMs: 10, GraceMs: 10}},

		// Unknown and duplicate keys.
		{name: "unknown key", doc: "foo: 1", err: `bash-local: unknown key "foo" (line 1)`},
		{name: "unknown key after good ones", doc: "timeoutMs: 1\n\nfoo: 1\n",
			err: `bash-local: unknown key "foo" (line 3)`},
		{name: "keys are case-sensitive", doc: "TimeoutMs: 1", err: `bash-local: unknown key "TimeoutMs" (line 1)`},
		{name: "snake case is unknown", doc: "timeout_ms: 1", err: `bash-local: unknown key "timeout_ms" (line 1)`},
		{name: "unknown nested key", doc: "env:\n  foo: [a]\n", err: `bash-local: unknown key "env.foo" (line 2)`},
		{name: "unknown null key", doc: "foo:", err: `bash-local: unknown key "foo" (line 1)`},
		{name: "env keys are not top-level keys", doc: "passthrough: [A]",
			err: `bash-local: unknown key "passthrough" (line 1)`},
		{name: "duplicate key", doc: "timeoutMs: 1\ntimeoutMs: 2\n",
			err: `bash-local: duplicate key "timeoutMs" (line 2)`},
		{name: "duplicate null key", doc: "cwd:\ncwd: /x\n", err: `bash-local: duplicate key "cwd" (line 2)`},
		{name: "duplicate quoted key", doc: "shell: a\n\"shell\": b\n", err: `bash-local: duplicate key "shell" (line 2)`},
		{name: "duplicate env", doc: "env: {}\nenv: {}\n", err: `bash-local: duplicate key "env" (line 2)`},
		{name: "duplicate nested key", doc: "env:\n  scrub: [A]\n  scrub: [B]\n",
			err: `bash-local: duplicate key "env.scrub" (line 3)`},
		{name: "duplicate set key", doc: "env:\n  set:\n    A: 1\n    A: 2\n",
			err: `bash-local: duplicate key "env.set.A" (line 4)`},
		{name: "duplicate set key spelled differently", doc: "env: {set: {1: a, \"1\": b}}",
			err: `bash-local: duplicate key "env.set.1" (line 1)`},
		{name: "merge key", doc: "base: &b {timeoutMs: 1}\n<<: *b\n", err: `bash-local: unknown key "base" (line 1)`},
		{name: "merge key alone", doc: "<<: {timeoutMs: 1}\n", err: `bash-local: merge keys (<<) are not supported (line 1)`},
		{name: "merge key in set", doc: "env:\n  set:\n    <<: {A: b}\n",
			err: `bash-local: merge keys (<<) are not supported (line 3)`},
		{name: "complex key", doc: "? [a, b]\n: 1\n", err: `bash-local: config keys must be strings (line 1)`},
		{name: "complex env key", doc: "env:\n  ? {a: b}\n  : 1\n", err: `bash-local: env keys must be strings (line 2)`},
		{name: "complex set key", doc: "env:\n  set:\n    ? [a]\n    : 1\n",
			err: `bash-local: env.set keys must be strings (line 3)`},

		// Shapes.
		{name: "top level list", doc: "- timeoutMs: 1\n", err: `bash-local: config must be a mapping (line 1)`},
		{name: "top level scalar", doc: "hello\n", err: `bash-local: config must be a mapping (line 1)`},
		{name: "top level number", doc: "---\n42\n", err: `bash-local: config must be a mapping (line 2)`},
		{name: "env not a mapping", doc: "env: [a]", err: `bash-local: env must be a mapping (line 1)`},
		{name: "env scalar", doc: "env: PATH", err: `bash-local: env must be a mapping (line 1)`},
		{name: "two documents", doc: "timeoutMs: 1\n---\ngraceMs: 2\n",
			err: `bash-local: config must be a single YAML document (second one at line 2)`},
		{name: "empty first document then one", doc: "---\n---\ngraceMs: 2\n",
			err: `bash-local: config must be a single YAML document (second one at line 2)`},
		{name: "syntax error", doc: "timeoutMs: [1\n", err: "bash-local: yaml: line 1: did not find expected ',' or ']'"},
		{name: "tab indentation", doc: "env:\n\tscrub: [A]\n", err: "bash-local: yaml: line 2: found character that cannot start any token"},
		{name: "unknown anchor", doc: "timeoutMs: *nope\n", err: "bash-local: yaml: unknown anchor 'nope' referenced"},

		// Lists of strings.
		{name: "passthrough scalar", doc: "env:\n  passthrough: GITHUB_TOKEN\n",
			err: `bash-local: env.passthrough must be a list of strings (line 2)`},
		{name: "passthrough map", doc: "env:\n  passthrough: {A: b}\n",
			err: `bash-local: env.passthrough must be a list of strings (line 2)`},
		{name: "passthrough number item", doc: "env:\n  passthrough:\n    - A\n    - 1\n",
			err: `bash-local: env.passthrough must be a list of strings (line 4)`},
		{name: "passthrough null item", doc: "env:\n  passthrough:\n    - A\n    -\n",
			err: `bash-local: env.passthrough must be a list of strings (line 4)`},
		{name: "passthrough nested list", doc: "env: {passthrough: [[A]]}",
			err: `bash-local: env.passthrough must be a list of strings (line 1)`},
		{name: "scrub bool item", doc: "env:\n  scrub: [A, false]\n",
			err: `bash-local: env.scrub must be a list of strings (line 2)`},
		{name: "scrub map item", doc: "env:\n  scrub:\n    - A: b\n",
			err: `bash-local: env.scrub must be a list of strings (line 3)`},
		{name: "scrub string", doc: "env: {scrub: \"A,B\"}",
			err: `bash-local: env.scrub must be a list of strings (line 1)`},

		// Maps of strings.
		{name: "set list", doc: "env:\n  set: [A=b]\n", err: `bash-local: env.set must be a map of strings (line 2)`},
		{name: "set scalar", doc: "env:\n  set: A=b\n", err: `bash-local: env.set must be a map of strings (line 2)`},
		{name: "set null value", doc: "env:\n  set:\n    A: x\n    B:\n",
			err: `bash-local: env.set must be a map of strings (line 4)`},
		{name: "set tilde value", doc: "env:\n  set:\n    B: ~\n",
			err: `bash-local: env.set must be a map of strings (line 3)`},
		{name: "set list value", doc: "env:\n  set:\n    B: [x]\n",
			err: `bash-local: env.set must be a map of strings (line 3)`},
		{name: "set map value", doc: "env:\n  set:\n    B:\n      C: d\n",
			err: `bash-local: env.set must be a map of strings (line 4)`},

		// Validate runs after decoding.
		{name: "set name with =", doc: "env: {set: {\"A=B\": x}}",
			err: `bash-local: env.set name "A=B" is not a valid variable name`},
		{name: "set empty name", doc: "env: {set: {\"\": x}}",
			err: `bash-local: env.set name "" is not a valid variable name`},
		{name: "set value with NUL", doc: "env: {set: {A: \"x\\0y\"}}",
			err: `bash-local: env.set value of "A" contains a NUL byte`},
		{name: "malformed scrub pattern", doc: "env: {scrub: [\"MY_[\"]}",
			err: `bash-local: env.scrub pattern "MY_[" is malformed`},
		{name: "malformed passthrough pattern", doc: "env: {passthrough: [\"[\"]}",
			err: `bash-local: env.passthrough pattern "[" is malformed`},

		// Errors come in document order.
		{name: "first error wins", doc: "graceMs: -1\nfoo: 1\ntimeoutMs: -1\n",
			err: "bash-local: graceMs must be a positive finite number"},
		{name: "first error wins, unknown key first", doc: "foo: 1\ngraceMs: -1\n",
			err: `bash-local: unknown key "foo" (line 1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLocal([]byte(tc.doc))
			if errText(err) != tc.err {
				t.Fatalf("ParseLocal error = %q, want %q", errText(err), tc.err)
			}
			if diff := cmp.Diff(tc.want, got, cmpLocal); diff != "" {
				t.Errorf("ParseLocal mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseLocalNumbers checks every numeric key against values that are
// refused, with the exact texts.
func TestParseLocalNumbers(t *testing.T) {
	positive := []string{"0", "0.0", "-0", "-1", "-0.5", "1e-400", "-1e-400", ".inf", "+.inf", "-.inf", ".Inf", "-.INF", ".nan", ".NaN", ".NAN", "1e400", "-1e400", "!!float 1e400", "0x0", "-0x10"}
	notNumber := []string{`"5"`, `'5'`, `"abc"`, "abc", "true", "false", "yes", "[1]", "{a: 1}", "2001-12-14", "!!str 5", "!!int abc", "!!int 1e400", "\"\"", "1.2.3", "1,000", "5ms", "|\n  5"}
	for _, key := range numericKeys {
		for _, v := range positive {
			t.Run(key+"="+v, func(t *testing.T) {
				_, err := ParseLocal([]byte(key + ": " + v + "\n"))
				if want := "bash-local: " + key + " must be a positive finite number"; errText(err) != want {
					t.Errorf("error = %q, want %q", errText(err), want)
				}
			})
		}
		for _, v := range notNumber {
			t.Run(key+"="+v, func(t *testing.T) {
				_, err := ParseLocal([]byte("cwd: /x\n" + key + ": " + v + "\n"))
				if want := "bash-local: " + key + " must be a number (line 2)"; errText(err) != want {
					t.Errorf("error = %q, want %q", errText(err), want)
				}
			})
		}
		t.Run(key+" accepted", func(t *testing.T) {
			got, err := ParseLocal([]byte(key + ": 2.5\n"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(withNumber(key, 2.5), got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLocalStrings(t *testing.T) {
	bad := []string{"5", "1.5", "true", "-1", "[a]", "{a: b}", "2001-12-14", ".inf", "!!binary aGk="}
	for _, key := range []string{"cwd", "spillDir", "shell"} {
		for _, v := range bad {
			t.Run(key+"="+v, func(t *testing.T) {
				_, err := ParseLocal([]byte("\n" + key + ": " + v + "\n"))
				if want := "bash-local: " + key + " must be a string (line 2)"; errText(err) != want {
					t.Errorf("error = %q, want %q", errText(err), want)
				}
			})
		}
	}
}

func TestDecodeLocal(t *testing.T) {
	const doc = `
other: {anything: [goes, here]}
bash-local:
  timeoutMs: 5000
  env:
    scrub: [A]
empty:
`
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	section := func(name string) *yaml.Node {
		m := root.Content[0]
		for i := 0; i < len(m.Content); i += 2 {
			if m.Content[i].Value == name {
				return m.Content[i+1]
			}
		}
		t.Fatalf("no key %q", name)
		return nil
	}

	got, err := DecodeLocal(section("bash-local"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Local{TimeoutMs: 5000, Env: Env{Scrub: []string{"A"}}}, got); diff != "" {
		t.Errorf("DecodeLocal mismatch (-want +got):\n%s", diff)
	}

	// Line numbers are those of the whole file.
	_, err = DecodeLocal(section("other"))
	if want := `bash-local: unknown key "anything" (line 2)`; errText(err) != want {
		t.Errorf("error = %q, want %q", errText(err), want)
	}

	for name, n := range map[string]*yaml.Node{
		"nil":       nil,
		"zero node": {},
		"null":      section("empty"),
		"empty doc": {Kind: yaml.DocumentNode},
	} {
		got, err := DecodeLocal(n)
		if err != nil || !cmp.Equal(got, Local{}) {
			t.Errorf("DecodeLocal(%s) = %+v, %v; want zero, nil", name, got, err)
		}
	}

	// A hand-built node, with no tags and no line numbers.
	n := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "graceMs"}, {Kind: yaml.ScalarNode, Value: "10"},
		{Kind: yaml.ScalarNode, Value: "shell"}, {Kind: yaml.ScalarNode, Value: "sh"},
	}}
	got, err = DecodeLocal(n)
	if err != nil || !cmp.Equal(got, Local{GraceMs: 10, Shell: "sh"}) {
		t.Errorf("DecodeLocal(hand-built) = %+v, %v", got, err)
	}
}

// TestUnmarshalYAML checks that a Local inside a larger struct decodes
// strictly through the yaml package.
func TestUnmarshalYAML(t *testing.T) {
	type file struct {
		Local Local `yaml:"bash-local"`
		Name  string
	}
	var f file
	if err := yaml.Unmarshal([]byte("name: x\nbash-local:\n  graceMs: 7\n"), &f); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(file{Name: "x", Local: Local{GraceMs: 7}}, f); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	for doc, want := range map[string]string{
		"bash-local:\n  grace: 7\n":       `bash-local: unknown key "grace" (line 2)`,
		"bash-local:\n  graceMs: 0\n":     "bash-local: graceMs must be a positive finite number",
		"bash-local:\n  graceMs: \"7\"\n": "bash-local: graceMs must be a number (line 2)",
	} {
		if err := yaml.Unmarshal([]byte(doc), &f); errText(err) != want {
			t.Errorf("Unmarshal(%q) error = %q, want %q", doc, errText(err), want)
		}
	}
}

func FuzzParseLocal(f *testing.F) {
	for _, seed := range []string{
		"",
		"# comment\n",
		"timeoutMs: 1000\nmaxTimeoutMs: 500\n",
		"cwd: /w\nshell: /bin/bash\nspillDir: /tmp\ngraceMs: 1.5\nmaxOutputBytes: 0x10\nmaxSpillBytes: 1e9\n",
		"env:\n  passthrough: [A, 'B_*']\n  scrub: [C]\n  set: {D: 1, E: x}\n",
		"env: {set: {<<: {A: b}}}",
		"a: &a [*a]",
		"timeoutMs: .nan\n",
		"timeoutMs: 1e400\n",
		"env:\n  set:\n    A: &x y\n    B: *x\n",
		"- 1\n- 2\n",
		"timeoutMs: 1\n---\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseLocal(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bash-local: ") {
				t.Errorf("error without prefix: %q", err)
			}
			if !cmp.Equal(c, Local{}) {
				t.Errorf("error %q with a non-zero Local %+v", err, c)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseLocal returned a Local that fails Validate: %v\n%+v", err, c)
		}
		d := c.WithDefaults()
		for _, n := range d.numeric() {
			if v := *n.v; !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("WithDefaults: %s = %v", n.key, v)
			}
		}
		if d.TimeoutMs > d.MaxTimeoutMs {
			t.Errorf("WithDefaults: timeoutMs %v > maxTimeoutMs %v", d.TimeoutMs, d.MaxTimeoutMs)
		}
	})
}
