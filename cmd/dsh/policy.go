package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/permissions"
	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// newPolicyCmd is `dsh policy check`: what the command policy decides for
// a command, part by part, without running it or asking anyone.
func newPolicyCmd(s streams) *cobra.Command {
	var configPath, workdir string
	var asJSON bool
	check := &cobra.Command{
		Use:   "check [flags] -- COMMAND...",
		Short: "Print what the command policy decides for COMMAND, and why, part by part",
		RunE: func(cmd *cobra.Command, args []string) error {
			command := strings.Join(args, " ")
			if strings.TrimSpace(command) == "" {
				return usageError("policy check: no command given (dsh policy check [flags] -- COMMAND...)")
			}
			cfg, wd, err := setup(configPath, workdir)
			if err != nil {
				return err
			}
			res, err := checkPolicy(cfg, wd, command, newLogger(s.err))
			if err != nil {
				// A malformed managed settings file denies every call.
				res = policy.Result{Decision: policy.Deny, Deciding: -1}
			}
			if asJSON {
				return writeJSON(s.out, policyJSON(res, err))
			}
			fmt.Fprint(s.out, policyText(res, err))
			return nil
		},
	}
	fl := check.Flags()
	fl.SetInterspersed(false)
	fl.StringVar(&configPath, "config", "", configFlagHelp)
	fl.StringVar(&workdir, "workdir", "", "the session's working directory (default: the config's local.cwd, else the current directory)")
	fl.BoolVar(&asJSON, "json", false, "print the decision as one JSON object")
	cmd := &cobra.Command{Use: "policy", Short: "Inspect the command policy", Args: subcommandArgs,
		RunE: func(*cobra.Command, []string) error {
			return usageError("policy: missing command: try dsh policy --help")
		}}
	cmd.AddCommand(check)
	return cmd
}

// checkPolicy decides command for a session whose cwd is wd (else the
// config's local.cwd, else dsh's cwd), reading the settings files such a
// session would read: without a permissions section, those alone
// (docs/spec.md §9.1).
func checkPolicy(cfg config.File, wd, command string, log *slog.Logger) (policy.Result, error) {
	if wd == "" {
		wd = cfg.Local.Cwd
	}
	if wd == "" {
		wd, _ = os.Getwd()
	}
	opts := permissions.Options{DefaultCwd: cfg.Local.Cwd, Logger: log}
	gate := permissions.NewWithoutSection(opts)
	if cfg.Permissions != nil {
		gate = permissions.New(*cfg.Permissions, opts)
	}
	sess := session.New("policy-check", wd)
	defer sess.End()
	return gate.Check(sess, command)
}

// policyText is the decision alone on the first line, then a line per
// part: `CMD → DECISION: WHY`, or `CMD → WHY` for a part no rule decided.
func policyText(res policy.Result, managed error) string {
	var b strings.Builder
	b.WriteString(string(res.Decision) + "\n")
	if managed != nil {
		b.WriteString(managed.Error() + "\n")
	}
	for _, p := range res.Parts {
		if p.Decision != "" {
			fmt.Fprintf(&b, "%s → %s: %s\n", p.CMD(), p.Decision, p.Why())
		} else {
			fmt.Fprintf(&b, "%s → %s\n", p.CMD(), p.Why())
		}
	}
	return b.String()
}

type partJSON struct {
	Command  string   `json:"command"`
	Words    []string `json:"words"`
	Decision string   `json:"decision,omitempty"`
	Why      string   `json:"why"`
}

type policyResultJSON struct {
	Decision string     `json:"decision"`
	Parts    []partJSON `json:"parts"`
	// Text is what the model would read: the deny text or the ask's
	// reason; absent for allow.
	Text     string   `json:"text,omitempty"`
	Remember []string `json:"remember,omitempty"`
}

func policyJSON(res policy.Result, managed error) policyResultJSON {
	out := policyResultJSON{Decision: string(res.Decision), Parts: []partJSON{}, Remember: res.Remember}
	for _, p := range res.Parts {
		out.Parts = append(out.Parts, partJSON{Command: p.CMD(), Words: p.Words, Decision: string(p.Decision), Why: p.Why()})
	}
	switch {
	case managed != nil:
		out.Text = tool.ErrorPrefix + managed.Error()
	case res.Decision == policy.Deny:
		out.Text = tool.ErrorPrefix + res.DenyText()
	case res.Decision == policy.Ask:
		out.Text = res.Reason()
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
