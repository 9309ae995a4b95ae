package bashtool

import (
	"os"

	"github.com/dsh-go/dsh/tool"
)

// The presenters of docs/spec.md §3.7. They are pure functions of the arguments
// and the result, so a replayed log renders exactly what the live session
// rendered; the registry soft-validates the arguments before calling them.

func str(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

func isBackground(args map[string]any) bool {
	b, _ := args["run_in_background"].(bool)
	return b
}

// presentCall: a terminal for a foreground call (cwd only when the model
// gave a workdir, verbatim), a generic execute card for a background one.
func presentCall(args map[string]any) *tool.View {
	command, description := str(args, "command"), str(args, "description")
	if isBackground(args) {
		return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{
			Title:    command,
			Kind:     "execute",
			RawInput: command,
			Content:  []tool.Content{tool.TextContent(description)},
		}}
	}
	return &tool.View{Kind: tool.ViewTerminal, Terminal: &tool.TerminalView{
		Command:     command,
		Description: description,
		Cwd:         str(args, "workdir"),
	}}
}

// presentResult: no view unless the result is exactly one text block; a
// fenced console block for a background call, a yielded one or an error
// (read from the text, which a replayed log keeps); otherwise the
// terminal's output and how the command ended, read from the final marker.
func presentResult(args map[string]any, res tool.Result) *tool.View {
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		return nil
	}
	text := res.Content[0].Text
	command := str(args, "command")
	if isBackground(args) || res.IsError || isYielded(text) {
		return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{
			Title:   command,
			Kind:    "execute",
			Content: []tool.Content{tool.TextContent(tool.Fence(text))},
		}}
	}
	code, signal := parseExit(text)
	return &tool.View{Kind: tool.ViewTerminal, Terminal: &tool.TerminalView{
		Command:  command,
		Output:   text,
		ExitCode: code,
		Signal:   signal,
	}}
}

// removeFiles deletes local spill files; one already gone is no error.
func removeFiles(paths ...string) {
	for _, p := range paths {
		_ = os.Remove(p)
	}
}
