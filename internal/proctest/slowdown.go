package proctest

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"
)

// SlowdownEnv names the environment variable that stretches every timing
// bound of the tests: a positive number, 1 when unset. A machine that runs
// the tests under load (other builds, -race, a CI runner shared with
// others) sets it above 1 instead of every test carrying margins wide
// enough for the worst machine; .ci/run leaves it unset.
const SlowdownEnv = "DSH_TEST_SLOWDOWN"

// slowdown reads SlowdownEnv once. A value that is not a positive number
// panics: a typo silently read as 1 would make a loaded run fail for
// reasons its reader cannot see.
var slowdown = sync.OnceValue(func() float64 {
	s, ok := os.LookupEnv(SlowdownEnv)
	if !ok || s == "" {
		return 1
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		panic(fmt.Sprintf("%s=%q: want a positive number", SlowdownEnv, s))
	}
	return f
})

// Slowdown is the factor DSH_TEST_SLOWDOWN sets, 1 by default.
func Slowdown() float64 { return slowdown() }

// Scale stretches d, a bound a test waits for something or allows
// something to take, by Slowdown. It is for a test's margins only: a
// duration that is the behaviour under test (a command's timeout, a grace
// period the test asserts on) stays as it is.
func Scale(d time.Duration) time.Duration {
	f := Slowdown()
	if f == 1 {
		return d
	}
	if s := float64(d) * f; s < math.MaxInt64 {
		return time.Duration(s)
	}
	return math.MaxInt64
}
