// Package num holds the rule every count, size and duration of dsh
// follows (positive and finite) and the conversions from the float64 of
// JSON and YAML to the time.Duration and int64 sizes dsh uses, rounding up
// to whole milliseconds and bytes and saturating. It is the config
// parser's and the model's arguments' alike, and imports nothing of dsh,
// so that packages bash and tasks check a request without importing the
// config parser.
package num

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// PositiveFinite reports whether v is a number > 0 that is not +Inf (NaN is
// neither): the rule every count, size and duration of dsh follows, in a
// config file, a Go config and a model's arguments alike.
func PositiveFinite(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// NonNegativeFinite reports whether v is 0 or [PositiveFinite]: the rule of
// the few numbers where 0 is a value of its own rather than "the default"
// (local.keepHeadBytes, where it turns the head off; bash.yieldAfterMs,
// where it turns yielding off).
func NonNegativeFinite(v float64) bool { return v == 0 || PositiveFinite(v) }

// maxWholeMillis is the largest whole number of milliseconds that a
// time.Duration holds.
const maxWholeMillis = int64(math.MaxInt64 / time.Millisecond)

// WholeMillis returns v milliseconds rounded up to a whole millisecond
// (docs/spec.md: a fractional value is rounded up), so 0.1 and 1 give 1 and 1.5
// gives 2. It saturates at the largest whole-millisecond [time.Duration]
// (about 292 years), so the result times [time.Millisecond] never overflows.
// A value that is not positive (0, negative, NaN) gives 0; a validated config
// never holds one.
func WholeMillis(v float64) int64 {
	if !(v > 0) {
		return 0
	}
	c := math.Ceil(v)
	if c >= float64(maxWholeMillis) {
		return maxWholeMillis
	}
	return int64(c)
}

// Millis returns v milliseconds as a duration: [WholeMillis] of v, in
// milliseconds, with the same rounding and saturation.
func Millis(v float64) time.Duration {
	return time.Duration(WholeMillis(v)) * time.Millisecond
}

// Seconds returns v seconds as a duration, rounded up to a whole
// millisecond and saturating like [Millis]: the unit of a hook's timeout,
// which is Claude Code's. A product v×1000 within a part in 10¹² of a whole
// millisecond is that millisecond, since it carries the binary rounding of
// the decimal v (2.007×1000 is 2007.0000000000002), which must not cost a
// millisecond.
func Seconds(v float64) time.Duration {
	ms := v * 1000
	if r := math.Round(ms); r > 0 && math.Abs(ms-r) <= r*1e-12 {
		ms = r
	}
	return Millis(ms)
}

// CeilMillis returns d in whole milliseconds, rounded up: the unit dsh
// reports a timeout in (a Go caller may configure 1500µs; the model reads
// 2 ms). A duration that is not positive gives 0.
func CeilMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := d / time.Millisecond
	if d%time.Millisecond != 0 {
		ms++
	}
	return int64(ms)
}

// MillisText writes d as a number of milliseconds the way [JSONNumber]
// does (30000, 0.5), the form dsh's messages quote a duration in.
func MillisText(d time.Duration) string {
	if d%time.Millisecond == 0 {
		return strconv.FormatInt(int64(d/time.Millisecond), 10)
	}
	return JSONNumber(float64(d) / float64(time.Millisecond))
}

// Bytes returns v bytes rounded up to a whole byte, saturating at
// [math.MaxInt64]. A value that is not positive (0, negative, NaN) gives 0.
func Bytes(v float64) int64 {
	if !(v > 0) {
		return 0
	}
	c := math.Ceil(v)
	// float64(math.MaxInt64) is 2⁶³, one above the largest int64.
	if c >= float64(math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(c)
}

// JSONNumber writes v as JSON does (30000, 1.5, 1e+21), the form dsh's
// messages quote numbers in; a value JSON cannot hold (NaN, ±Inf) as Go
// writes it.
func JSONNumber(v float64) string {
	b, err := json.Marshal(v)
	if err != nil {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return string(b)
}
