package main

import (
	"fmt"
	"log/slog"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/permissions"
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
		fmt.Fprintf(s.out, "permissions: %s\n", permissionsLine(cfg, log))
		return nil
	})
}

// permissionsLine says where the command policy's rules come from for a
// session in dsh's cwd (local.cwd when set): each source with its rule
// count and what was left out of it.
func permissionsLine(cfg config.File, log *slog.Logger) string {
	if cfg.Permissions == nil {
		return "none (no permissions section: every command runs)"
	}
	gate := permissions.New(*cfg.Permissions, permissions.Options{DefaultCwd: cfg.Local.Cwd, Logger: log})
	var parts []string
	for _, src := range gate.Sources(nil) {
		p := fmt.Sprintf("%s (%s", src.Name, plural(src.Rules, "rule"))
		if src.Note != "" {
			p += "; " + src.Note
		}
		parts = append(parts, p+")")
	}
	return fmt.Sprintf("default %s; rules from %s", cfg.Permissions.Default, strings.Join(parts, ", "))
}

// plural is "1 rule", "2 rules".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
