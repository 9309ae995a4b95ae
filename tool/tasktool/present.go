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
