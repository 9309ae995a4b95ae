package config

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var numericKeys = []string{"timeoutMs", "maxTimeoutMs", "maxOutputBytes", "maxSpillBytes", "maxSpillTotalBytes", "graceMs"}

// withNumber returns a Local whose numeric key is v.
func withNumber(key string, v float64) Local {
	var c Local
	for _, n := range c.numeric() {
		if n.key == key {
			*n.v = v
			return c
		}
	}
	panic("no numeric key " + key)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestValidateNumbers(t *testing.T) {
	for _, key := range numericKeys {
		for _, tc := range []struct {
			name string
			v    float64
			want string
		}{
			{"zero means unset", 0, ""},
			{"positive", 1, ""},
			{"fraction", 0.1, ""},
			{"tiny", 5e-324, ""},
			{"huge", math.MaxFloat64, ""},
			{"negative", -1, key + " must be a positive finite number"},
			{"negative fraction", -0.5, key + " must be a positive finite number"},
			{"NaN", math.NaN(), key + " must be a positive finite number"},
			{"+Inf", math.Inf(1), key + " must be a positive finite number"},
			{"-Inf", math.Inf(-1), key + " must be a positive finite number"},
		} {
			t.Run(key+"/"+tc.name, func(t *testing.T) {
				if got := errText(withNumber(key, tc.v).Validate()); got != tc.want {
					t.Errorf("Validate() = %q, want %q", got, tc.want)
				}
			})
		}
	}
}

func TestValidateFirstFailureInTableOrder(t *testing.T) {
	c := Local{
		TimeoutMs:      1,
		MaxTimeoutMs:   math.NaN(),
		MaxOutputBytes: -1,
		GraceMs:        math.Inf(1),
	}
	want := "maxTimeoutMs must be a positive finite number"
	if got := errText(c.Validate()); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
	c.MaxTimeoutMs = 1
	want = "maxOutputBytes must be a positive finite number"
	if got := errText(c.Validate()); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
	// Numbers come before the environment.
	c.Env.Set = map[string]string{"": "x"}
	if got := errText(c.Validate()); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
}

func TestValidateKeepHeadBytes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max, head float64
		unset     bool
		want      string
	}{
		{name: "unset", unset: true},
		{name: "unset with a tiny max", max: 1, unset: true},
		{name: "0: tail only", head: 0},
		{name: "-0 is 0", head: math.Copysign(0, -1)},
		{name: "below the default max", head: 63999},
		{name: "the default max", head: 64000, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "above the default max", head: 1e300, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "below a given max", max: 100, head: 99},
		{name: "a given max", max: 100, head: 100, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "rounds up to the max", max: 100, head: 99.5, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "both round up to one size", max: 100.5, head: 100.9, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "below a fractional max in whole bytes", max: 100.5, head: 100},
		{name: "a fraction", max: 10, head: 0.5},
		{name: "negative", head: -1, want: "keepHeadBytes must be a non-negative finite number"},
		{name: "tiny negative", head: -5e-324, want: "keepHeadBytes must be a non-negative finite number"},
		{name: "NaN", head: math.NaN(), want: "keepHeadBytes must be a non-negative finite number"},
		{name: "+Inf", head: math.Inf(1), want: "keepHeadBytes must be a non-negative finite number"},
		{name: "-Inf", head: math.Inf(-1), want: "keepHeadBytes must be a non-negative finite number"},
		{name: "a bad max comes first", max: -1, head: -1, want: "maxOutputBytes must be a positive finite number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Local{MaxOutputBytes: tc.max}
			if !tc.unset {
				c.KeepHeadBytes = ptr(tc.head)
			}
			if got := errText(c.Validate()); got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
			if tc.want == "" {
				d := c.WithDefaults()
				if err := d.Validate(); err != nil || d.KeepHeadBytes == nil {
					t.Errorf("WithDefaults() = %+v, Validate: %v", d, err)
				}
			}
		})
	}
}

func TestValidateEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  Env
		want string
	}{
		{"zero", Env{}, ""},
		{"ordinary", Env{
			Passthrough: []string{"GITHUB_TOKEN", "MY_*"},
			Scrub:       []string{"FOO", "BAR_?", "[AB]_KEY", "weird.name"},
			Set:         map[string]string{"FOO": "", "lower.case-name": "x=y"},
		}, ""},
		{"empty name", Env{Set: map[string]string{"": "x"}},
			`env.set name "" is not a valid variable name`},
		{"name with =", Env{Set: map[string]string{"A=B": "x"}},
			`env.set name "A=B" is not a valid variable name`},
		{"name with NUL", Env{Set: map[string]string{"A\x00": "x"}},
			`env.set name "A\x00" is not a valid variable name`},
		{"first bad name in sorted order", Env{Set: map[string]string{"Z=": "x", "A=": "x"}},
			`env.set name "A=" is not a valid variable name`},
		{"value with NUL", Env{Set: map[string]string{"A": "x\x00y"}},
			`env.set value of "A" contains a NUL byte`},
		{"malformed passthrough", Env{Passthrough: []string{"OK", "MY_["}},
			`env.passthrough pattern "MY_[" is malformed`},
		{"malformed scrub", Env{Scrub: []string{`A\`}},
			`env.scrub pattern "A\\" is malformed`},
		{"malformed after the matching part", Env{Scrub: []string{"A*[z-a"}},
			`env.scrub pattern "A*[z-a" is malformed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errText(Local{Env: tc.env}.Validate()); got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	env := Env{Scrub: []string{"X"}, Set: map[string]string{"A": "b"}}
	for _, tc := range []struct {
		name string
		in   Local
		want Local
	}{
		{"zero", Local{}, Local{
			TimeoutMs:      120000,
			MaxTimeoutMs:   600000,
			MaxOutputBytes: 64000,
			KeepHeadBytes:  ptr(16000.0),
			MaxSpillBytes:  67108864,
			GraceMs:        3000,
		}},
		{"set values kept, strings untouched", Local{
			Cwd: "/w", TimeoutMs: 1.5, MaxTimeoutMs: 2, MaxOutputBytes: 3, MaxSpillBytes: 4, MaxSpillTotalBytes: 6, GraceMs: 5,
			SpillDir: "/s", Shell: "/bin/sh", Env: env,
		}, Local{
			Cwd: "/w", TimeoutMs: 1.5, MaxTimeoutMs: 2, MaxOutputBytes: 3, MaxSpillBytes: 4, MaxSpillTotalBytes: 6, GraceMs: 5,
			SpillDir: "/s", Shell: "/bin/sh", Env: env, KeepHeadBytes: ptr(0.0), // ⌊3/4⌋
		}},
		{"head of a fractional max: a quarter of its whole bytes", Local{MaxOutputBytes: 10.5}, Local{
			TimeoutMs: 120000, MaxTimeoutMs: 600000, MaxOutputBytes: 10.5, KeepHeadBytes: ptr(2.0), MaxSpillBytes: 67108864, GraceMs: 3000,
		}},
		{"explicit head kept, 0 too", Local{KeepHeadBytes: ptr(0.0)}, Local{
			TimeoutMs: 120000, MaxTimeoutMs: 600000, MaxOutputBytes: 64000, KeepHeadBytes: ptr(0.0), MaxSpillBytes: 67108864, GraceMs: 3000,
		}},
		{"timeout above default max is clamped", Local{TimeoutMs: 700000}, Local{
			TimeoutMs: 600000, MaxTimeoutMs: 600000, MaxOutputBytes: 64000, KeepHeadBytes: ptr(16000.0), MaxSpillBytes: 67108864, GraceMs: 3000,
		}},
		{"default timeout clamped to a small max", Local{MaxTimeoutMs: 60000}, Local{
			TimeoutMs: 60000, MaxTimeoutMs: 60000, MaxOutputBytes: 64000, KeepHeadBytes: ptr(16000.0), MaxSpillBytes: 67108864, GraceMs: 3000,
		}},
		{"timeout above given max", Local{TimeoutMs: 1000, MaxTimeoutMs: 500}, Local{
			TimeoutMs: 500, MaxTimeoutMs: 500, MaxOutputBytes: 64000, KeepHeadBytes: ptr(16000.0), MaxSpillBytes: 67108864, GraceMs: 3000,
		}},
		{"timeout equal to max", Local{TimeoutMs: 500, MaxTimeoutMs: 500}, Local{
			TimeoutMs: 500, MaxTimeoutMs: 500, MaxOutputBytes: 64000, KeepHeadBytes: ptr(16000.0), MaxSpillBytes: 67108864, GraceMs: 3000,
		}},
		{"max above default timeout", Local{MaxTimeoutMs: 1e9}, Local{
			TimeoutMs: 120000, MaxTimeoutMs: 1e9, MaxOutputBytes: 64000, KeepHeadBytes: ptr(16000.0), MaxSpillBytes: 67108864, GraceMs: 3000,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			got := tc.in.WithDefaults()
			tc.want.Sandbox = Sandbox{}.WithDefaults()
			if tc.want.Limits.Pids == 0 {
				tc.want.Limits.Pids = DefaultPids
			}
			if tc.want.MaxSpillTotalBytes == 0 {
				tc.want.MaxSpillTotalBytes = DefaultMaxSpillTotalBytes
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WithDefaults() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("WithDefaults changed its receiver (-before +after):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("WithDefaults() does not validate: %v", err)
			}
		})
	}
}

func TestDefaultConstants(t *testing.T) {
	got := []float64{DefaultTimeoutMs, DefaultMaxTimeoutMs, DefaultMaxOutputBytes, DefaultMaxSpillBytes, DefaultGraceMs}
	want := []float64{120000, 600000, 64000, 64 << 20, 3000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
