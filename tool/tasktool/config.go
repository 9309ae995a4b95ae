package tasktool

import (
	"fmt"
	"math"
)

// Defaults of Config.
const (
	DefaultWaitTimeoutMs    = 30000
	DefaultMaxWaitTimeoutMs = 600000
)

// Config is the tool-tasks section of the configuration. Zero values take
// the defaults.
type Config struct {
	// WaitTimeoutMs is how long task_output waits when the model gives no
	// timeout_ms. Default 30000.
	WaitTimeoutMs float64 `yaml:"waitTimeoutMs,omitempty"`
	// MaxWaitTimeoutMs caps every wait. Default 600000.
	MaxWaitTimeoutMs float64 `yaml:"maxWaitTimeoutMs,omitempty"`
}

// WithDefaults returns c with its zero values set to the defaults.
func (c Config) WithDefaults() Config {
	if c.WaitTimeoutMs == 0 {
		c.WaitTimeoutMs = DefaultWaitTimeoutMs
	}
	if c.MaxWaitTimeoutMs == 0 {
		c.MaxWaitTimeoutMs = DefaultMaxWaitTimeoutMs
	}
	return c
}

// Validate refuses a negative, NaN or infinite value
// ("tool-tasks: <key> must be a positive finite number") and a default wait
// longer than the cap, after defaulting (exact:
// "tool-tasks: waitTimeoutMs (<d>) exceeds maxWaitTimeoutMs (<c>)", numbers
// as JSON writes them: 30000, 1.5).
func (c Config) Validate() error {
	for _, kv := range []struct {
		key string
		v   float64
	}{{"waitTimeoutMs", c.WaitTimeoutMs}, {"maxWaitTimeoutMs", c.MaxWaitTimeoutMs}} {
		if kv.v != 0 && !(kv.v > 0 && !math.IsInf(kv.v, 1)) {
			return fmt.Errorf("tool-tasks: %s must be a positive finite number", kv.key)
		}
	}
	d := c.WithDefaults()
	if d.WaitTimeoutMs > d.MaxWaitTimeoutMs {
		return fmt.Errorf("tool-tasks: waitTimeoutMs (%s) exceeds maxWaitTimeoutMs (%s)",
			number(d.WaitTimeoutMs), number(d.MaxWaitTimeoutMs))
	}
	return nil
}
