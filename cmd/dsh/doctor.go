package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/bash/ssh"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/hooks"
	"github.com/dsh-go/dsh/internal/permissions"
)

// doctorTimeout bounds dsh doctor's checks of a remote host.
const doctorTimeout = 30 * time.Second

// newDoctorCmd reports what dsh would run with: for the local executor
// first whether commands are sandboxed (a line nobody misses), then its
// version, the shell and the containment it chose (a cgroup per
// command, or the marker fallback and why), so a user can see whether a
// daemon a command starts can escape, and the sandbox: off, or its backend
// and version, mode, one line each for what stays writable and reachable
// (the workspace, each writable root, /tmp, the network, each allowed
// socket), what it does differently and what it hides (the hide entries
// that exist, dsh's own files, the spill base, /run, the host sockets it
// covers); for the SSH executor the
// host, the login, the remote programs, the round trips and the spill
// directory base; then the config file in use and where its name came
// from (config.go), and where the command policy's rules come from. A
// sandbox that cannot be enforced is exit 2, as for dsh mcp, serve and
// run.
func newDoctorCmd(s streams) *cobra.Command {
	return configCommand("doctor", "Report the executor dsh uses: the shell, process containment and sandbox here, or the remote host over SSH", s, func(cfg config.File, src configSource, log *slog.Logger) error {
		var err error
		if cfg.Executor == config.ExecutorSSH {
			fmt.Fprintf(s.out, "version: %s\n", readBuildFacts())
			err = doctorSSH(cfg.SSH, log, s.out)
		} else {
			cfg.Local.Sandbox, err = doctorLocal(cfg, src.Path, log, s.out)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(s.out, "config: %s\n", src)
		fmt.Fprintf(s.out, "permissions: %s\n", permissionsLine(cfg, permissions.Options{Logger: log}))
		return printHooks(cfg, log, s.out)
	})
}

// notIsolated is said by dsh serve at start and by dsh doctor where
// commands run unsandboxed as dsh's user: nothing but the sandbox (its
// pid namespace and hidden paths) or separate uids keeps one session's
// command from another's files, or from signalling dsh.
const notIsolated = "sessions are not isolated from each other: an unsandboxed command can signal dsh and read other sessions' files"

// sandboxHeadline is doctor's first line with the local executor: whether
// commands are sandboxed, so that nobody misses it.
func sandboxHeadline(e *local.Executor) string {
	if err := e.SandboxUnavailable(); err != nil {
		return "sandbox: NONE, commands run with the user's full authority: " + strings.TrimPrefix(err.Error(), "sandbox: ")
	}
	if sb := e.Sandbox(); sb != nil {
		return "sandbox: on (" + sb.Mode() + ", " + sb.Backend() + ")"
	}
	return "sandbox: off (local.sandbox.mode: off)"
}

// sandboxText is doctor's sandbox section: nothing without a sandbox (the
// first line said why), else one indented line per fact.
func sandboxText(e *local.Executor) string {
	sb := e.Sandbox()
	if sb == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("sandbox:\n")
	for _, line := range sb.Describe() {
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}

// doctorLocal prints whether commands are sandboxed (the first line), the
// version, the shell, the containment the local executor chose and its
// sandbox, which hides what the stack's would of dsh's own: the config
// file's directory (configPath's) and the audit log. It returns the
// sandbox as it applies here.
func doctorLocal(file config.File, configPath string, log *slog.Logger, out io.Writer) (config.Sandbox, error) {
	cfg := file.WithDefaults().Local
	opts := []local.Option{local.WithLogger(log), local.WithConfigFile(configPath)}
	if file.Audit.IsFile() {
		if abs, err := filepath.Abs(file.Audit.Path); err == nil {
			opts = append(opts, local.WithHidden(abs))
		}
	}
	e, err := local.New(cfg, opts...)
	if err != nil {
		return cfg.Sandbox, stackError(err)
	}
	defer e.Close()
	cfg.Sandbox = e.Applied(cfg.Sandbox)
	fmt.Fprintf(out, "%s\nversion: %s\n", sandboxHeadline(e), readBuildFacts())
	shell := cfg.Shell
	if shell == "" {
		shell = "bash"
	}
	path, _ := exec.LookPath(shell) // setup checked it
	fmt.Fprintf(out, "shell: %s\ncontainment: %s\nlimits: %s\n", path, e.Containment(), e.Limits())
	fmt.Fprint(out, sandboxText(e))
	if !cfg.Sandbox.On() {
		fmt.Fprintf(out, "sessions: %s\n", notIsolated)
	}
	fmt.Fprintf(out, "self: %s\n", selfText(cfg))
	return cfg.Sandbox, nil
}

// permissionsLine says where the command policy's rules come from for a
// session in dsh's cwd (local.cwd when set): each source with its rule
// count and what was left out of it. Without a section the rules are
// those of Claude Code's settings files alone, under a default of allow
// (docs/spec.md §9.1); with no such file every command runs, and a
// sandbox that may be left still has the user asked (§11). opts says
// where the settings files are (tests point it at their own) and logs.
func permissionsLine(cfg config.File, opts permissions.Options) string {
	opts.DefaultCwd = cfg.Local.Cwd
	if cfg.Executor == config.ExecutorSSH {
		// As the stack's gate: the sessions' cwds are remote, so no
		// project file but CLAUDE_PROJECT_DIR's (docs/spec.md §13).
		opts.DefaultCwd, opts.RemoteSessions = cfg.SSH.Cwd, true
	}
	if cfg.Permissions != nil {
		gate := permissions.New(*cfg.Permissions, opts)
		return fmt.Sprintf("default %s; rules from %s", cfg.Permissions.Default, sourcesText(gate.Sources(nil)))
	}
	escape := ""
	if sb := cfg.Local.Sandbox; sb.On() && sb.Unsandboxed() {
		escape = "; leaving the sandbox asks the user"
	}
	sources := permissions.NewWithoutSection(opts).Sources(nil)
	if len(sources) == 0 {
		return "none (no permissions section, no Claude Code settings file: every command runs" + escape + ")"
	}
	return "no permissions section: default allow; rules from " + sourcesText(sources) + escape
}

// sourcesText lists sources with their rule counts and notes:
// "dsh config (1 rule), /home/u/.claude/settings.json (0 rules; …)".
func sourcesText(sources []permissions.Source) string {
	var parts []string
	for _, src := range sources {
		p := fmt.Sprintf("%s (%s", src.Name, plural(src.Rules, "rule"))
		if src.Note != "" {
			p += "; " + src.Note
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, ", ")
}

// plural is "1 rule", "2 rules".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
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
	for _, p := range []string{"sh", "bash", "setsid", "cat", "mkdir", "rm", "ls", "id"} {
		if path := r.Programs[p]; path != "" {
			progs = append(progs, p+" "+path)
		}
	}
	fmt.Fprintf(out, "host: %s\nuser: %s\nkey: %s\nhost key: %s\nremote bash: %s\nremote programs: %s\n",
		r.Host, r.User, r.Key, r.HostKey, orNone(r.BashVersion), strings.Join(progs, ", "))
	fmt.Fprintf(out, "round trip: %s (keep-alive), %s (true through the wrapper)\n", millis(r.RoundTrip), millis(r.Call))
	if len(r.Missing) > 0 {
		fmt.Fprintf(out, "missing: %s\n", strings.Join(r.Missing, ", "))
		return failure("doctor: %s lacks %s: dsh needs sh, bash and setsid there, and cat, mkdir, rm, ls and id for spill files", e.Host(), strings.Join(r.Missing, ", "))
	}
	if r.SpillErr != nil {
		return failure("doctor: spill directory on %s: %v", e.Host(), r.SpillErr)
	}
	fmt.Fprintf(out, "spill base: %s\n", r.SpillBase)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// millis prints d in milliseconds with one decimal ("6.1 ms"); "-" for a
// round trip that was not measured, and "<0.1 ms" for one too short for
// that decimal (a keep-alive on loopback), which "0.0 ms" would misstate.
func millis(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < 50*time.Microsecond:
		return "<0.1 ms"
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// printHooks lists the hooks a session in dsh's cwd (local.cwd when set)
// would run, one line each: event, matcher, command, where it came from.
func printHooks(cfg config.File, log *slog.Logger, out io.Writer) error {
	if !hooks.Configured(cfg) {
		fmt.Fprintln(out, "hooks: none")
		return nil
	}
	h, err := hooks.New(cfg, nil, hooks.Options{DefaultCwd: cfg.Local.Cwd, Logger: log})
	if err != nil {
		return failure("doctor: %v", err)
	}
	list := h.Handlers(nil)
	if len(list) == 0 {
		fmt.Fprintln(out, "hooks: none (claudeHooks found none)")
	}
	for _, hd := range list {
		fmt.Fprintf(out, "hook: %s %q %s (%s)\n", hd.Event, hd.Matcher, hd.Command, hd.Source)
	}
	return nil
}
