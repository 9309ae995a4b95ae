package num

import (
	"math"
	"testing"
	"time"
)

func TestWholeMillisAndMillis(t *testing.T) {
	const maxMs = int64(math.MaxInt64 / int64(time.Millisecond))
	for _, tc := range []struct {
		v    float64
		want int64
	}{
		{0.1, 1},
		{1.0, 1},
		{1.5, 2},
		{1.0000001, 2},
		{5e-324, 1},
		{999.999, 1000},
		{120000, 120000},
		{9007199254740992, maxMs}, // 2⁵³ ms is past the largest Duration
		{float64(maxMs), maxMs},
		{float64(maxMs) - 1, maxMs - 1},
		{float64(maxMs) - 1.5, maxMs - 1},
		{1e300, maxMs},
		{math.MaxFloat64, maxMs},
		{math.Inf(1), maxMs},
		{0, 0},
		{-1, 0},
		{-0.5, 0},
		{math.Inf(-1), 0},
		{math.NaN(), 0},
	} {
		if got := WholeMillis(tc.v); got != tc.want {
			t.Errorf("WholeMillis(%v) = %d, want %d", tc.v, got, tc.want)
		}
		want := time.Duration(tc.want) * time.Millisecond
		if got := Millis(tc.v); got != want {
			t.Errorf("Millis(%v) = %v, want %v", tc.v, got, want)
		}
	}
	if got, want := Millis(1e300), time.Duration(math.MaxInt64).Truncate(time.Millisecond); got != want {
		t.Errorf("Millis(1e300) = %d, want the largest whole-ms Duration %d", got, want)
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want int64
	}{
		{0.1, 1},
		{1, 1},
		{1.5, 2},
		{64000, 64000},
		{67108864, 67108864},
		{9007199254740993, 9007199254740992}, // not representable: the float is 2⁵³
		{float64(1 << 62), 1 << 62},
		{math.Ldexp(1, 63) - 1024, math.MaxInt64 - 1023}, // the largest float64 below 2⁶³
		{math.Ldexp(1, 63), math.MaxInt64},
		{1e300, math.MaxInt64},
		{math.Inf(1), math.MaxInt64},
		{0, 0},
		{-3, 0},
		{math.Inf(-1), 0},
		{math.NaN(), 0},
	} {
		if got := Bytes(tc.v); got != tc.want {
			t.Errorf("Bytes(%v) = %d, want %d", tc.v, got, tc.want)
		}
	}
}

func TestPositiveFinite(t *testing.T) {
	for v, want := range map[float64]bool{
		1: true, 0.001: true, 5e-324: true, math.MaxFloat64: true,
		0: false, -1: false, math.Inf(1): false, math.Inf(-1): false, math.NaN(): false,
	} {
		if got := PositiveFinite(v); got != want {
			t.Errorf("PositiveFinite(%v) = %v, want %v", v, got, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	const maxMs = int64(math.MaxInt64 / int64(time.Millisecond))
	for _, tc := range []struct {
		v    float64
		want time.Duration
	}{
		{5, 5 * time.Second},
		{0.0015, 2 * time.Millisecond},
		{1e-9, time.Millisecond},
		{2.007, 2007 * time.Millisecond}, // 2.007×1000 is 2007.0000000000002
		{2.0071, 2008 * time.Millisecond},
		{float64(maxMs) / 1000, time.Duration(maxMs) * time.Millisecond},
		{1e300, time.Duration(maxMs) * time.Millisecond},
		{math.Inf(1), time.Duration(maxMs) * time.Millisecond},
		{0, 0},
		{-1, 0},
		{math.NaN(), 0},
	} {
		if got := Seconds(tc.v); got != tc.want {
			t.Errorf("Seconds(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
	// Every whole millisecond written as seconds comes back the same.
	for ms := int64(1); ms < 3_000_000; ms += 7 {
		if got := Seconds(float64(ms) / 1000); got != time.Duration(ms)*time.Millisecond {
			t.Fatalf("Seconds(%d/1000) = %v", ms, got)
		}
	}
}

func TestCeilMillisAndMillisText(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		ms   int64
		text string
	}{
		{time.Millisecond, 1, "1"},
		{1500 * time.Microsecond, 2, "1.5"},
		{time.Nanosecond, 1, "0.000001"},
		{30 * time.Second, 30000, "30000"},
		{math.MaxInt64, math.MaxInt64/int64(time.Millisecond) + 1, "9223372036854.775"},
		{0, 0, "0"},
		{-time.Millisecond, 0, "-1"},
	} {
		if got := CeilMillis(tc.d); got != tc.ms {
			t.Errorf("CeilMillis(%v) = %d, want %d", tc.d, got, tc.ms)
		}
		if got := MillisText(tc.d); got != tc.text {
			t.Errorf("MillisText(%v) = %q, want %q", tc.d, got, tc.text)
		}
	}
}
