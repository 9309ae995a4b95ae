package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/tool"
)

// A tool of one's own, and a pre-execute middleware that refuses some of
// its calls: every front end gets the same validation, waterfall and
// error texts.
func ExampleRegistry() {
	reg := tool.NewRegistry()
	_ = reg.Register(tool.Definition{
		Name:        "shout",
		Description: "Say text loudly.",
		Parameters: &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{"text": {Type: "string"}},
			Required:   []string{"text"},
		},
		Execute: func(_ context.Context, call tool.Call) (tool.Result, error) {
			var args struct{ Text string }
			if err := call.Decode(&args); err != nil {
				return tool.Result{}, err
			}
			return tool.TextResult(strings.ToUpper(args.Text)), nil
		},
	})
	reg.UsePre(func(ctx context.Context, call tool.Call, next tool.PreNext) tool.Decision {
		if strings.Contains(string(call.Args), "secret") {
			return tool.Decision{Verdict: tool.Deny, Reason: "no secrets"}
		}
		return next(ctx, call)
	})

	for _, args := range []string{`{"text": "hello"}`, `{"text": 3}`, `{"text": "my secret"}`} {
		res := reg.Execute(context.Background(), tool.Call{Name: "shout", Args: json.RawMessage(args)})
		fmt.Println(res.Text())
	}
	fmt.Println(reg.Execute(context.Background(), tool.Call{Name: "whisper"}).Text())
	// Output:
	// HELLO
	// Error: invalid arguments: "text" must be a string
	// Error: no secrets
	// Error: unknown tool "whisper"
}
