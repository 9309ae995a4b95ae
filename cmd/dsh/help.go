package main

// What --help shows for each command beyond its one-line summary: a longer
// description with the config keys the command reads and where its
// working directory comes from, examples, and its exit statuses. The texts
// live here, one place, and are golden-tested (testdata/help/*.golden);
// cmd/dsh's package doc and docs/spec.md §6.1 say the same in prose.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/internal/editdist"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpTemplate is cobra's with the command's exit statuses at the end.
const helpTemplate = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}{{with index .Annotations "exit"}}
Exit status:
{{.}}{{end}}`

// exitAnnotation is the key of a command's exit status text.
const exitAnnotation = "exit"

// usageExits are the statuses every command shares.
const usageExits = `  2      bad flags, a missing or malformed config file, an unknown config key,
         an unusable --workdir: one line on stderr`

// configPointer ends the description of a command that reads a config
// file.
const configPointer = `The config file is --config, else $DSH_CONFIG, else $XDG_CONFIG_HOME/dsh/config.yaml
(~/.config/dsh/config.yaml), else none; never one from the working directory.
Every key, its default, bounds and an example: docs/config.md.`

// helpText is what --help adds to one command.
type helpText struct {
	long, example, exit string
}

// helpTexts are keyed by the command's path without "dsh ".
var helpTexts = map[string]helpText{
	"": {
		long: `dsh is the shell for LLM agents: an MCP server (dsh mcp, dsh serve) whose bash tool
reports honestly what a command did, and a CLI to try that tool by hand (dsh run).`,
		example: `  dsh mcp --workdir ~/project          # an MCP client starts this over stdio
  dsh run -- 'echo hello; exit 3'      # what a model reads for one call
  dsh doctor                           # the shell, containment and sandbox here`,
		exit: `  0      success
  1      a failure to start other than a usage error
` + usageExits + `
  dsh run exits with the command's status: see dsh run --help.`,
	},
	"run": {
		long: `Runs one bash call through the full pipeline (permissions, hooks, the executor) and
prints exactly the text the model would read, followed by a newline when stdout is a
terminal and the text does not end in one.

The working directory is --workdir, else the config's local.cwd, else the current
directory; with executor: ssh, --workdir (a remote path), else ssh.cwd, else the remote
user's home.

A "full output" path it prints stays after dsh exits: dsh run's spill files go to
dsh-run-<uid>/ under local.spillDir (default: the OS temp dir) and are removed by a later
dsh run once they are 24 hours old, or at once by dsh clean.

Reads the whole config: executor, local.* (timeoutMs, spillDir, sandbox, ...), ssh.*,
bash.*, tasks.* (with --background), permissions, hooks, redact.
` + configPointer,
		example: `  dsh run -- 'go test ./... 2>&1 | tail -20'
  dsh run --timeout 30s --workdir ~/project -- make
  dsh run --background -- 'sleep 2; echo done'
  dsh run --config dsh.yaml -- 'seq 1 100000'   # truncated; the full output's path is printed`,
		exit: `  N      the command's exit code
  124    the command timed out (as timeout(1))
  128+n  the command was killed by signal n; 130 after Ctrl-C of dsh itself
  1      an error result ("Error: ..." on stdout: a refused call, a spawn failure)
` + usageExits,
	},
	"mcp": {
		long: `Serves MCP over stdin and stdout: one session, until stdin reaches EOF or dsh gets
SIGINT or SIGTERM. Every request read before EOF is answered before dsh exits, so a whole
session can be piped in from a file. Logs go to stderr (--log-level). Started on a
terminal, it says in one line on stderr how to try it, then serves as usual.

A session's working directory is --workdir, else the client's first file:// root (when it
is a directory on this machine), else the config's local.cwd, else the current
directory; with executor: ssh, --workdir (a remote path), else ssh.cwd, else the remote
user's home (roots are ignored).

Reads the whole config: executor, local.*, ssh.*, tools, bash.* (yieldAfterMs, ...),
tasks.*, permissions, hooks, redact, audit.
` + configPointer,
		example: `  dsh mcp --workdir ~/project
  dsh mcp --config /etc/dsh/dsh.yaml --log-level debug
  dsh mcp < session.jsonl              # a recorded session, answered in full`,
		exit: `  0      stdin reached EOF, or SIGINT/SIGTERM: the session ended, its tasks killed
  1      a failure to start, or the transport failed
` + usageExits + `; also a sandbox that cannot be enforced here`,
	},
	"serve": {
		long: `Serves MCP over streamable HTTP at /mcp, many isolated sessions at once. Every request
carries the bearer token ($DSH_TOKEN or --token-file, at least 16 characters); a request
without it gets 401 with WWW-Authenticate: Bearer realm="dsh" and a body saying whether
the token was missing or wrong. --addr unix:PATH serves a socket of mode 0600 that needs
no token; --no-auth is allowed only on a loopback address. Logs go to stderr
(--log-level).

A session's working directory is --workdir, else the client's first file:// root (when it
is a directory on this machine), else the config's local.cwd, else the current
directory; with executor: ssh, --workdir (a remote path), else ssh.cwd, else the remote
user's home (roots are ignored).

GET /healthz and /readyz need no token; GET /metrics (Prometheus) needs it, except on a
loopback --metrics-addr. SIGTERM drains: /readyz turns 503, new sessions get 503, and
running calls and tasks get --drain-timeout to finish; SIGINT or a second SIGTERM stops at
once. Operations: docs/operations.md.

Reads the whole config, serve.* (maxSessions, maxRequestBytes, idleSessionMs) and audit.path
included.
` + configPointer,
		example: `  DSH_TOKEN=$(openssl rand -hex 32) dsh serve --addr 127.0.0.1:8765
  dsh serve --addr 127.0.0.1:8765 --token-file ~/.config/dsh/token --workdir ~/project
  dsh serve --addr unix:$XDG_RUNTIME_DIR/dsh.sock`,
		exit: `  0      SIGINT or SIGTERM (after the drain): every session ended, then dsh exited
  1      the address cannot be bound, or the server failed
` + usageExits + `; also no token (or a short one, or a
         token file others can read), --no-auth on a non-loopback address`,
	},
	"tools": {
		long: `Prints the tools a model is shown, as a JSON array of {name, description, inputSchema,
outputSchema, annotations}, then a blank line and the assembled system prompt.

Reads tools, bash.*, tasks.*, local.sandbox and executor from the config.
` + configPointer,
		example: `  dsh tools
  dsh tools --config dsh.yaml | jq '.[0].inputSchema' 2>/dev/null   # the JSON part`,
		exit: `  0      printed
  1      the tools could not be built
` + usageExits,
	},
	"doctor": {
		long: `Prints dsh's version, then what the executor would run with: the shell, the process
containment (a cgroup per command, or the marker and why) and the sandbox; with
executor: ssh it connects and prints the host, user, login key, host key, remote bash and
programs and round-trip times. Then the config file in use and where its name came from,
and where the command policy's rules and the hooks come from.

Reads executor, local.* (shell, containment, sandbox), ssh.*, permissions, hooks and
claudeHooks.
` + configPointer,
		example: `  dsh doctor
  dsh doctor --config dsh.yaml`,
		exit: `  0      printed
  1      over SSH: the host cannot be reached or logged in to, or lacks a program
` + usageExits + `; also a sandbox that cannot be enforced here`,
	},
	"clean": {
		long: `Removes the spill files dsh run kept (the "full output" files whose paths it printed)
and says how many it removed and their bytes. They are in dsh-run-<uid>/ under
local.spillDir (default: the OS temp dir); only the spill directories dsh made there are
removed, not those of a dsh run still running, and nothing a symlink points to.
A dsh-run-<uid> that is a symlink, another user's or open to others is refused.

Reads local.spillDir from the config.
` + configPointer,
		example: `  dsh clean
  dsh clean --config dsh.yaml`,
		exit: `  0      removed (possibly nothing); the amount printed
  1      the directory is refused, or a file could not be removed
` + usageExits,
	},
	"policy": {
		long:    `Inspects the command policy (the permissions section and Claude Code settings files).`,
		example: `  dsh policy check -- 'git push origin main'`,
		exit: `  0      printed
` + usageExits,
	},
	"policy check": {
		long: `Prints what the command policy decides for COMMAND, without running it or asking anyone:
the decision on the first line, then one line per part of the command with its decision
and the rule (or reason) that decided it.

The session's working directory, where project settings files are looked for, is --workdir,
else the config's local.cwd, else the current directory.

Reads permissions, local.cwd and local.sandbox from the config, and the Claude Code
settings files.
` + configPointer,
		example: `  dsh policy check -- 'git push origin main'
  dsh policy check --config dsh.yaml --json -- 'rm -rf build && make'`,
		exit: `  0      printed, whatever the decision
` + usageExits,
	},
	"version": {
		long: `Prints one line: dsh's version, the commit it was built from (with +dirty when the tree
had changes) and that commit's date, the Go version and the platform. dsh --version
prints the same.`,
		example: `  dsh version`,
		exit:    `  0      printed`,
	},
}

// describe gives every command of root its help text; a command without
// one in helpTexts (cobra's own help and completion) keeps cobra's.
func describe(root *cobra.Command) {
	root.SetHelpTemplate(helpTemplate)
	walk(root, func(c *cobra.Command) {
		h, ok := helpTexts[strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")]
		if !ok {
			return
		}
		c.Long, c.Example = h.long, h.example
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[exitAnnotation] = h.exit + "\n"
	})
}

// walk calls f for c and every command under it.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// subcommandArgs is the Args of a command that only groups others: an
// argument there is a mistyped subcommand, refused with the near names.
func subcommandArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = c.Root().SuggestionsMinimumDistance
	}
	return usageError("%s%s", msg, didYouMean(c.SuggestionsFor(args[0]), ""))
}

// flagSuggestion is what a flag error gains when it names an unknown long
// flag that is close to one of c's: "; did you mean --workdir?".
func flagSuggestion(c *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(name, "=")
	var near []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if strings.HasPrefix(f.Name, name) || editdist.Distance(strings.ToLower(name), f.Name) <= c.Root().SuggestionsMinimumDistance {
			near = append(near, f.Name)
		}
	})
	slices.Sort(near)
	return didYouMean(near, "--")
}

// didYouMean is "; did you mean A?" or "; did you mean A or B?", each name
// after prefix; "" for no names.
func didYouMean(names []string, prefix string) string {
	if len(names) == 0 {
		return ""
	}
	for i, n := range names {
		names[i] = prefix + n
	}
	if len(names) == 1 {
		return "; did you mean " + names[0] + "?"
	}
	return "; did you mean " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] + "?"
}
