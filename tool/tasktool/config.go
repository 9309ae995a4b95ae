package tasktool

import (
	"fmt"

	"github.com/dsh-go/dsh/config"
)

// Validate checks the tools' section as a Go caller gave it: the errors of
// [config.Tasks.Validate] after the tools' name ("tool-tasks:
// waitTimeoutMs (30000) exceeds maxWaitTimeoutMs (1000)", docs/spec.md
// §4.2). A config file's errors come from config.Parse, with their keys.
func Validate(cfg config.Tasks) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return nil
}
