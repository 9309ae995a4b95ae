package config

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"
)

// parseLocal parses doc as the local section of a file: line N of doc is
// line N+1 of the file.
func parseLocal(doc string) (Local, error) {
	f, err := Parse([]byte("local:\n" + indent(doc)))
	return f.Local, err
}

func indent(doc string) string {
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}

func TestParseLocal(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want Local
		err  string
	}{
		// A null or empty section.
		{name: "null section", doc: "~\n"},
		{name: "empty mapping", doc: "{}\n"},

		// Every key.
		{name: "every key", doc: `
cwd: /work
timeoutMs: 1000
maxTimeoutMs: 2000.5
maxOutputBytes: 100
keepHeadBytes: 25
maxSpillBytes: 1e6
maxSpillTotalBytes: 1e7
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
			Cwd: "/work", Timeout: time.Second, MaxTimeout: 2001 * time.Millisecond, MaxOutputBytes: 100,
			KeepHeadBytes: ptr[int64](25), MaxSpillBytes: 1e6, MaxSpillTotalBytes: 1e7, Grace: 250 * time.Millisecond, SpillDir: "/var/tmp", Shell: "/bin/bash",
			Env: Env{
				Passthrough: []string{"GITHUB_TOKEN", "MY_*"},
				Scrub:       []string{"FOO", "BAR_*"},
				Set:         map[string]string{"A": "x", "B": ""},
			},
		}},
		{name: "flow style", doc: `{timeoutMs: 5, env: {set: {A: b}}}`,
			want: Local{Timeout: 5 * time.Millisecond, Env: Env{Set: map[string]string{"A": "b"}}}},

		// Numbers in every YAML spelling; a fraction is rounded up.
		{name: "int", doc: "timeoutMs: 42", want: Local{Timeout: 42 * time.Millisecond}},
		{name: "float", doc: "timeoutMs: 0.5", want: Local{Timeout: time.Millisecond}},
		{name: "leading dot", doc: "timeoutMs: .5", want: Local{Timeout: time.Millisecond}},
		{name: "plus sign", doc: "timeoutMs: +7", want: Local{Timeout: 7 * time.Millisecond}},
		{name: "fraction of a byte", doc: "maxOutputBytes: 1.5", want: Local{MaxOutputBytes: 2}},
		{name: "exponent", doc: "maxSpillBytes: 1.5e3", want: Local{MaxSpillBytes: 1500}},
		{name: "hex", doc: "maxOutputBytes: 0x100", want: Local{MaxOutputBytes: 256}},
		{name: "octal", doc: "maxOutputBytes: 0o17", want: Local{MaxOutputBytes: 15}},
		{name: "underscores", doc: "maxSpillBytes: 67_108_864", want: Local{MaxSpillBytes: 67108864}},
		// Beyond what the Go types hold, saturated.
		{name: "beyond int64", doc: "maxSpillBytes: 18446744073709551615",
			want: Local{MaxSpillBytes: math.MaxInt64}},
		{name: "beyond uint64", doc: "maxSpillBytes: 100000000000000000000000",
			want: Local{MaxSpillBytes: math.MaxInt64}},
		{name: "beyond a Duration", doc: "timeoutMs: 1e300",
			want: Local{Timeout: time.Duration(math.MaxInt64).Truncate(time.Millisecond)}},
		{name: "explicit int tag", doc: "graceMs: !!int 9", want: Local{Grace: 9 * time.Millisecond}},
		{name: "explicit float tag on a quoted number", doc: `graceMs: !!float "9.5"`, want: Local{Grace: 10 * time.Millisecond}},
		{name: "tiny but positive", doc: "graceMs: 1e-300", want: Local{Grace: time.Millisecond}},

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
			want: Local{Timeout: 10 * time.Millisecond, Grace: 10 * time.Millisecond}},

		// Unknown and duplicate keys.
		{name: "unknown key", doc: "foo: 1", err: `local.foo: unknown key (line 2)`},
		{name: "unknown key after good ones", doc: "timeoutMs: 1\n\nfoo: 1\n",
			err: `local.foo: unknown key (line 4)`},
		{name: "keys are case-sensitive", doc: "TimeoutMs: 1", err: `local.TimeoutMs: unknown key (line 2); did you mean local.timeoutMs?`},
		{name: "snake case is unknown", doc: "timeout_ms: 1", err: `local.timeout_ms: unknown key (line 2); did you mean local.timeoutMs?`},
		{name: "unknown nested key", doc: "env:\n  foo: [a]\n", err: `local.env.foo: unknown key (line 3)`},
		{name: "unknown null key", doc: "foo:", err: `local.foo: unknown key (line 2)`},
		{name: "env keys are not top-level keys", doc: "passthrough: [A]",
			err: `local.passthrough: unknown key (line 2)`},
		{name: "duplicate key", doc: "timeoutMs: 1\ntimeoutMs: 2\n",
			err: `local.timeoutMs: duplicate key (line 3)`},
		{name: "duplicate null key", doc: "cwd:\ncwd: /x\n", err: `local.cwd: duplicate key (line 3)`},
		{name: "duplicate quoted key", doc: "shell: a\n\"shell\": b\n", err: `local.shell: duplicate key (line 3)`},
		{name: "duplicate env", doc: "env: {}\nenv: {}\n", err: `local.env: duplicate key (line 3)`},
		{name: "duplicate nested key", doc: "env:\n  scrub: [A]\n  scrub: [B]\n",
			err: `local.env.scrub: duplicate key (line 4)`},
		{name: "duplicate set key", doc: "env:\n  set:\n    A: 1\n    A: 2\n",
			err: `local.env.set.A: duplicate key (line 5)`},
		{name: "duplicate set key spelled differently", doc: "env: {set: {1: a, \"1\": b}}",
			err: `local.env.set.1: duplicate key (line 2)`},
		{name: "merge key", doc: "base: &b {timeoutMs: 1}\n<<: *b\n", err: `local.base: unknown key (line 2)`},
		{name: "merge key alone", doc: "<<: {timeoutMs: 1}\n", err: `local: merge keys (<<) are not supported (line 2)`},
		{name: "merge key in set", doc: "env:\n  set:\n    <<: {A: b}\n",
			err: `local.env.set: merge keys (<<) are not supported (line 4)`},
		{name: "complex key", doc: "? [a, b]\n: 1\n", err: `local: keys must be strings (line 2)`},
		{name: "complex env key", doc: "env:\n  ? {a: b}\n  : 1\n", err: `local.env: keys must be strings (line 3)`},
		{name: "complex set key", doc: "env:\n  set:\n    ? [a]\n    : 1\n",
			err: `local.env.set: keys must be strings (line 4)`},

		// Shapes.
		{name: "section list", doc: "- timeoutMs: 1\n", err: `local must be a mapping (line 2)`},
		{name: "section scalar", doc: "hello\n", err: `local must be a mapping (line 2)`},
		{name: "env not a mapping", doc: "env: [a]", err: `local.env must be a mapping (line 2)`},
		{name: "env scalar", doc: "env: PATH", err: `local.env must be a mapping (line 2)`},

		// Lists of strings.
		{name: "passthrough scalar", doc: "env:\n  passthrough: GITHUB_TOKEN\n",
			err: `local.env.passthrough must be a list of strings (line 3)`},
		{name: "passthrough map", doc: "env:\n  passthrough: {A: b}\n",
			err: `local.env.passthrough must be a list of strings (line 3)`},
		{name: "passthrough number item", doc: "env:\n  passthrough:\n    - A\n    - 1\n",
			err: `local.env.passthrough must be a list of strings (line 5)`},
		{name: "passthrough null item", doc: "env:\n  passthrough:\n    - A\n    -\n",
			err: `local.env.passthrough must be a list of strings (line 5)`},
		{name: "passthrough nested list", doc: "env: {passthrough: [[A]]}",
			err: `local.env.passthrough must be a list of strings (line 2)`},
		{name: "scrub bool item", doc: "env:\n  scrub: [A, false]\n",
			err: `local.env.scrub must be a list of strings (line 3)`},
		{name: "scrub map item", doc: "env:\n  scrub:\n    - A: b\n",
			err: `local.env.scrub must be a list of strings (line 4)`},
		{name: "scrub string", doc: "env: {scrub: \"A,B\"}",
			err: `local.env.scrub must be a list of strings (line 2)`},

		// Maps of strings.
		{name: "set list", doc: "env:\n  set: [A=b]\n", err: `local.env.set must be a map of strings (line 3)`},
		{name: "set scalar", doc: "env:\n  set: A=b\n", err: `local.env.set must be a map of strings (line 3)`},
		{name: "set null value", doc: "env:\n  set:\n    A: x\n    B:\n",
			err: `local.env.set must be a map of strings (line 5)`},
		{name: "set tilde value", doc: "env:\n  set:\n    B: ~\n",
			err: `local.env.set must be a map of strings (line 4)`},
		{name: "set list value", doc: "env:\n  set:\n    B: [x]\n",
			err: `local.env.set must be a map of strings (line 4)`},
		{name: "set map value", doc: "env:\n  set:\n    B:\n      C: d\n",
			err: `local.env.set must be a map of strings (line 5)`},

		// Validate runs after decoding.
		{name: "set name with =", doc: "env: {set: {\"A=B\": x}}",
			err: `local.env.set name "A=B" is not a valid variable name (line 2)`},
		{name: "set empty name", doc: "env: {set: {\"\": x}}",
			err: `local.env.set name "" is not a valid variable name (line 2)`},
		{name: "set value with NUL", doc: "env: {set: {A: \"x\\0y\"}}",
			err: `local.env.set value of "A" contains a NUL byte (line 2)`},
		{name: "malformed scrub pattern", doc: "env: {scrub: [\"MY_[\"]}",
			err: `local.env.scrub pattern "MY_[" is malformed (line 2)`},
		{name: "malformed passthrough pattern", doc: "env: {passthrough: [\"[\"]}",
			err: `local.env.passthrough pattern "[" is malformed (line 2)`},

		// Errors come in document order.
		{name: "first error wins", doc: "graceMs: -1\nfoo: 1\ntimeoutMs: -1\n",
			err: `local.graceMs must be a positive finite number (line 2)`},
		{name: "first error wins, unknown key first", doc: "foo: 1\ngraceMs: -1\n",
			err: `local.foo: unknown key (line 2)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLocal(tc.doc)
			if errText(err) != tc.err {
				t.Fatalf("Parse error = %q, want %q", errText(err), tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
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
				_, err := parseLocal(key + ": " + v + "\n")
				if want := "local." + key + " must be a positive finite number (line 2)"; errText(err) != want {
					t.Errorf("error = %q, want %q", errText(err), want)
				}
			})
		}
		for _, v := range notNumber {
			t.Run(key+"="+v, func(t *testing.T) {
				_, err := parseLocal("cwd: /x\n" + key + ": " + v + "\n")
				if want := "local." + key + " must be a number (line 3)"; errText(err) != want {
					t.Errorf("error = %q, want %q", errText(err), want)
				}
			})
		}
		t.Run(key+" accepted", func(t *testing.T) {
			got, err := parseLocal(key + ": 2.5\n")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(withNumber(key, 2.5), got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseLocalKeepHeadBytes: the one local number where 0 is a value.
func TestParseLocalKeepHeadBytes(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want Local
		err  string
	}{
		{"keepHeadBytes: 0\n", Local{KeepHeadBytes: ptr[int64](0)}, ""},
		{"keepHeadBytes: -0\n", Local{KeepHeadBytes: ptr[int64](0)}, ""},
		{"keepHeadBytes: 0x0\n", Local{KeepHeadBytes: ptr[int64](0)}, ""},
		{"keepHeadBytes: 1000\n", Local{KeepHeadBytes: ptr[int64](1000)}, ""},
		{"keepHeadBytes: 2.5\n", Local{KeepHeadBytes: ptr[int64](3)}, ""},
		{"keepHeadBytes: 1e-400\n", Local{KeepHeadBytes: ptr[int64](0)}, ""}, // YAML reads it as 0
		{"keepHeadBytes:\n", Local{}, ""},
		{"keepHeadBytes: ~\n", Local{}, ""},
		{"keepHeadBytes: &h 10\nmaxOutputBytes: 20\ngraceMs: *h\n", Local{KeepHeadBytes: ptr[int64](10), MaxOutputBytes: 20, Grace: 10 * time.Millisecond}, ""},
		{"maxOutputBytes: 100\nkeepHeadBytes: 99\n", Local{MaxOutputBytes: 100, KeepHeadBytes: ptr[int64](99)}, ""},
		// A small maxOutputBytes with the default head is fine: the default follows it.
		{"maxOutputBytes: 3\n", Local{MaxOutputBytes: 3}, ""},
		{"keepHeadBytes: -1\n", Local{}, "local.keepHeadBytes must be a non-negative finite number (line 2)"},
		{"keepHeadBytes: -1e-400\n", Local{KeepHeadBytes: ptr[int64](0)}, ""},
		{"keepHeadBytes: .nan\n", Local{}, "local.keepHeadBytes must be a non-negative finite number (line 2)"},
		{"keepHeadBytes: .inf\n", Local{}, "local.keepHeadBytes must be a non-negative finite number (line 2)"},
		{"keepHeadBytes: -.inf\n", Local{}, "local.keepHeadBytes must be a non-negative finite number (line 2)"},
		{"keepHeadBytes: 1e400\n", Local{}, "local.keepHeadBytes must be a non-negative finite number (line 2)"},
		{"keepHeadBytes: \"0\"\n", Local{}, "local.keepHeadBytes must be a number (line 2)"},
		{"keepHeadBytes: false\n", Local{}, "local.keepHeadBytes must be a number (line 2)"},
		{"keepHeadBytes: [0]\n", Local{}, "local.keepHeadBytes must be a number (line 2)"},
		// Smaller than maxOutputBytes (exact, docs/spec.md §3.4a), given or default;
		// the line is keepHeadBytes's.
		{"keepHeadBytes: 64000\n", Local{}, "local.keepHeadBytes must be smaller than local.maxOutputBytes (line 2)"},
		{"maxOutputBytes: 100\n\nkeepHeadBytes: 100\n", Local{}, "local.keepHeadBytes must be smaller than local.maxOutputBytes (line 4)"},
		{"keepHeadBytes: 200\nmaxOutputBytes: 100\n", Local{}, "local.keepHeadBytes must be smaller than local.maxOutputBytes (line 2)"},
		{"maxOutputBytes: 100\nkeepHeadBytes: 99.5\n", Local{}, "local.keepHeadBytes must be smaller than local.maxOutputBytes (line 3)"},
	} {
		checkParseLocal(t, tc.yaml, tc.want, tc.err)
	}
}

// checkParseLocal parses doc as the local section and compares the result
// and the error text.
func checkParseLocal(t *testing.T, doc string, want Local, wantErr string) {
	t.Helper()
	got, err := parseLocal(doc)
	if errText(err) != wantErr {
		t.Errorf("%q: error %q, want %q", doc, errText(err), wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%q: (-want +got)\n%s", doc, diff)
	}
}

func TestParseLocalStrings(t *testing.T) {
	bad := []string{"5", "1.5", "true", "-1", "[a]", "{a: b}", "2001-12-14", ".inf", "!!binary aGk="}
	for _, key := range []string{"cwd", "spillDir", "shell", "containment"} {
		for _, v := range bad {
			t.Run(key+"="+v, func(t *testing.T) {
				_, err := parseLocal("\n" + key + ": " + v + "\n")
				if want := "local." + key + " must be a string (line 3)"; errText(err) != want {
					t.Errorf("error = %q, want %q", errText(err), want)
				}
			})
		}
	}
}

func TestParseLocalContainment(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want Local
		err  string
	}{
		{"keepDetached: true\ncontainment: marker\n", Local{KeepDetached: true, Containment: ContainMarker}, ""},
		{"containment: group\n", Local{Containment: ContainGroup}, ""},
		{"keepDetached: false\ncontainment: cgroup\n", Local{Containment: ContainCgroup}, ""},
		{"containment: auto\n", Local{Containment: ContainAuto}, ""},
		{"containment: docker\n", Local{}, `local.containment: "docker" is not one of "auto", "cgroup", "marker" or "group" (line 2)`},
		{"\ncontainment: cgroups\n", Local{}, `local.containment: "cgroups" is not one of "auto", "cgroup", "marker" or "group" (line 3); did you mean "cgroup"?`},
		{"keepDetached: yes please\n", Local{}, "local.keepDetached must be true or false (line 2)"},
		{"keepDetached: 1\n", Local{}, "local.keepDetached must be true or false (line 2)"},
	} {
		checkParseLocal(t, tc.yaml, tc.want, tc.err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want File
	}{
		{"empty", "", File{}},
		{"comments only", "# nothing here\n\n# still nothing\n", File{}},
		{"document marker only", "---\n", File{}},
		{"document marker and comment", "---\n# nothing\n...\n", File{}},
		{"null", "~\n", File{}},
		{"empty mapping", "{}\n", File{}},
		{"redact off", "redact: off\n", File{Redact: "off"}},
		{"audit file", "audit:\n  path: /var/log/dsh/audit.jsonl\n", File{Audit: Audit{Path: "/var/log/dsh/audit.jsonl"}}},
		{"audit stderr", "audit: {path: '-'}\n", File{Audit: Audit{Path: "-"}}},
		{"redact known", "redact: known\n", File{Redact: "known"}},
		{"serve limits", "serve:\n  maxSessions: 8\n  maxRequestBytes: 1e6\n  idleSessionMs: 60000\n", File{Serve: Serve{MaxSessions: 8, MaxRequestBytes: 1e6, IdleSession: time.Minute}}},
		{"foreground limits", "bash:\n  maxForegroundPerSession: 4\n  maxForeground: 32\n", File{Bash: Bash{MaxForegroundPerSession: 4, MaxForeground: 32}}},
		{"everything", `
executor: local
local:
  cwd: /srv
  timeoutMs: 1000
  graceMs: 50
  env: {set: {A: 1}}
tools: [tasks, bash]
bash: {enableRunInBackground: true}
tasks: {maxRunningPerSession: 3, maxRunning: 9, waitTimeoutMs: 10, maxWaitTimeoutMs: 20.5}
`, File{
			Executor: "local",
			Local:    Local{Cwd: "/srv", Timeout: time.Second, Grace: 50 * time.Millisecond, Env: Env{Set: map[string]string{"A": "1"}}},
			Tools:    []string{"tasks", "bash"},
			Bash:     Bash{EnableRunInBackground: ptr(true)},
			Tasks:    Tasks{MaxRunningPerSession: 3, MaxRunning: 9, WaitTimeout: 10 * time.Millisecond, MaxWaitTimeout: 21 * time.Millisecond},
		}},
		{"nulls are absent", "executor: ~\nlocal: ~\ntools: ~\nbash: {enableRunInBackground: ~}\ntasks: {waitTimeoutMs: ~}\n", File{}},
		{"bash only", "tools: [bash]\n", File{Tools: []string{"bash"}}},
		{"no tools", "tools: []\n", File{Tools: []string{}}},
		{"background off", "bash: {enableRunInBackground: false}\n", File{Bash: Bash{EnableRunInBackground: ptr(false)}}},
		{"yield off", "bash: {yieldAfterMs: 0}\n", File{Bash: Bash{YieldAfter: ptr[time.Duration](0)}}},
		{"yield after 1.5 s", "bash: {yieldAfterMs: 1500}\n", File{Bash: Bash{YieldAfter: ptr(1500 * time.Millisecond)}}},
		{"yield default", "bash: {yieldAfterMs: ~}\n", File{}},
		{"aliases", "tasks: {waitTimeoutMs: &w 10, maxWaitTimeoutMs: *w}\n", File{Tasks: Tasks{WaitTimeout: 10 * time.Millisecond, MaxWaitTimeout: 10 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"unknown key", "foo: 1\n", `foo: unknown key (line 1)`},
		{"near miss", "\ntool: [bash]\n", `tool: unknown key (line 2); did you mean tools?`},
		{"near miss in a section", "local:\n  timeoutMsec: 5\n", `local.timeoutMsec: unknown key (line 2); did you mean local.timeoutMs?`},
		{"snake case", "local:\n  timeout_ms: 5\n", `local.timeout_ms: unknown key (line 2); did you mean local.timeoutMs?`},
		{"wrong case", "local:\n  TimeoutMs: 5\n", `local.TimeoutMs: unknown key (line 2); did you mean local.timeoutMs?`},
		{"a prefix", "tasks:\n  maxWait: 5\n", `tasks.maxWait: unknown key (line 2); did you mean tasks.maxWaitTimeoutMs?`},
		{"a key of another section", "local:\n  waitTimeoutMs: 5\n", `local.waitTimeoutMs: unknown key (line 2)`},
		{"nothing near", "local:\n  frobnicate: 5\n", `local.frobnicate: unknown key (line 2)`},
		{"duplicate key", "tools: [bash]\ntools: [tasks]\n", `tools: duplicate key (line 2)`},
		{"merge key", "base: &b {}\n<<: *b\n", `base: unknown key (line 1); did you mean bash?`},
		{"merge key first", "<<: {tools: []}\n", `config: merge keys (<<) are not supported (line 1)`},
		{"complex key", "? [a, b]\n: 1\n", `config: keys must be strings (line 1)`},
		{"not a mapping", "- a\n", "config must be a mapping (line 1)"},
		{"a scalar", "hello\n", "config must be a mapping (line 1)"},
		{"a number", "---\n42\n", "config must be a mapping (line 2)"},
		{"two documents", "tools: []\n---\ntools: []\n", "config must be a single YAML document, not several (line 2)"},
		{"empty first document then one", "---\n---\ntools: []\n", "config must be a single YAML document, not several (line 2)"},
		{"malformed", "local: [\n", "not valid YAML: did not find expected node content (line 1)"},
		{"syntax error", "tools: [1\n", "not valid YAML: did not find expected ',' or ']' (line 1)"},
		{"tab indentation", "local:\n\tcwd: /\n", "not valid YAML: found character that cannot start any token (line 2)"},
		{"first-line problem", "a: b: c\n", "not valid YAML: mapping values are not allowed in this context (line 1)"},
		{"unknown anchor", "local:\n  cwd: /\ntools: *nope\n", "not valid YAML: unknown anchor 'nope' referenced (line 3)"},
		{"control character", "local:\n  cwd: \"a\"\x01\n", "not valid YAML: control characters are not allowed (line 2)"},
		{"invalid UTF-8", "local:\n\n  cwd: \"\xff\"\n", "not valid YAML: invalid leading UTF-8 octet (line 3)"},
		{"executor", "executor: docker\n", `executor: "docker" is not one of "local" or "ssh" (line 1)`},
		{"executor near miss", "executor: locale\n", `executor: "locale" is not one of "local" or "ssh" (line 1); did you mean "local"?`},
		{"executor type", "executor: [local]\n", "executor must be a string (line 1)"},
		{"local graceMs", "local:\n  graceMs: -1\n", "local.graceMs must be a positive finite number (line 2)"},
		{"local zero", "local: {timeoutMs: 0}\n", "local.timeoutMs must be a positive finite number (line 1)"},
		{"tools type", "tools: bash\n", "tools must be a list of strings (line 1)"},
		{"tools item type", "tools: [[bash]]\n", "tools must be a list of strings (line 1)"},
		{"unknown tool", "tools:\n  - bash\n  - web\n", `tools[1]: "web" is not one of "bash" or "tasks" (line 3)`},
		{"tool near miss", "tools: [task]\n", `tools[0]: "task" is not one of "bash" or "tasks" (line 1); did you mean "tasks"?`},
		{"tool twice", "tools: [bash, bash]\n", `tools[1] "bash" is listed twice (line 1)`},
		{"bash type", "bash: true\n", "bash must be a mapping (line 1)"},
		{"bash unknown key", "bash:\n  background: true\n", `bash.background: unknown key (line 2)`},
		{"bash bool", "bash: {enableRunInBackground: \"yes\"}\n", "bash.enableRunInBackground must be true or false (line 1)"},
		{"yield negative", "bash:\n  yieldAfterMs: -1\n", "bash.yieldAfterMs must be a non-negative finite number (line 2)"},
		{"yield infinite", "bash: {yieldAfterMs: .inf}\n", "bash.yieldAfterMs must be a non-negative finite number (line 1)"},
		{"yield type", "bash: {yieldAfterMs: \"50s\"}\n", "bash.yieldAfterMs must be a number (line 1)"},
		{"background without tasks", "tools: [bash]\nbash:\n  enableRunInBackground: true\n",
			`bash.enableRunInBackground needs the task tools: add "tasks" to tools (line 3)`},
		{"tasks type", "tasks: 3\n", "tasks must be a mapping (line 1)"},
		{"tasks unknown key", "tasks: {foo: 1}\n", `tasks.foo: unknown key (line 1)`},
		{"running limit zero", "tasks: {maxRunningPerSession: 0}\n", "tasks.maxRunningPerSession must be a positive integer (line 1)"},
		{"running limit fraction", "tasks: {maxRunningPerSession: 1.5}\n", "tasks.maxRunningPerSession must be a positive integer (line 1)"},
		{"server running limit zero", "tasks: {maxRunning: 0}\n", "tasks.maxRunning must be a positive integer (line 1)"},
		{"wait type", "tasks: {waitTimeoutMs: \"5\"}\n", "tasks.waitTimeoutMs must be a number (line 1)"},
		{"wait zero", "tasks: {waitTimeoutMs: 0}\n", "tasks.waitTimeoutMs must be a positive finite number (line 1)"},
		{"wait infinite", "tasks: {maxWaitTimeoutMs: .inf}\n", "tasks.maxWaitTimeoutMs must be a positive finite number (line 1)"},
		{"inverted waits", "tasks:\n  waitTimeoutMs: 5000\n  maxWaitTimeoutMs: 1000\n",
			"tasks.waitTimeoutMs (5000) exceeds tasks.maxWaitTimeoutMs (1000) (line 2)"},
		{"default wait over cap", "tasks:\n  maxWaitTimeoutMs: 1000\n",
			"tasks.waitTimeoutMs (30000) exceeds tasks.maxWaitTimeoutMs (1000) (line 2)"},
		{"redact all", "tools: [bash]\nredact: all\n",
			`redact: "all" is not available: no maintained scanner's rule set redacts a 64 KB tail within 2 ms; use known (line 2)`},
		{"redact unknown", "redact: some\n", `redact: "some" is not one of "known" or "off" (line 1)`},
		{"redact not a string", "redact: true\n", "redact must be a string (line 1)"},
		{"audit unknown key", "audit:\n  file: x\n", "audit.file: unknown key (line 2)"},
		{"audit path not a string", "audit:\n  path: [x]\n", "audit.path must be a string (line 2)"},
		{"foreground limit zero", "bash:\n  maxForeground: 0\n", "bash.maxForeground must be a positive integer (line 2)"},
		{"serve sessions zero", "serve:\n  maxSessions: 0\n", "serve.maxSessions must be a positive integer (line 2)"},
		{"serve request bytes negative", "serve:\n  maxRequestBytes: -1\n", "serve.maxRequestBytes must be a positive finite number (line 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.yaml))
			if errText(err) != tc.err {
				t.Errorf("error = %q, want %q", errText(err), tc.err)
			}
			if !cmp.Equal(got, File{}) {
				t.Errorf("a refused file gave %+v, want the zero File", got)
			}
			var e *Error
			if !errorsAs(err, &e) {
				t.Errorf("error %T is not a *config.Error", err)
			}
		})
	}
}

// TestErrorKeyAndLine: a caller can tell which key failed, and where.
func TestErrorKeyAndLine(t *testing.T) {
	_, err := Parse([]byte("local:\n  env:\n    scrub: [\"[\"]\n"))
	var e *Error
	if !errorsAs(err, &e) || e.Key != "local.env.scrub" || e.Line != 3 {
		t.Fatalf("error = %#v, want key local.env.scrub at line 3", err)
	}
}

func TestFileWithDefaults(t *testing.T) {
	on, off := ptr(true), ptr(false)
	local := Local{Sandbox: Sandbox{Mode: SandboxAuto, Network: DefaultNetwork()}}.WithDefaults()
	tasks := Tasks{MaxRunningPerSession: 64, MaxRunning: 256, WaitTimeout: 30 * time.Second, MaxWaitTimeout: 10 * time.Minute}
	serve := Serve{MaxSessions: 64, MaxRequestBytes: 8 << 20, IdleSession: 5 * time.Minute}
	yield := ptr(50 * time.Second)
	for _, tc := range []struct {
		name string
		in   File
		want File
	}{
		{"zero", File{}, File{Executor: "local", Local: local, Tools: []string{"bash", "tasks"}, Bash: Bash{on, 16, 128, yield}, Tasks: tasks, Serve: serve, Redact: "known"}},
		{"bash only: no background", File{Tools: []string{"bash"}}, File{Executor: "local", Local: local, Tools: []string{"bash"}, Bash: Bash{off, 16, 128, yield}, Tasks: tasks, Serve: serve, Redact: "known"}},
		{"none", File{Tools: []string{}}, File{Executor: "local", Local: local, Tools: []string{}, Bash: Bash{off, 16, 128, yield}, Tasks: tasks, Serve: serve, Redact: "known"}},
		{"background off kept", File{Bash: Bash{EnableRunInBackground: off}}, File{Executor: "local", Local: local, Tools: []string{"bash", "tasks"}, Bash: Bash{off, 16, 128, yield}, Tasks: tasks, Serve: serve, Redact: "known"}},
		{"yield off kept", File{Bash: Bash{YieldAfter: ptr[time.Duration](0)}}, File{Executor: "local", Local: local, Tools: []string{"bash", "tasks"}, Bash: Bash{on, 16, 128, ptr[time.Duration](0)}, Tasks: tasks, Serve: serve, Redact: "known"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.in.WithDefaults()); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// FuzzParse: an accepted file validates, keeps validating with its defaults
// spelled out, and comes back the same through YAML; a refused one gives
// the zero File and an *Error that names a key or a line.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"# comment\n",
		"local:\n  timeoutMs: 1000\n  maxTimeoutMs: 500\n",
		"local:\n  cwd: /w\n  shell: /bin/bash\n  spillDir: /tmp\n  graceMs: 1.5\n  maxOutputBytes: 0x10\n  maxSpillBytes: 1e9\n",
		"local:\n  env:\n    passthrough: [A, 'B_*']\n    scrub: [C]\n    set: {D: 1, E: x}\n",
		"local: {env: {set: {<<: {A: b}}}}",
		"a: &a [*a]",
		"local: {timeoutMs: .nan}\n",
		"local: {timeoutMs: 1e400}\n",
		"- 1\n- 2\n",
		"tools: []\n---\n",
		"executor: local\ntools: [tasks]\nbash: {enableRunInBackground: false}\ntasks: {maxRunningPerSession: 2, waitTimeoutMs: 5, maxWaitTimeoutMs: 6}\n",
		"tools: [bash]\nbash: {enableRunInBackground: true}\n",
		"local: {containment: marker, keepDetached: true}\n",
		"local: {keepHeadBytes: 0}\n",
		"local: {keepHeadBytes: 99.5, maxOutputBytes: 100}\n",
		"local: {keepHeadBytes: 15, maxOutputBytes: 0x10}\n",
		"local: {sandbox: {mode: workspace-write, protect: [], hide: [~/.ssh], writableRoots: [/w], allowUnsandboxed: false}}\n",
		"local: {sandbox: {mode: read-only, backend: landlock, network: true, allowSockets: [], helper: /h}}\n",
		"executor: ssh\nssh: {host: dev@build1:2222, port: 22, keepaliveMs: 1000, maxConnections: 2, env: {set: {A: 1}}}\n",
		"executor: ssh\nssh: {host: '[::1]', keepHeadBytes: 0, identityFile: ~/.ssh/id, knownHosts: /kh, cwd: /w, spillDir: /s}\n",
		"ssh: {host: h}\n",
		"hooks: {PreToolUse: [{hooks: [{type: command, command: x, timeout: 2.007}]}]}\npermissions: {askTimeoutMs: 1.5}\n",
		"serve: {idleSessionMs: 0.5, maxRequestBytes: 1.5}\nbash: {yieldAfterMs: 0.25}\nlocal: {limits: {pids: 1.5, memoryBytes: 2e6}}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			var e *Error
			// Only a document nested deeper than yaml allows has no line.
			if !errorsAs(err, &e) || e.Key == "" && e.Line == 0 && !strings.Contains(e.Error(), "exceeded max depth") {
				t.Errorf("error names neither a key nor a line: %#v", err)
			}
			if !cmp.Equal(c, File{}) {
				t.Errorf("error %q with a non-zero File %+v", err, c)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse returned a File that fails Validate: %v\n%+v", err, c)
		}
		d := c.WithDefaults()
		if err := d.Validate(); err != nil {
			t.Fatalf("WithDefaults does not validate: %v\n%+v", err, d)
		}
		if dd := d.WithDefaults(); !cmp.Equal(d, dd) {
			t.Errorf("WithDefaults is not idempotent: %s", cmp.Diff(d, dd))
		}
		for _, n := range d.Local.numeric() {
			if v := *n.v; v <= 0 {
				t.Errorf("WithDefaults: local.%s = %v", n.key, v)
			}
		}
		if h := d.Local.KeepHeadBytes; h == nil || *h < 0 || *h >= d.Local.MaxOutputBytes {
			t.Errorf("WithDefaults: local.keepHeadBytes = %v with maxOutputBytes %v", h, d.Local.MaxOutputBytes)
		}
		roundTripLocal(t, c.Local)
		if d.Executor == ExecutorSSH {
			checkSSHDefaults(t, d.SSH)
		}
		if d.Local.Timeout > d.Local.MaxTimeout {
			t.Errorf("WithDefaults: timeoutMs %v > maxTimeoutMs %v", d.Local.Timeout, d.Local.MaxTimeout)
		}
		out, err := yaml.Marshal(d)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("the defaulted file does not parse again: %v\n%s", err, out)
		}
		// Implied is not written: what was implied is said once written.
		if diff := cmp.Diff(d, back.WithDefaults(), cmpopts.IgnoreFields(Network{}, "Implied")); diff != "" {
			t.Errorf("round trip through YAML (-before +after):\n%s\n%s", diff, out)
		}
	})
}

// roundTripLocal checks that a local section as written comes back the same
// through YAML, before any default: a key set to 0 where 0 is a value
// (keepHeadBytes) must not come back absent.
func roundTripLocal(t *testing.T, c Local) {
	t.Helper()
	out, err := yaml.Marshal(File{Local: c, Tools: []string{}})
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("the file as written does not parse again: %v\n%s", err, out)
	}
	if diff := cmp.Diff(c, back.Local); diff != "" {
		t.Errorf("round trip of the local section through YAML (-before +after):\n%s\n%s", diff, out)
	}
}

func errorsAs(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

func TestParseHooks(t *testing.T) {
	f, err := Parse([]byte(`
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: ./check.sh
          timeout: 5
          if: "Bash(git push *)"
          failClosed: true
  PostToolUse:
    - hooks: [{type: command, command: ./log.sh}]
claudeHooks: true
trustProjectHooks: true
`))
	if err != nil {
		t.Fatal(err)
	}
	want := File{
		Hooks: Hooks{
			PreToolUse:  []HookGroup{{Matcher: "Bash", Hooks: []Hook{{Type: "command", Command: "./check.sh", Timeout: 5 * time.Second, If: "Bash(git push *)", FailClosed: true}}}},
			PostToolUse: []HookGroup{{Hooks: []Hook{{Type: "command", Command: "./log.sh"}}}},
		},
		ClaudeHooks: true, TrustProjectHooks: true,
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	for doc, want := range map[string]string{
		"hooks: {PreToolUse: [{hooks: [{type: http, command: x}]}]}":                   `hooks.PreToolUse[0].hooks[0].type: "http": dsh runs only hooks of type "command" (line 1)`,
		"hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n":               `hooks.PreToolUse[0].hooks[0].command must be a command (line 4)`,
		"hooks:\n  PreToolUse:\n    - matcher: 'Bash('\n      hooks: []\n":             "hooks.PreToolUse[0].matcher: \"Bash(\" is not a regular expression: error parsing regexp: missing closing ): `Bash(` (line 3)",
		"hooks: {PreToolUse: [{hooks: [{type: command, command: x, timeout: 0}]}]}":    `hooks.PreToolUse[0].hooks[0].timeout must be a positive finite number (line 1)`,
		"hooks: {PreToolUse: [{hooks: [{type: command, command: x, if: 'Read(x)'}]}]}": `hooks.PreToolUse[0].hooks[0].if: invalid rule "Read(x)": names another tool: only Bash rules apply to commands (line 1)`,
		"hooks: {PreToolUse: [{hooks: [{type: command, command: x, args: [a]}]}]}":     `hooks.PreToolUse[0].hooks[0].args: unknown key (line 1)`,
		"hooks: {Stop: []}":                 `hooks.Stop: unknown key (line 1)`,
		"hooks: {PreToolUse: {matcher: x}}": `hooks.PreToolUse must be a list (line 1)`,
	} {
		if _, err := Parse([]byte(doc)); errText(err) != want {
			t.Errorf("%q:\n got %q\nwant %q", doc, errText(err), want)
		}
	}
}

// TestHookTimeoutSeconds: a hook's timeout is seconds, as in Claude Code,
// rounded up to a whole millisecond, and written back as seconds.
func TestHookTimeoutSeconds(t *testing.T) {
	for doc, want := range map[string]time.Duration{
		"10":     10 * time.Second,
		"2.007":  2007 * time.Millisecond,
		"0.0015": 2 * time.Millisecond,
		"1e-9":   time.Millisecond,
	} {
		f, err := Parse([]byte("hooks: {PreToolUse: [{hooks: [{type: command, command: x, timeout: " + doc + "}]}]}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Hooks.PreToolUse[0].Hooks[0].Timeout; got != want {
			t.Errorf("timeout %s = %v, want %v", doc, got, want)
		}
		out, err := yaml.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := Parse(out); err != nil || !cmp.Equal(back.Hooks, f.Hooks) {
			t.Errorf("timeout %s: written as %q, read back as %+v (%v)", doc, out, back.Hooks, err)
		}
	}
}

// TestParsePermissions: the permissions section (docs/spec.md §9.1): its
// keys, the defaults of the absent ones, and a clear error naming the key,
// the rule and the line for each value that cannot be used.
func TestParsePermissions(t *testing.T) {
	f, err := Parse([]byte(`
permissions:
  default: ask
  allow: ["npm test *", "Bash(go test:*)"]
  ask: ["git push *"]
  deny: ["rm -rf /*", sudo *]
  readOnly: false
  askFallback: allow
  askTimeoutMs: 1500
  claudeSettings: false
  trustProjectAllow: true
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Permissions{Default: "ask", Allow: []string{"npm test *", "Bash(go test:*)"}, Ask: []string{"git push *"}, Deny: []string{"rm -rf /*", "sudo *"},
		ReadOnly: ptr(false), AskFallback: "allow", AskTimeout: 1500 * time.Millisecond, ClaudeSettings: ptr(false), TrustProjectAllow: true}
	if diff := cmp.Diff(want, f.Permissions); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	// No key, or a null one: no section. An empty one: every default.
	for doc, want := range map[string]*Permissions{
		"":                nil,
		"permissions:":    nil,
		"permissions: {}": {},
	} {
		f, err := Parse([]byte(doc))
		if err != nil || !cmp.Equal(want, f.Permissions) {
			t.Errorf("%q: %+v, %v", doc, f.Permissions, err)
		}
	}
	defaults := Permissions{}.WithDefaults()
	if defaults.Default != "allow" || *defaults.ReadOnly != true || defaults.AskFallback != "deny" || defaults.AskTimeout != 5*time.Minute || *defaults.ClaudeSettings != true || defaults.TrustProjectAllow {
		t.Errorf("defaults %+v", defaults)
	}
	for doc, want := range map[string]string{
		"permissions: {default: maybe}":                       `permissions.default: "maybe" is not one of "allow", "ask" or "deny" (line 1)`,
		"permissions: {askFallback: ask}":                     `permissions.askFallback: "ask" is not one of "deny" or "allow" (line 1)`,
		"permissions: {askTimeoutMs: 0}":                      `permissions.askTimeoutMs must be a positive finite number (line 1)`,
		"permissions: {askTimeoutMs: -1}":                     `permissions.askTimeoutMs must be a positive finite number (line 1)`,
		"permissions: {askTimeoutMs: .inf}":                   `permissions.askTimeoutMs must be a positive finite number (line 1)`,
		"permissions: {askTimeoutMs: '5'}":                    `permissions.askTimeoutMs must be a number (line 1)`,
		"permissions: {readOnly: yes}":                        `permissions.readOnly must be true or false (line 1)`,
		"permissions: {alow: [ls]}":                           `permissions.alow: unknown key (line 1); did you mean permissions.allow?`,
		"permissions: {deny: rm}":                             `permissions.deny must be a list of strings (line 1)`,
		"permissions:\n  allow:\n    - ls\n    - Read(./x)\n": `permissions.allow[1]: invalid rule "Read(./x)": names another tool: only Bash rules apply to commands (line 4)`,
		"permissions:\n  ask: ['']\n":                         `permissions.ask[0]: invalid rule "": empty pattern (line 2)`,
		"permissions:\n  deny: [\"rm 'x\"]\n":                 `permissions.deny[0]: invalid rule "rm 'x": unbalanced quotes (line 2)`,
		"permissions:\n  deny: [rm\\]\n":                      `permissions.deny[0]: invalid rule "rm\\": trailing backslash (line 2)`,
		"permissions:\n  deny: [Bash(rm]\n":                   `permissions.deny[0]: invalid rule "Bash(rm": Bash( without its closing ) (line 2)`,
	} {
		if _, err := Parse([]byte(doc)); errText(err) != want {
			t.Errorf("%q:\n got %q\nwant %q", doc, errText(err), want)
		}
	}
}

// TestBashYieldAfter: a Go caller's yieldAfterMs gets the file's rule,
// the effective value is the default when unset and 0 for off, and a
// file's fraction is rounded up to a whole millisecond.
func TestBashYieldAfter(t *testing.T) {
	err := File{Bash: Bash{YieldAfter: ptr(-time.Millisecond)}}.Validate()
	if errText(err) != "bash.yieldAfterMs must be a non-negative finite number" {
		t.Errorf("Validate: %v", err)
	}
	for _, tc := range []struct {
		in   *time.Duration
		want time.Duration
	}{{nil, 50 * time.Second}, {ptr[time.Duration](0), 0}, {ptr(999 * time.Millisecond), 999 * time.Millisecond}} {
		if got := (Bash{YieldAfter: tc.in}).YieldDelay(); got != tc.want {
			t.Errorf("YieldDelay(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if f, err := Parse([]byte("bash: {yieldAfterMs: 999.5}\n")); err != nil || f.Bash.YieldDelay() != time.Second {
		t.Errorf("yieldAfterMs 999.5: %v, %v; want 1s", f.Bash.YieldAfter, err)
	}
}

// TestParseLocalLimits: local.limits through the one walker, with the key
// path and line in every error.
func TestParseLocalLimits(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want Local
		err  string
	}{
		{"limits:\n  pids: 512\n  memoryBytes: 1e9\n", Local{Limits: Limits{Pids: 512, MemoryBytes: 1e9}}, ""},
		{"limits:\n  pids: 1.5\n  memoryBytes: 1048575.5\n", Local{Limits: Limits{Pids: 2, MemoryBytes: 1048576}}, ""},
		{"limits:\n", Local{}, ""},
		{"limits:\n  pids: 0\n", Local{}, "local.limits.pids must be a positive finite number (line 3)"},
		{"limits:\n  pids: -5\n", Local{}, "local.limits.pids must be a positive finite number (line 3)"},
		{"limits:\n  pids: .inf\n", Local{}, "local.limits.pids must be a positive finite number (line 3)"},
		{"limits:\n  pids: many\n", Local{}, "local.limits.pids must be a number (line 3)"},
		{"cwd: /x\nlimits:\n  memoryBytes: 4096\n", Local{}, "local.limits.memoryBytes must be at least 1048576 (line 4)"},
		{"limits:\n  pid: 5\n", Local{}, "local.limits.pid: unknown key (line 3); did you mean local.limits.pids?"},
		{"limits: 5\n", Local{}, "local.limits must be a mapping (line 2)"},
	} {
		got, err := parseLocal(tc.yaml)
		if errText(err) != tc.err {
			t.Errorf("%q: error %q, want %q", tc.yaml, errText(err), tc.err)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%q: (-want +got):\n%s", tc.yaml, diff)
			}
		}
	}
	if c := (Local{}).WithDefaults(); c.Limits.Pids != DefaultPids || c.Limits.MemoryBytes != 0 {
		t.Errorf("defaults: %+v, want pids %d and no memory limit", c.Limits, DefaultPids)
	}
}

// TestRedactErrorListsAcceptedValues: the error for an unknown redact mode
// lists exactly the values a file may set: each one it names loads, and
// "all", refused with its own reason, is not among them.
func TestRedactErrorListsAcceptedValues(t *testing.T) {
	_, err := Parse([]byte("redact: some\n"))
	if err == nil {
		t.Fatal("redact: some loaded")
	}
	_, list, ok := strings.Cut(err.Error(), "is not one of ")
	if !ok {
		t.Fatalf("error %q names no values", err)
	}
	named := regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(list, -1)
	if len(named) == 0 {
		t.Fatalf("error %q names no values", err)
	}
	for _, m := range named {
		if _, err := Parse([]byte("redact: " + m[1] + "\n")); err != nil {
			t.Errorf("the error names %q, which is refused: %v", m[1], err)
		}
	}
}
