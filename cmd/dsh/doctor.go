package main

import (
	"fmt"
	"log/slog"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
)

// newDoctorCmd reports what dsh would run with here: its version, the
// shell, and the containment the executor chose (a cgroup per command, or
// the marker fallback and why), so a user can see whether a daemon a
// command starts can escape.
func newDoctorCmd(s streams) *cobra.Command {
	return configCommand("doctor", "Report the shell and the process containment dsh uses on this machine", s, func(cfg config.File, log *slog.Logger) error {
		e, err := local.New(cfg.Local, local.WithLogger(log))
		if err != nil {
			return failure("doctor: %v", err)
		}
		defer e.Close()
		shell := cfg.Local.Shell
		if shell == "" {
			shell = "bash"
		}
		path, _ := exec.LookPath(shell) // setup checked it
		v, g := buildVersion()
		fmt.Fprintf(s.out, "version: dsh %s %s\nshell: %s\ncontainment: %s\n", v, g, path, e.Containment())
		return nil
	})
}
