package proctest

import (
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestScale: the factor this run was given stretches a bound.
func TestScale(t *testing.T) {
	f := Slowdown()
	if got, want := Scale(2*time.Second), time.Duration(float64(2*time.Second)*f); got != want {
		t.Errorf("Scale(2s) = %v with slowdown %v, want %v", got, f, want)
	}
}

// TestSlowdownFromEnv reads DSH_TEST_SLOWDOWN in a child test process,
// where the helper's first read sees the value set: unset is 1, a number
// is itself, anything but a positive number panics.
func TestSlowdownFromEnv(t *testing.T) {
	if os.Getenv("DSH_PROCTEST_SLOWDOWN_CHILD") != "" {
		t.Logf("slowdown=%v", Slowdown())
		// A bound stretched past what a Duration holds saturates
		// instead of wrapping around to a negative one.
		if Slowdown() > 2 && Scale(math.MaxInt64/2+1) != math.MaxInt64 {
			t.Fatalf("Scale(%v) did not saturate", time.Duration(math.MaxInt64/2+1))
		}
		return
	}
	for _, tc := range []struct {
		env, want string
	}{
		{"", "slowdown=1"},
		{"3", "slowdown=3"},
		{"0.5", "slowdown=0.5"},
		{"0", "want a positive number"},
		{"-2", "want a positive number"},
		{"slow", "want a positive number"},
		{"Inf", "want a positive number"},
		{"NaN", "want a positive number"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSlowdownFromEnv$", "-test.v")
		cmd.Env = append(os.Environ(), "DSH_PROCTEST_SLOWDOWN_CHILD=x", SlowdownEnv+"="+tc.env)
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), tc.want) || (err == nil) != strings.HasPrefix(tc.want, "slowdown=") {
			t.Errorf("%s=%q: output lacks %q:\n%s", SlowdownEnv, tc.env, tc.want, out)
		}
	}
}
