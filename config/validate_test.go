package config

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var numericKeys = []string{"timeoutMs", "maxTimeoutMs", "maxOutputBytes", "maxSpillBytes", "maxSpillTotalBytes", "graceMs"}

// withNumber returns a Local whose numeric key is v as a file gives it:
// in milliseconds or bytes, rounded up.
func withNumber(key string, v float64) Local {
	var c Local
	for _, n := range c.numeric() {
		if n.key == key {
			*n.v = n.conv(v)
			return c
		}
	}
	panic("no numeric key " + key)
}

// withValue returns a Local whose numeric key holds v: nanoseconds for a
// duration, bytes for a size.
func withValue(key string, v int64) Local {
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
			v    int64
			want string
		}{
			{"zero means unset", 0, ""},
			{"positive", 1, ""},
			{"huge", math.MaxInt64, ""},
			{"negative", -1, key + " must be a positive finite number"},
			{"most negative", math.MinInt64, key + " must be a positive finite number"},
		} {
			t.Run(key+"/"+tc.name, func(t *testing.T) {
				if got := errText(withValue(key, tc.v).Validate()); got != tc.want {
					t.Errorf("Validate() = %q, want %q", got, tc.want)
				}
			})
		}
	}
}

func TestValidateFirstFailureInTableOrder(t *testing.T) {
	c := Local{
		Timeout:        1,
		MaxTimeout:     -time.Millisecond,
		MaxOutputBytes: -1,
		Grace:          -1,
	}
	want := "maxTimeoutMs must be a positive finite number"
	if got := errText(c.Validate()); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
	c.MaxTimeout = 1
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
		max, head int64
		unset     bool
		want      string
	}{
		{name: "unset", unset: true},
		{name: "unset with a tiny max", max: 1, unset: true},
		{name: "0: tail only", head: 0},
		{name: "below the default max", head: 63999},
		{name: "the default max", head: 64000, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "above the default max", head: math.MaxInt64, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "below a given max", max: 100, head: 99},
		{name: "a given max", max: 100, head: 100, want: "keepHeadBytes must be smaller than maxOutputBytes"},
		{name: "negative", head: -1, want: "keepHeadBytes must be a non-negative finite number"},
		{name: "most negative", head: math.MinInt64, want: "keepHeadBytes must be a non-negative finite number"},
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
	const ms = time.Millisecond
	head := ptr[int64](16000)
	for _, tc := range []struct {
		name string
		in   Local
		want Local
	}{
		{"zero", Local{}, Local{
			Timeout:        120000 * ms,
			MaxTimeout:     600000 * ms,
			MaxOutputBytes: 64000,
			KeepHeadBytes:  head,
			MaxSpillBytes:  67108864,
			Grace:          3000 * ms,
		}},
		{"set values kept, strings untouched", Local{
			Cwd: "/w", Timeout: 1500 * time.Microsecond, MaxTimeout: 2 * ms, MaxOutputBytes: 3, MaxSpillBytes: 4, MaxSpillTotalBytes: 6, Grace: 5 * ms,
			SpillDir: "/s", Shell: "/bin/sh", Env: env,
		}, Local{
			Cwd: "/w", Timeout: 1500 * time.Microsecond, MaxTimeout: 2 * ms, MaxOutputBytes: 3, MaxSpillBytes: 4, MaxSpillTotalBytes: 6, Grace: 5 * ms,
			SpillDir: "/s", Shell: "/bin/sh", Env: env, KeepHeadBytes: ptr[int64](0), // ⌊3/4⌋
		}},
		{"head: a quarter of the max, rounded down", Local{MaxOutputBytes: 11}, Local{
			Timeout: 120000 * ms, MaxTimeout: 600000 * ms, MaxOutputBytes: 11, KeepHeadBytes: ptr[int64](2), MaxSpillBytes: 67108864, Grace: 3000 * ms,
		}},
		{"explicit head kept, 0 too", Local{KeepHeadBytes: ptr[int64](0)}, Local{
			Timeout: 120000 * ms, MaxTimeout: 600000 * ms, MaxOutputBytes: 64000, KeepHeadBytes: ptr[int64](0), MaxSpillBytes: 67108864, Grace: 3000 * ms,
		}},
		{"timeout above default max is clamped", Local{Timeout: 700000 * ms}, Local{
			Timeout: 600000 * ms, MaxTimeout: 600000 * ms, MaxOutputBytes: 64000, KeepHeadBytes: head, MaxSpillBytes: 67108864, Grace: 3000 * ms,
		}},
		{"default timeout clamped to a small max", Local{MaxTimeout: 60000 * ms}, Local{
			Timeout: 60000 * ms, MaxTimeout: 60000 * ms, MaxOutputBytes: 64000, KeepHeadBytes: head, MaxSpillBytes: 67108864, Grace: 3000 * ms,
		}},
		{"timeout above given max", Local{Timeout: 1000 * ms, MaxTimeout: 500 * ms}, Local{
			Timeout: 500 * ms, MaxTimeout: 500 * ms, MaxOutputBytes: 64000, KeepHeadBytes: head, MaxSpillBytes: 67108864, Grace: 3000 * ms,
		}},
		{"timeout equal to max", Local{Timeout: 500 * ms, MaxTimeout: 500 * ms}, Local{
			Timeout: 500 * ms, MaxTimeout: 500 * ms, MaxOutputBytes: 64000, KeepHeadBytes: head, MaxSpillBytes: 67108864, Grace: 3000 * ms,
		}},
		{"max above default timeout", Local{MaxTimeout: 1e9 * ms}, Local{
			Timeout: 120000 * ms, MaxTimeout: 1e9 * ms, MaxOutputBytes: 64000, KeepHeadBytes: head, MaxSpillBytes: 67108864, Grace: 3000 * ms,
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
	got := []int64{int64(DefaultTimeout / time.Millisecond), int64(DefaultMaxTimeout / time.Millisecond), DefaultMaxOutputBytes, DefaultMaxSpillBytes, int64(DefaultGrace / time.Millisecond)}
	want := []int64{120000, 600000, 64000, 64 << 20, 3000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
