package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/bash/ssh"
	"github.com/dsh-go/dsh/config"
)

// doctorTimeout bounds dsh doctor's checks of a remote host.
const doctorTimeout = 30 * time.Second

// newDoctorCmd reports what dsh would run with: its version, and for the
// local executor the shell and the containment it chose (a cgroup per
// command, or the marker fallback and why), so a user can see whether a
// daemon a command starts can escape; for the SSH executor the host, the
// login, the remote programs and the round trips.
func newDoctorCmd(s streams) *cobra.Command {
	return configCommand("doctor", "Report the executor dsh uses: the shell and process containment here, or the remote host over SSH", s, func(cfg config.File, log *slog.Logger) error {
		v, g := buildVersion()
		fmt.Fprintf(s.out, "version: dsh %s %s\n", v, g)
		if cfg.Executor == config.ExecutorSSH {
			return doctorSSH(cfg.SSH, log, s.out)
		}
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
		fmt.Fprintf(s.out, "shell: %s\ncontainment: %s\n", path, e.Containment())
		return nil
	})
}

// doctorSSH connects as a command would and prints what it found; a host
// that cannot be reached or lacks a program dsh needs is a failure.
func doctorSSH(cfg config.SSH, log *slog.Logger, out io.Writer) error {
	e, err := ssh.New(cfg, ssh.WithLogger(log))
	if err != nil {
		return failure("doctor: %v", err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), doctorTimeout)
	defer cancel()
	fmt.Fprintf(out, "executor: ssh\n")
	r, err := e.Check(ctx)
	if err != nil {
		return failure("doctor: %v", err)
	}
	var progs []string
	for _, p := range []string{"sh", "bash", "setsid", "cat", "mkdir", "rm"} {
		if path := r.Programs[p]; path != "" {
			progs = append(progs, p+" "+path)
		}
	}
	fmt.Fprintf(out, "host: %s\nuser: %s\nkey: %s\nhost key: %s\nremote bash: %s\nremote programs: %s\n",
		r.Host, r.User, r.Key, r.HostKey, orNone(r.BashVersion), strings.Join(progs, ", "))
	fmt.Fprintf(out, "round trip: %s (keep-alive), %s (true through the wrapper)\n", millis(r.RoundTrip), millis(r.Call))
	if len(r.Missing) > 0 {
		fmt.Fprintf(out, "missing: %s\n", strings.Join(r.Missing, ", "))
		return failure("doctor: %s lacks %s: dsh needs sh, bash and setsid there, and cat, mkdir and rm for spill files", e.Host(), strings.Join(r.Missing, ", "))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// millis prints d in milliseconds with one decimal ("6.1 ms"); "-" for a
// round trip that was not measured.
func millis(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}
