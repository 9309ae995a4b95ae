package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/tool"
)

// toolJSON is one tool as `dsh tools` prints it: what an MCP client is
// shown in tools/list.
type toolJSON struct {
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	InputSchema  *jsonschema.Schema `json:"inputSchema"`
	OutputSchema *jsonschema.Schema `json:"outputSchema,omitempty"`
	Annotations  annotationsJSON    `json:"annotations"`
}

// annotationsJSON are the MCP tool annotation hints.
type annotationsJSON struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

func newToolsCmd(s streams) *cobra.Command {
	return configCommand("tools", "Print the tool schemas as JSON, then the assembled prompt", s, func(cfg config.File, _ configSource, log *slog.Logger) error {
		st, err := host.Standard(cfg, host.WithLogger(log))
		if err != nil {
			return failure("%v", err)
		}
		defer closeStack(st, log)
		text, err := toolsText(st.Tools.List(), st.Prompt.Text())
		if err != nil {
			return failure("tools: %v", err)
		}
		fmt.Fprint(s.out, text)
		return nil
	})
}

// configCommand is a command whose only flag is --config: run gets the
// loaded config and its file (Path "" without one) and where it was
// found, with the logger on stderr set up.
func configCommand(use, short string, s streams, run func(cfg config.File, src configSource, log *slog.Logger) error) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := setup(configPath, "")
			if err != nil {
				return err
			}
			return run(cfg, configSourceOf(cmd), newLogger(s.err))
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", configFlagHelp)
	return cmd
}

// toolsText is the output of dsh tools: the indented JSON array, a blank
// line, the prompt and a final newline.
func toolsText(list []tool.Schema, prompt string) (string, error) {
	out := make([]toolJSON, 0, len(list))
	for _, t := range list {
		out = append(out, toolJSON{
			Name:         t.Name,
			Description:  t.Description,
			InputSchema:  t.Parameters,
			OutputSchema: t.OutputSchema,
			Annotations: annotationsJSON{
				ReadOnlyHint:    t.Annotations.ReadOnly,
				DestructiveHint: t.Annotations.Destructive,
				IdempotentHint:  t.Annotations.Idempotent,
				OpenWorldHint:   t.Annotations.OpenWorld,
			},
		})
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return "", err
	}
	if prompt != "" {
		b.WriteString("\n" + prompt + "\n")
	}
	return b.String(), nil
}
