package ssh

import (
	"fmt"
	"testing"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/executortest"
	"github.com/dsh-go/dsh/internal/sshtest"
)

// TestContract runs the executor contract (docs/spec.md §1) that every
// executor shares against the SSH executor and a real sshd on a loopback
// port.
func TestContract(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	executortest.Run(t, harness(srv))
}

// harness is the contract's harness for executors on srv.
func harness(srv *sshtest.Server) executortest.Harness {
	return executortest.Harness{
		Name: Name,
		New: func(t *testing.T, l executortest.Limits) (bash.Executor, string) {
			cfg := srv.Config(t)
			cfg.Cwd, cfg.Timeout, cfg.MaxTimeout = l.Cwd, l.Timeout, l.MaxTimeout
			cfg.MaxOutputBytes, cfg.KeepHeadBytes, cfg.MaxSpillBytes = l.MaxOutputBytes, l.KeepHeadBytes, l.MaxSpillBytes
			if l.Grace != 0 {
				cfg.Grace = l.Grace
			}
			if l.SpillDir != "" {
				cfg.SpillDir = l.SpillDir
			}
			e := newExecutor(t, cfg)
			return e, cfg.SpillDir
		},
		Dir: func(t *testing.T) string { return srv.SharedDir(t) },
		WorkdirError: func(dir, problem string) string {
			return fmt.Sprintf("%s: workdir %q %s on %s", Name, dir, problem, srv.Host)
		},
		Slack: 2 * drainSlack,
	}
}
