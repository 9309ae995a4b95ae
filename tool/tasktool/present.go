package tasktool

import (
	"strings"

	"github.com/dsh-go/dsh/tool"
)

// Titles of the cards.
const (
	listTitle       = "List background tasks"
	readTitlePrefix = "Read "
	killTitlePrefix = "Kill "
	// inputTitlePrefix titles task_input's card: "Type into bash-1".
	inputTitlePrefix = "Type into "
)

// presenters returns generic card presenters. titlePrefix "" means the
// list card; console shows the result as program output.
func presenters(kind, titlePrefix string, console bool) tool.Presenters {
	title := func(args map[string]any) string {
		if titlePrefix == "" {
			return listTitle
		}
		id, _ := args["task_id"].(string)
		if id = strings.TrimSpace(id); id == "" {
			id = "task"
		}
		return titlePrefix + id
	}
	return tool.Presenters{
		Call: func(args map[string]any) *tool.View {
			return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: title(args), Kind: kind, RawInput: args}}
		},
		Result: func(args map[string]any, res tool.Result) *tool.View {
			var content []tool.Content
			for _, c := range res.Content {
				if c.Type != "text" {
					continue
				}
				if console && !res.IsError {
					c = tool.TextContent("```console\n" + strings.TrimRight(c.Text, "\n") + "\n```")
				}
				content = append(content, c)
			}
			return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: title(args), Kind: kind, RawInput: args, Content: content}}
		},
	}
}

// screenTitlePrefix titles the terminal card of a screen read:
// "Screen of bash-1".
const screenTitlePrefix = "Screen of "

// screenPresenters shows a task_output call with screen: true as a
// terminal card whose output is the rendered screen (docs/spec.md §7); the
// other calls as generic does.
func screenPresenters(generic tool.Presenters) tool.Presenters {
	isScreen := func(args map[string]any) bool { b, _ := args["screen"].(bool); return b }
	title := func(args map[string]any) string {
		id, _ := args["task_id"].(string)
		return screenTitlePrefix + strings.TrimSpace(id)
	}
	return tool.Presenters{
		Call: func(args map[string]any) *tool.View {
			if !isScreen(args) {
				return generic.Call(args)
			}
			return &tool.View{Kind: tool.ViewTerminal, Terminal: &tool.TerminalView{Command: title(args)}}
		},
		Result: func(args map[string]any, res tool.Result) *tool.View {
			if !isScreen(args) || res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
				return generic.Result(args, res)
			}
			return &tool.View{Kind: tool.ViewTerminal, Terminal: &tool.TerminalView{Command: title(args), Output: res.Content[0].Text}}
		},
	}
}
