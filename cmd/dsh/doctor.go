package main

import (
	"fmt"
	"log/slog"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
)

// newDoctorCmd reports what dsh would run with here: its version, the
// shell, the containment the executor chose (a cgroup per command, or the
// marker fallback and why), so a user can see whether a daemon a command
// starts can escape, and the sandbox: off, or its backend and version,
// mode, network (shared per session or not), what it does differently and
// the hidden paths that exist. A sandbox that cannot be enforced is exit
// 2, as for dsh mcp, serve and run.
func newDoctorCmd(s streams) *cobra.Command {
	return configCommand("doctor", "Report the shell and the process containment dsh uses on this machine", s, func(cfg config.File, log *slog.Logger) error {
		e, err := local.New(cfg.Local, local.WithLogger(log))
		if err != nil {
			return stackError(err)
		}
		defer e.Close()
		shell := cfg.Local.Shell
		if shell == "" {
			shell = "bash"
		}
		path, _ := exec.LookPath(shell) // setup checked it
		v, g := buildVersion()
		fmt.Fprintf(s.out, "version: dsh %s %s\nshell: %s\ncontainment: %s\n", v, g, path, e.Containment())
		fmt.Fprint(s.out, sandboxText(e))
		return nil
	})
}

// sandboxText is doctor's sandbox section: "sandbox: off", or one
// indented line per fact.
func sandboxText(e *local.Executor) string {
	sb := e.Sandbox()
	if sb == nil {
		return "sandbox: off\n"
	}
	var b strings.Builder
	b.WriteString("sandbox:\n")
	for _, line := range sb.Describe() {
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}
