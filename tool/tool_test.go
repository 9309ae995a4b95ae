package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bashLikeSchema has the parameters of docs/spec.md §3.1, in order.
func bashLikeSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"command":           {Type: "string"},
			"description":       {Type: "string"},
			"timeoutMs":         {Type: "number"},
			"workdir":           {Type: "string"},
			"run_in_background": {Type: "boolean"},
		},
		PropertyOrder: []string{"command", "description", "timeoutMs", "workdir", "run_in_background"},
		Required:      []string{"command", "description"},
	}
}

// nestedSchema exercises objects, arrays, integers and enums.
func nestedSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"count": {Type: "integer"},
			"paths": {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			"opts": {
				Type: "object",
				Properties: map[string]*jsonschema.Schema{
					"depth": {Type: "integer"},
					"mode":  {Type: "string", Enum: []any{"fast", "slow"}},
				},
				PropertyOrder: []string{"depth", "mode"},
				Required:      []string{"depth"},
			},
			"either": {Types: []string{"string", "null"}},
		},
		PropertyOrder: []string{"count", "paths", "opts", "either"},
	}
}

func echoTool(name string, schema *jsonschema.Schema) Definition {
	return Definition{
		Name:        name,
		Description: "echoes its arguments",
		Parameters:  schema,
		Execute: func(_ context.Context, call Call) (Result, error) {
			return TextResult("ran " + string(call.Args)), nil
		},
	}
}

func newRegistry(t *testing.T, defs ...Definition) *Registry {
	t.Helper()
	r := NewRegistry()
	for _, d := range defs {
		if err := r.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestValidationMessages(t *testing.T) {
	r := newRegistry(t, echoTool("bash", bashLikeSchema()), echoTool("nested", nestedSchema()))
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"bash", `{}`, `Error: invalid arguments: missing required property "command"; missing required property "description"`},
		{"bash", ``, `Error: invalid arguments: missing required property "command"; missing required property "description"`},
		{"bash", `null`, `Error: invalid arguments: missing required property "command"; missing required property "description"`},
		{"bash", `{"command": null, "description": "d"}`, `Error: invalid arguments: missing required property "command"`},
		{"bash", `{"description": "d"}`, `Error: invalid arguments: missing required property "command"`},
		{"bash", `{"command": "ls"}`, `Error: invalid arguments: missing required property "description"`},
		{"bash", `{"command": 1, "description": true, "timeoutMs": "5", "workdir": 2, "run_in_background": "yes"}`,
			`Error: invalid arguments: "command" must be a string; "description" must be a string; "timeoutMs" must be a number; "workdir" must be a string; "run_in_background" must be a boolean`},
		{"bash", `{"run_in_background": 1, "timeoutMs": [], "command": "x"}`,
			`Error: invalid arguments: missing required property "description"; "timeoutMs" must be a number; "run_in_background" must be a boolean`},
		{"bash", `[]`, `Error: invalid arguments: "arguments" must be an object`},
		{"bash", `"ls"`, `Error: invalid arguments: "arguments" must be an object`},
		{"bash", `42`, `Error: invalid arguments: "arguments" must be an object`},
		{"bash", `{"command": "x"`, `Error: invalid arguments: arguments are not valid JSON: unexpected EOF`},
		{"bash", `{} {}`, `Error: invalid arguments: arguments are not valid JSON: unexpected data after the value`},
		{"nested", `{"count": 1.5}`, `Error: invalid arguments: "count" must be an integer`},
		{"nested", `{"count": "1"}`, `Error: invalid arguments: "count" must be an integer`},
		{"nested", `{"paths": "a"}`, `Error: invalid arguments: "paths" must be an array`},
		{"nested", `{"paths": ["a", 2, true]}`, `Error: invalid arguments: "paths[1]" must be a string; "paths[2]" must be a string`},
		{"nested", `{"opts": []}`, `Error: invalid arguments: "opts" must be an object`},
		{"nested", `{"opts": {}}`, `Error: invalid arguments: missing required property "opts.depth"`},
		{"nested", `{"opts": {"depth": 0.5, "mode": "medium"}}`, `Error: invalid arguments: "opts.depth" must be an integer; "opts.mode" must be one of "fast", "slow"`},
		{"nested", `{"either": 3}`, `Error: invalid arguments: "either" must be a string or null`},
	} {
		res := r.Execute(context.Background(), Call{Name: tc.tool, Args: json.RawMessage(tc.args)})
		if got := res.Text(); got != tc.want || !res.IsError || res.Code != CodeInvalidArgs {
			t.Errorf("%s %s:\n got %q (isError %v, code %s)\nwant %q", tc.tool, tc.args, got, res.IsError, res.Code, tc.want)
		}
	}
	for _, args := range []string{
		`{"command": "ls", "description": "d"}`,
		`{"command": "ls", "description": "d", "timeoutMs": 1.5, "workdir": "w", "run_in_background": false, "env": {"X": 1}, "stdin": 3}`,
	} {
		if res := r.Execute(context.Background(), Call{Name: "bash", Args: json.RawMessage(args)}); res.IsError {
			t.Errorf("%s: %s", args, res.Text())
		}
	}
	for _, args := range []string{`{"count": 2.0}`, `{"count": 1e400}`, `{"count": -7}`, `{"opts": {"depth": 1, "mode": "fast"}, "either": null}`, `{}`} {
		if res := r.Execute(context.Background(), Call{Name: "nested", Args: json.RawMessage(args)}); res.IsError {
			t.Errorf("%s: %s", args, res.Text())
		}
	}
}

// A required property's hint ends the error that reports it missing
// (absent or null), on a line of its own; nothing else gets it.
func TestMissingHints(t *testing.T) {
	def := echoTool("bash", bashLikeSchema())
	def.MissingHints = map[string]string{"description": "description: what to send", "command": "command: what to run"}
	r := newRegistry(t, def)
	for _, tc := range []struct{ args, want string }{
		{`{"command": "ls"}`, "Error: invalid arguments: missing required property \"description\"\ndescription: what to send"},
		{`{"command": "ls", "description": null}`, "Error: invalid arguments: missing required property \"description\"\ndescription: what to send"},
		{``, "Error: invalid arguments: missing required property \"command\"; missing required property \"description\"\ncommand: what to run\ndescription: what to send"},
		{`{"command": "ls", "description": 3}`, `Error: invalid arguments: "description" must be a string`},
		{`{"description": "d", "timeoutMs": "x"}`, "Error: invalid arguments: missing required property \"command\"; \"timeoutMs\" must be a number\ncommand: what to run"},
		{`[]`, `Error: invalid arguments: "arguments" must be an object`},
		{`{"command"`, `Error: invalid arguments: arguments are not valid JSON: unexpected EOF`},
	} {
		res := r.Execute(context.Background(), Call{Name: "bash", Args: json.RawMessage(tc.args)})
		if got := res.Text(); got != tc.want || res.Code != CodeInvalidArgs {
			t.Errorf("%s:\n got %q (%s)\nwant %q", tc.args, got, res.Code, tc.want)
		}
	}
}

func TestUnknownToolAndToolFailures(t *testing.T) {
	r := newRegistry(t,
		Definition{Name: "fails", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
			return Result{}, errors.New("boom")
		}},
		Definition{Name: "coded", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
			return Result{}, fmt.Errorf("wrapped: %w", &Error{Code: "TASK_UNKNOWN", Message: "unknown task bash-9"})
		}},
		Definition{Name: "panics", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
			panic("kaboom")
		}},
	)
	for _, tc := range []struct{ name, text, code string }{
		{"nope", `Error: unknown tool "nope"`, CodeUnknownTool},
		{"fails", "Error: boom", CodeFailed},
		{"coded", "Error: wrapped: unknown task bash-9", "TASK_UNKNOWN"},
		{"panics", "Error: kaboom", CodePanic},
	} {
		res := r.Execute(context.Background(), Call{Name: tc.name})
		if res.Text() != tc.text || res.Code != tc.code || !res.IsError || len(res.Content) != 1 {
			t.Errorf("%s: got %+v", tc.name, res)
		}
	}
}

// recorder is a middleware that logs its entry and exit.
func recorder(name string, log *[]string, mu *sync.Mutex) PreExecute {
	return func(ctx context.Context, call Call, next PreNext) Decision {
		mu.Lock()
		*log = append(*log, "enter "+name)
		mu.Unlock()
		d := next(ctx, call)
		mu.Lock()
		*log = append(*log, "exit "+name)
		mu.Unlock()
		return d
	}
}

func TestPreWaterfallOrder(t *testing.T) {
	var log []string
	var mu sync.Mutex
	r := newRegistry(t, Definition{Name: "t", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
		log = append(log, "execute")
		return TextResult("ok"), nil
	}})
	r.UsePre(recorder("a", &log, &mu))
	removeB := r.UsePre(recorder("b", &log, &mu))
	r.UsePreFirst(recorder("first", &log, &mu))
	if res := r.Execute(context.Background(), Call{Name: "t"}); res.Text() != "ok" {
		t.Fatal(res)
	}
	want := []string{"enter first", "enter a", "enter b", "exit b", "exit a", "exit first", "execute"}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	log = nil
	removeB()
	r.Execute(context.Background(), Call{Name: "t"})
	if slices.Contains(log, "enter b") {
		t.Fatal("removed middleware still ran")
	}
}

// TestAdviceTravelsOnTheCall: the advice a step sets on the call it
// passes on is what the steps after it see; a front end's is cleared.
func TestAdviceTravelsOnTheCall(t *testing.T) {
	var seen []Advice
	r := newRegistry(t, Definition{Name: "t", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
		return TextResult("ok"), nil
	}})
	r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		seen = append(seen, call.Advice)
		call.Advice = Advice{Ask: "hook: check", By: "hook"}
		return next(ctx, call)
	})
	r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		seen = append(seen, call.Advice)
		return next(ctx, call)
	})
	r.Execute(context.Background(), Call{Name: "t", Advice: Advice{Allow: true, By: "forged"}})
	want := []Advice{{}, {Ask: "hook: check", By: "hook"}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("advice seen (-want +got):\n%s", diff)
	}
}

func TestDenyShortCircuitsAndReachesPost(t *testing.T) {
	executed, laterRan := false, false
	r := newRegistry(t, Definition{Name: "t", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
		executed = true
		return TextResult("ok"), nil
	}})
	r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		return Decision{Verdict: Deny, Reason: "rm -rf is not allowed here"}
	})
	r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		laterRan = true
		return next(ctx, call)
	})
	var seen Result
	r.UsePost(func(ctx context.Context, call Call, res Result, next PostNext) PostDecision {
		seen = res
		return PostDecision{Notes: []string{"policy note"}}
	})
	res := r.Execute(context.Background(), Call{Name: "t"})
	if executed || laterRan {
		t.Fatalf("executed %v, later middleware ran %v", executed, laterRan)
	}
	if seen.Text() != "Error: rm -rf is not allowed here" || seen.Code != CodeDenied {
		t.Fatalf("post-execute saw %+v", seen)
	}
	want := Result{Content: []Content{TextContent("Error: rm -rf is not allowed here")}, IsError: true, Code: CodeDenied, Notes: []string{"policy note"}, Ruling: Ruling{Outcome: OutcomeDeny}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Fatalf("result (-want +got):\n%s", diff)
	}
}

func TestDecisions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		decision Decision
		text     string
		code     string
	}{
		{"deny with reason", Decision{Verdict: Deny, Reason: "nope"}, "Error: nope", CodeDenied},
		{"deny without reason", Decision{Verdict: Deny}, `Error: tool "t" was denied`, CodeDenied},
		{"ask with reason", Decision{Verdict: Ask, Reason: "needs a human"}, "Error: needs a human", CodeApprovalRequired},
		{"ask without reason", Decision{Verdict: Ask}, `Error: tool "t" requires approval (not yet supported)`, CodeApprovalRequired},
		{"allow short-circuits", Decision{Verdict: Allow}, "ok", ""},
		{"unknown verdict fails closed", Decision{Verdict: 7}, `Error: tool "t" was denied: unknown verdict 7`, CodeDenied},
		{"the zero decision fails closed", Decision{}, `Error: tool "t" was denied`, CodeDenied},
		{"deny with a code", Decision{Verdict: Deny, Reason: "no", Code: "DECLINED"}, "Error: no", "DECLINED"},
		{"suspend without a question fails closed", Decision{Verdict: Suspend}, `Error: tool "t" was denied: unknown verdict 3`, CodeDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, Definition{Name: "t", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
				return TextResult("ok"), nil
			}})
			r.UsePre(func(context.Context, Call, PreNext) Decision { return tc.decision })
			r.UsePre(func(context.Context, Call, PreNext) Decision { panic("the first decided; I must not run") })
			res := r.Execute(context.Background(), Call{Name: "t"})
			if res.Text() != tc.text || res.Code != tc.code || res.IsError != (tc.code != "") {
				t.Fatalf("got %+v", res)
			}
		})
	}
}

// TestSuspend: a Suspend runs neither the tool nor post-execute; the result
// carries the question for the front end.
func TestSuspend(t *testing.T) {
	executed, post := false, false
	r := newRegistry(t, Definition{Name: "t", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
		executed = true
		return TextResult("ok"), nil
	}})
	q := &Question{Message: "Run this command?", Reason: "why"}
	r.UsePre(func(context.Context, Call, PreNext) Decision { return Decision{Verdict: Suspend, Question: q} })
	r.UsePost(func(ctx context.Context, call Call, res Result, next PostNext) PostDecision {
		post = true
		return next(ctx, call, res)
	})
	res := r.Execute(context.Background(), Call{Name: "t"})
	if res.Question != q || res.IsError || len(res.Content) != 0 || executed || post {
		t.Fatalf("result %+v, executed %v, post-execute %v", res, executed, post)
	}
}

// TestConsents: the consents an Allow carries reach the tool through its
// context; without a middleware that adds one, and with one that denies
// after adding it, the tool sees none.
func TestConsents(t *testing.T) {
	var seen []string
	r := newRegistry(t, Definition{Name: "t", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(ctx context.Context, _ Call) (Result, error) {
		for _, c := range []string{"leave", "other"} {
			if Consented(ctx, c) {
				seen = append(seen, c)
			}
		}
		return TextResult("ok"), nil
	}})
	if res := r.Execute(context.Background(), Call{Name: "t"}); res.IsError || len(seen) != 0 {
		t.Fatalf("no middleware: %+v, consents %v", res, seen)
	}
	// The consent is added to what the rest of the waterfall decided.
	remove := r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		d := next(ctx, call)
		d.Consents = append(d.Consents, "leave")
		return d
	})
	if res := r.Execute(context.Background(), Call{Name: "t"}); res.IsError || !slices.Equal(seen, []string{"leave"}) {
		t.Fatalf("consented: %+v, consents %v", res, seen)
	}
	remove()
	seen = nil
	r.UsePre(func(context.Context, Call, PreNext) Decision {
		return Decision{Verdict: Deny, Reason: "no", Consents: []string{"leave"}}
	})
	if res := r.Execute(context.Background(), Call{Name: "t"}); !res.IsError || seen != nil {
		t.Fatalf("a denial ran the tool: %+v, consents %v", res, seen)
	}
	if Consented(context.Background(), "leave") {
		t.Error("a bare context consents")
	}
}

func TestPanickingMiddleware(t *testing.T) {
	executed := false
	r := newRegistry(t, Definition{Name: "t", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(context.Context, Call) (Result, error) {
		executed = true
		return TextResult("ok"), nil
	}})
	remove := r.UsePre(func(context.Context, Call, PreNext) Decision { panic("policy bug") })
	res := r.Execute(context.Background(), Call{Name: "t"})
	if executed || res.Text() != "Error: policy bug" || res.Code != CodePanic {
		t.Fatalf("executed %v, got %+v", executed, res)
	}
	remove()
	r.UsePost(func(context.Context, Call, Result, PostNext) PostDecision { panic("hook bug") })
	res = r.Execute(context.Background(), Call{Name: "t"})
	if !executed || res.Text() != "Error: hook bug" || res.Code != CodePanic {
		t.Fatalf("got %+v", res)
	}
}

func TestPostWaterfall(t *testing.T) {
	r := newRegistry(t, echoTool("t", &jsonschema.Schema{Type: "object"}))
	var order []string
	r.UsePost(func(ctx context.Context, call Call, res Result, next PostNext) PostDecision {
		order = append(order, "outer")
		d := next(ctx, call, res)
		if d.Block {
			d.Feedback = "outer saw: " + d.Feedback
		}
		return d
	})
	r.UsePost(func(ctx context.Context, call Call, res Result, next PostNext) PostDecision {
		order = append(order, "inner")
		if strings.Contains(res.Text(), "secret") {
			return PostDecision{Block: true, Feedback: "output held a secret"}
		}
		return next(ctx, call, res)
	})
	res := r.Execute(context.Background(), Call{Name: "t", Args: json.RawMessage(`{"x": "secret"}`)})
	if res.Text() != "Error: outer saw: output held a secret" || res.Code != CodeBlocked || !res.IsError {
		t.Fatalf("got %+v", res)
	}
	if diff := cmp.Diff([]string{"outer", "inner"}, order); diff != "" {
		t.Fatal(diff)
	}
	res = r.Execute(context.Background(), Call{Name: "t", Args: json.RawMessage(`{"x": 1}`)})
	if res.Text() != `ran {"x": 1}` || res.IsError {
		t.Fatalf("got %+v", res)
	}
}

func TestRegister(t *testing.T) {
	r := NewRegistry()
	obj := &jsonschema.Schema{Type: "object"}
	run := func(context.Context, Call) (Result, error) { return Result{}, nil }
	for _, tc := range []struct {
		def  Definition
		want string
	}{
		{Definition{Parameters: obj, Execute: run}, "tool: a definition needs a name"},
		{Definition{Name: "x", Parameters: obj}, `tool "x": no Execute function`},
		{Definition{Name: "x", Execute: run}, `tool "x": parameters must be an object schema`},
		{Definition{Name: "x", Parameters: &jsonschema.Schema{Type: "string"}, Execute: run}, `tool "x": parameters must be an object schema`},
		{Definition{Name: "x", Execute: run, Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
			"n": {Type: "number", Minimum: new(1.0)},
		}}}, `tool "x": schema parameters.n uses "minimum", which the validator does not check`},
	} {
		if err := r.Register(tc.def); err == nil || err.Error() != tc.want {
			t.Errorf("err = %v, want %s", err, tc.want)
		}
	}
	for _, extra := range []*jsonschema.Schema{{Type: "string"}, {Not: &jsonschema.Schema{}}} {
		s := &jsonschema.Schema{Type: "object", AdditionalProperties: extra}
		if err := r.Register(Definition{Name: "y", Parameters: s, Execute: run}); err == nil || !strings.Contains(err.Error(), `"additionalProperties"`) {
			t.Errorf("additionalProperties %+v: %v", extra, err)
		}
	}
	if err := r.Register(Definition{Name: "y", Parameters: &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{}}, Execute: run}); err != nil {
		t.Errorf("additionalProperties true refused: %v", err)
	}
	r.Remove("y")
	if err := r.Register(Definition{Name: "x", Description: "d", Parameters: obj, Execute: run, Annotations: Annotations{ReadOnly: true}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(Definition{Name: "x", Parameters: obj, Execute: run}); err == nil || err.Error() != `tool "x" is already registered` {
		t.Fatalf("duplicate: %v", err)
	}
	if err := r.Register(echoTool("a", obj)); err != nil {
		t.Fatal(err)
	}
	want := []Schema{
		{Name: "x", Description: "d", Parameters: obj, Annotations: Annotations{ReadOnly: true}},
		{Name: "a", Description: "echoes its arguments", Parameters: obj},
	}
	if diff := cmp.Diff(want, r.List(), cmp.Comparer(func(a, b *jsonschema.Schema) bool { return a == b })); diff != "" {
		t.Fatalf("List (-want +got):\n%s", diff)
	}
	if !r.Remove("x") || r.Remove("x") {
		t.Fatal("Remove")
	}
	if res := r.Execute(context.Background(), Call{Name: "x"}); res.Code != CodeUnknownTool {
		t.Fatalf("removed tool ran: %+v", res)
	}
}

func TestPresenters(t *testing.T) {
	def := echoTool("bash", bashLikeSchema())
	def.Presenters = Presenters{
		Call: func(args map[string]any) *View {
			if args["command"] == "panic" {
				panic("presenter bug")
			}
			return &View{Kind: ViewTerminal, Terminal: &TerminalView{Command: args["command"].(string)}}
		},
		Result: func(args map[string]any, res Result) *View {
			return &View{Kind: ViewTerminal, Terminal: &TerminalView{Command: args["command"].(string), Output: res.Text()}}
		},
	}
	r := newRegistry(t, def, echoTool("plain", &jsonschema.Schema{Type: "object"}))

	v, err := r.PresentCall("bash", json.RawMessage(`{"command": "ls", "description": "list"}`))
	if err != nil || v == nil || v.Terminal.Command != "ls" {
		t.Fatalf("view %+v, err %v", v, err)
	}
	v, err = r.PresentResult("bash", json.RawMessage(`{"command": "ls", "description": "list"}`), TextResult("a\n"))
	if err != nil || v == nil || v.Terminal.Output != "a\n" {
		t.Fatalf("view %+v, err %v", v, err)
	}
	for _, args := range []string{`{"command": 1}`, `not json`, `[]`, ``} {
		if v, err := r.PresentCall("bash", json.RawMessage(args)); v != nil || err != nil {
			t.Errorf("%s: view %+v, err %v", args, v, err)
		}
	}
	v, err = r.PresentCall("bash", json.RawMessage(`{"command": "panic", "description": "d"}`))
	if v != nil || err == nil || !strings.Contains(err.Error(), "presenter bug") {
		t.Fatalf("panicking presenter: view %+v, err %v", v, err)
	}
	if v, err := r.PresentCall("plain", nil); v != nil || err != nil {
		t.Fatal("a tool without presenters has a view")
	}
	if v, err := r.PresentCall("unknown", nil); v != nil || err != nil {
		t.Fatal("an unknown tool has a view")
	}
}

// TestConcurrency runs calls while tools and middleware come and go.
func TestConcurrency(t *testing.T) {
	r := newRegistry(t, echoTool("stable", &jsonschema.Schema{Type: "object"}))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 4 {
		wg.Go(func() {
			name := fmt.Sprintf("flaky%d", i)
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = r.Register(echoTool(name, &jsonschema.Schema{Type: "object"}))
				remove := r.UsePre(func(ctx context.Context, c Call, next PreNext) Decision { return next(ctx, c) })
				removePost := r.UsePost(func(ctx context.Context, c Call, res Result, next PostNext) PostDecision { return next(ctx, c, res) })
				r.List()
				remove()
				removePost()
				r.Remove(name)
			}
		})
	}
	var calls sync.WaitGroup
	for i := range 8 {
		calls.Go(func() {
			for j := range 300 {
				name := "stable"
				if j%2 == 1 {
					name = fmt.Sprintf("flaky%d", i%4)
				}
				res := r.Execute(context.Background(), Call{Name: name, Args: json.RawMessage(`{}`)})
				if name == "stable" && res.Text() != "ran {}" {
					t.Errorf("stable: %+v", res)
				}
				if name != "stable" && res.Text() != "ran {}" && res.Code != CodeUnknownTool {
					t.Errorf("%s: %+v", name, res)
				}
			}
		})
	}
	calls.Wait()
	close(stop)
	wg.Wait()
}

func TestIsInteger(t *testing.T) {
	for n, want := range map[string]bool{
		"0": true, "-0": true, "0.0": true, "7": true, "-7": true, "2.0": true, "2.50": false, "1.5": false,
		"1e400": true, "1E2": true, "1.5e1": true, "1.25e1": false, "15e-1": false, "150e-1": true, "1500e-2": true,
		"100000000000000000000.5": false, "18446744073709551617.5": false, "18446744073709551617": true,
		"1e-2147483649": false, "1e1000000000": true, "1e-99999999999999999999": false, "1e+99999999999999999999": true,
		"0e-5": true, "0.000e99999999999999999999": true, "120e-1": true, "123e-1": false,
	} {
		if got := isInteger(json.Number(n)); got != want {
			t.Errorf("isInteger(%s) = %v, want %v", n, got, want)
		}
	}
	huge := json.Number(strings.Repeat("9", 2<<20) + ".5")
	if isInteger(huge) {
		t.Error("a 2 MiB number with a fraction is an integer")
	}
}

// TestReplacedArguments: the tool runs the arguments the waterfall settled
// on, validated again; post-execute and the result see them.
func TestReplacedArguments(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "number"}}}
	var ran, posted string
	r := newRegistry(t, Definition{Name: "t", Parameters: schema, Execute: func(_ context.Context, c Call) (Result, error) {
		ran = string(c.Args)
		return TextResult("ok"), nil
	}})
	replace := `{"n": 2}`
	r.UsePre(func(ctx context.Context, c Call, next PreNext) Decision {
		c.Args = json.RawMessage(replace)
		return next(ctx, c)
	})
	r.UsePost(func(ctx context.Context, c Call, res Result, next PostNext) PostDecision {
		posted = string(c.Args)
		return next(ctx, c, res)
	})
	res := r.Execute(context.Background(), Call{Name: "t", Args: json.RawMessage(`{"n": 1}`)})
	if ran != replace || posted != replace || string(res.Args) != replace || !res.Executed {
		t.Errorf("ran %s, post-execute saw %s, result %+v", ran, posted, res)
	}
	replace, ran = `{"n": "two"}`, ""
	res = r.Execute(context.Background(), Call{Name: "t", Args: json.RawMessage(`{"n": 1}`)})
	if ran != "" || res.Text() != `Error: invalid arguments: "n" must be a number` || res.Executed {
		t.Errorf("invalid replacement: ran %q, %+v", ran, res)
	}
	// Unchanged arguments are not reported.
	replace = `{"n": 1}`
	if res := r.Execute(context.Background(), Call{Name: "t", Args: json.RawMessage(`{"n": 1}`)}); res.Args != nil {
		t.Errorf("unchanged arguments reported: %s", res.Args)
	}
}
