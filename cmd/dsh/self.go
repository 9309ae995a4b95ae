package main

// How far dsh's own secrets are from the commands it runs (package guard,
// docs/spec.md §2.4): doctor's "self:" line and the start-up warnings.

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/guard"
)

// rootExposed is the warning for dsh running as root with its commands
// outside a sandbox: CAP_SYS_PTRACE reads any process's memory.
const rootExposed = "running as root: commands can read dsh's memory (its token, the credentials the scrub removed) and write to its descriptors; turn the sandbox on (local.sandbox) to keep them out of reach"

// selfText is doctor's "self:" line for the local executor.
func selfText(cfg config.Local) string {
	st := guard.Current()
	switch {
	case os.Geteuid() == 0 && !cfg.Sandbox.On():
		return rootExposed
	case os.Geteuid() == 0:
		return "running as root: sandboxed commands cannot see dsh; a command run outside the sandbox can read its memory"
	case !st.Ran:
		return "exposed: commands can read dsh's environment and memory (not guarded)"
	case !st.Undumpable:
		return fmt.Sprintf("exposed: commands can read dsh's environment and memory (%v)", st.Err)
	case st.Err != nil:
		return fmt.Sprintf("not dumpable (commands cannot read dsh's memory or descriptors); credentials still in its environment: %v", st.Err)
	default:
		return fmt.Sprintf("not dumpable: commands cannot read dsh's environment, memory or descriptors (%d credentials held in memory only)", st.Held)
	}
}

// warnSelf logs, at the start of dsh mcp and dsh serve, what leaves dsh's
// own secrets within its commands' reach.
func warnSelf(cfg config.File, log *slog.Logger) {
	if cfg.Executor == config.ExecutorSSH {
		return // the commands run on another machine
	}
	st := guard.Current()
	switch {
	case os.Geteuid() == 0 && !cfg.Local.Sandbox.On():
		log.Warn(rootExposed)
	case os.Geteuid() != 0 && st.Ran && st.Err != nil:
		log.Warn("dsh could not keep its secrets from its commands", "err", st.Err)
	}
}
