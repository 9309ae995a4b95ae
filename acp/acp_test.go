package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/acp"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/internal/stacktest"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// schemaFile is the official ACP v1 schema, installed by .ci/run from npm
// (@agentclientprotocol/sdk); DSH_ACP_SCHEMA overrides the path.
func schemaFile() string {
	if p := os.Getenv("DSH_ACP_SCHEMA"); p != "" {
		return p
	}
	return filepath.Join("..", ".ci", "node", "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json")
}

var (
	schemaOnce sync.Once
	schemaRoot struct {
		Schema string          `json:"$schema"`
		Defs   json.RawMessage `json:"$defs"`
	}
	schemaAbsent bool
	schemaErr    error
	schemaMu     sync.Mutex
	schemas      = map[string]*jsonschema.Resolved{}
)

// defSchema is the schema's definition name, or nil when the file is absent.
func defSchema(t *testing.T, name string) *jsonschema.Resolved {
	t.Helper()
	schemaOnce.Do(func() {
		data, err := os.ReadFile(schemaFile())
		if errors.Is(err, os.ErrNotExist) {
			schemaAbsent = true
			return
		}
		if err == nil {
			err = json.Unmarshal(data, &schemaRoot)
		}
		schemaErr = err
	})
	if schemaErr != nil {
		t.Fatalf("ACP schema %s: %v", schemaFile(), schemaErr)
	}
	if schemaAbsent {
		return nil
	}
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if r, ok := schemas[name]; ok {
		return r
	}
	top, _ := json.Marshal(map[string]any{"$schema": schemaRoot.Schema, "$ref": "#/$defs/" + name, "$defs": schemaRoot.Defs})
	var s jsonschema.Schema
	if err := json.Unmarshal(top, &s); err != nil {
		t.Fatalf("ACP schema %s: %v", name, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("ACP schema %s: %v", name, err)
	}
	schemas[name] = r
	return r
}

// notificationSchema is the schema's SessionNotification (the params of
// session/update), or nil when the file is absent.
func notificationSchema(t *testing.T) *jsonschema.Resolved {
	return defSchema(t, "SessionNotification")
}

// TestSchemaPresent makes a missing schema visible (the payload checks
// below then skip validation); .ci/run fails before the tests without it.
func TestSchemaPresent(t *testing.T) {
	s := notificationSchema(t)
	if s == nil {
		t.Skipf("%s is absent: payloads are not validated against the ACP schema (bash .ci/acp-client.sh installs it)", schemaFile())
	}
	// The validator refuses what ACP does not allow.
	for _, bad := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","kind":"teleport"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"done"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"terminal"}]}}`,
		`{"update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t"}}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(bad), &v); err != nil {
			t.Fatal(err)
		}
		if s.Validate(v) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}

// wire marshals a notification, checks it against the ACP schema and
// returns its canonical JSON (keys sorted).
func wire(t *testing.T, n acpsdk.SessionNotification) string {
	t.Helper()
	data, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if s := notificationSchema(t); s != nil {
		if err := s.Validate(v); err != nil {
			t.Errorf("payload does not validate against the ACP schema: %v\n%s", err, data)
		}
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// canonical re-marshals a JSON text with sorted keys.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expected JSON %s: %v", s, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func expect(t *testing.T, what string, n acpsdk.SessionNotification, want string) {
	t.Helper()
	if got, want := wire(t, n), canonical(t, want); got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// tools is the bash tool (real executor) plus sample tools: a generic
// "read_file" card, one with an unknown kind, and one whose presenters
// panic.
func tools(t *testing.T) *tool.Registry {
	t.Helper()
	reg := stacktest.Must(t, config.Local{}).Tools
	path := func(args map[string]any) string { s, _ := args["path"].(string); return s }
	pathSchema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"path": {Type: "string"}}, Required: []string{"path"}}
	run := func(tool.Call) (tool.Result, error) { return tool.TextResult("ok"), nil }
	for _, d := range []tool.Definition{
		{Name: "read_file", Parameters: pathSchema, Presenters: tool.Presenters{
			Call: func(args map[string]any) *tool.View {
				return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: "Read " + path(args), Kind: "read", RawInput: args}}
			},
			Result: func(args map[string]any, res tool.Result) *tool.View {
				return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: "Read " + path(args), Content: append([]tool.Content{{Type: "text"}}, res.Content...)}}
			},
		}},
		{Name: "odd_kind", Parameters: pathSchema, Presenters: tool.Presenters{
			Call: func(map[string]any) *tool.View {
				return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: "odd", Kind: "teleport"}}
			},
			// A terminal result for a call that was not a terminal.
			Result: func(map[string]any, tool.Result) *tool.View {
				return &tool.View{Kind: tool.ViewTerminal, Terminal: &tool.TerminalView{Output: "x", ExitCode: 1}}
			},
		}},
		{Name: "panicky", Parameters: pathSchema, Presenters: tool.Presenters{
			Call:   func(map[string]any) *tool.View { panic("call presenter broke") },
			Result: func(map[string]any, tool.Result) *tool.View { panic("result presenter broke") },
		}},
		// A generic view whose rawInput JSON cannot encode, by path.
		{Name: "bad_input", Parameters: pathSchema, Presenters: tool.Presenters{
			Call: func(args map[string]any) *tool.View {
				raw := map[string]any{"nan": math.NaN(), "func": func() {}, "raw": json.RawMessage(`{oops`), "ok": "fine"}[path(args)]
				return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: "Bad", Kind: "read", RawInput: raw}}
			},
		}},
		// A generic view with a blank title (the path).
		{Name: "blank_title", Parameters: pathSchema, Presenters: tool.Presenters{
			Call: func(args map[string]any) *tool.View {
				return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Title: path(args), Kind: "read", RawInput: args}}
			},
		}},
		// A result presenter that shows what it sees beyond the content.
		{Name: "peek", Parameters: pathSchema, Presenters: tool.Presenters{
			Result: func(_ map[string]any, res tool.Result) *tool.View {
				seen := fmt.Sprintf("content=%d isError=%v code=%q structured=%v notes=%q", len(res.Content), res.IsError, res.Code, res.Structured, res.Notes)
				return &tool.View{Kind: tool.ViewGeneric, Generic: &tool.GenericView{Content: []tool.Content{tool.TextContent(seen)}}}
			},
		}},
	} {
		d.Description = d.Name
		d.Execute = func(_ context.Context, c tool.Call) (tool.Result, error) { return run(c) }
		if err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

var terminalCaps = acpsdk.ClientCapabilities{Meta: map[string]any{"terminal_output": true}}

func presenter(t *testing.T, reg *tool.Registry, cwd string, caps acpsdk.ClientCapabilities) (*acp.Presenter, *[]error) {
	t.Helper()
	var errs []error
	return acp.NewPresenter(reg, acp.Session{ID: "s1", Cwd: cwd, Capabilities: caps}, func(err error) { errs = append(errs, err) }), &errs
}

func args(kv ...any) json.RawMessage {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func text(s string) tool.Result { return tool.TextResult(s) }

func TestTerminalOutputCapability(t *testing.T) {
	for _, tc := range []struct {
		caps acpsdk.ClientCapabilities
		want bool
	}{
		{acpsdk.ClientCapabilities{}, false},
		{terminalCaps, true},
		{acpsdk.ClientCapabilities{Meta: map[string]any{"terminal_output": "true"}}, false},
		{acpsdk.ClientCapabilities{Meta: map[string]any{"terminal_output": 1}}, false},
		{acpsdk.ClientCapabilities{Meta: map[string]any{"terminal_output": false}}, false},
	} {
		if got := acp.TerminalOutput(tc.caps); got != tc.want {
			t.Errorf("TerminalOutput(%v) = %v", tc.caps.Meta, got)
		}
	}
}

func TestForegroundTerminal(t *testing.T) {
	reg := tools(t)
	a := args("command", "make test", "description", "Run the tests")
	p, _ := presenter(t, reg, "/work", terminalCaps)
	expect(t, "call", p.Call("bash", "c1", a), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"c1","title":"make test","kind":"execute","status":"in_progress",
		"rawInput":"make test",
		"content":[{"type":"content","content":{"type":"text","text":"Run the tests"}},{"type":"terminal","terminalId":"c1"}],
		"_meta":{"terminal_info":{"terminal_id":"c1","cwd":"/work"}}}}`)
	expect(t, "result", p.Result("bash", "c1", a, text("ok\n")), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed",
		"_meta":{"terminal_output":{"terminal_id":"c1","data":"ok\n"},"terminal_exit":{"terminal_id":"c1","exit_code":0}}}}`)

	// Without the capability: a plain execute card, then a console block.
	p, _ = presenter(t, reg, "/work", acpsdk.ClientCapabilities{})
	expect(t, "call without the capability", p.Call("bash", "c1", a), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"c1","title":"make test","kind":"execute","status":"in_progress",
		"rawInput":"make test",
		"content":[{"type":"content","content":{"type":"text","text":"Run the tests"}}]}}`)
	expect(t, "result without the capability", p.Result("bash", "c1", a, text("FAIL x\n\n[exit code: 2]")), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed",
		"content":[{"type":"content","content":{"type":"text","text":"`+"```console\\nFAIL x\\n\\n[exit code: 2]\\n```"+`"}}]}}`)

	// Without a description (schema-valid, empty): no description block.
	noDesc := args("command", "ls", "description", "")
	p, _ = presenter(t, reg, "/work", terminalCaps)
	expect(t, "call without a description", p.Call("bash", "c2", noDesc), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"c2","title":"ls","kind":"execute","status":"in_progress","rawInput":"ls",
		"content":[{"type":"terminal","terminalId":"c2"}],
		"_meta":{"terminal_info":{"terminal_id":"c2","cwd":"/work"}}}}`)
	p, _ = presenter(t, reg, "/work", acpsdk.ClientCapabilities{})
	expect(t, "call without a description or the capability", p.Call("bash", "c2", noDesc), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"c2","title":"ls","kind":"execute","status":"in_progress","rawInput":"ls"}}`)
}

func TestTerminalCwd(t *testing.T) {
	reg := tools(t)
	for _, tc := range []struct {
		workdir, session string
		want             string // "" for no cwd key
	}{
		{"/srv/app", "/work", "/srv/app"},
		// An absolute workdir is verbatim: the bash tool runs it as given.
		{"/srv/app/../lib", "", "/srv/app/../lib"},
		{"/srv//app/", "/work", "/srv//app/"},
		{"/srv/app", "rel", "/srv/app"},
		{"sub/dir", "/work", "/work/sub/dir"},
		{"../up", "/work/repo", "/work/up"},
		{"sub", "", ""},
		{"", "/work", "/work"},
		{"", "", ""},
		// A relative session cwd counts as none.
		{"sub", "rel", ""},
		{"", "rel", ""},
	} {
		kv := []any{"command", "pwd", "description", "d"}
		if tc.workdir != "" {
			kv = append(kv, "workdir", tc.workdir)
		}
		p, _ := presenter(t, reg, tc.session, terminalCaps)
		info := `{"terminal_id":"c"}`
		if tc.want != "" {
			info = `{"terminal_id":"c","cwd":"` + tc.want + `"}`
		}
		expect(t, "workdir "+tc.workdir+" session "+tc.session, p.Call("bash", "c", args(kv...)), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call","toolCallId":"c","title":"pwd","kind":"execute","status":"in_progress","rawInput":"pwd",
			"content":[{"type":"content","content":{"type":"text","text":"d"}},{"type":"terminal","terminalId":"c"}],
			"_meta":{"terminal_info":`+info+`}}}`)
	}
}

func TestTerminalExit(t *testing.T) {
	reg := tools(t)
	a := args("command", "x", "description", "d")
	for _, tc := range []struct{ output, exit string }{
		{"hi\n", `{"terminal_id":"c","exit_code":0}`},
		{"(no output)\n[exit code: 3]", `{"terminal_id":"c","exit_code":3}`},
		{"out\n[stderr]\nerr\n[exit code: 1]", `{"terminal_id":"c","exit_code":1}`},
		{"(no output)\n[timed out after 100ms]\n[killed by signal: SIGTERM]", `{"terminal_id":"c","signal":"SIGTERM"}`},
		{"(no output)\n[killed by signal: SIGKILL]", `{"terminal_id":"c","signal":"SIGKILL"}`},
		// Marker-like text without the leading newline is output.
		{"[exit code: 3]", `{"terminal_id":"c","exit_code":0}`},
	} {
		p, _ := presenter(t, reg, "", terminalCaps)
		p.Call("bash", "c", a)
		data, _ := json.Marshal(tc.output)
		expect(t, "result "+tc.output, p.Result("bash", "c", a, text(tc.output)), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed",
			"_meta":{"terminal_output":{"terminal_id":"c","data":`+string(data)+`},"terminal_exit":`+tc.exit+`}}}`)

		// Without the capability: the output in a console fence, however
		// the command ended.
		p, _ = presenter(t, reg, "", acpsdk.ClientCapabilities{})
		p.Call("bash", "c", a)
		fenced, _ := json.Marshal(tool.Fence(tc.output))
		expect(t, "result without the capability "+tc.output, p.Result("bash", "c", a, text(tc.output)), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed",
			"content":[{"type":"content","content":{"type":"text","text":`+string(fenced)+`}}]}}`)
	}
}

func TestBackgroundAndErrors(t *testing.T) {
	reg := tools(t)
	bg := args("command", "npm run dev", "description", "Start the dev server", "run_in_background", true)
	for _, caps := range []acpsdk.ClientCapabilities{terminalCaps, {}} {
		p, _ := presenter(t, reg, "/work", caps)
		expect(t, "background call", p.Call("bash", "b1", bg), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call","toolCallId":"b1","title":"npm run dev","kind":"execute","status":"in_progress",
			"rawInput":"npm run dev",
			"content":[{"type":"content","content":{"type":"text","text":"Start the dev server"}}]}}`)
		expect(t, "background result", p.Result("bash", "b1", bg, text("started background task bash-1")), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call_update","toolCallId":"b1","status":"completed",
			"content":[{"type":"content","content":{"type":"text","text":"`+"```console\\nstarted background task bash-1\\n```"+`"}}]}}`)

		// An error result of a foreground call: failed, a console block
		// (it replaces the terminal).
		fg := args("command", "ls", "description", "d", "workdir", "/nope")
		p.Call("bash", "e1", fg)
		expect(t, "error result", p.Result("bash", "e1", fg, tool.ErrorResult(tool.CodeFailed, "workdir /nope does not exist")), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call_update","toolCallId":"e1","status":"failed",
			"content":[{"type":"content","content":{"type":"text","text":"`+"```console\\nError: workdir /nope does not exist\\n```"+`"}}]}}`)
	}
}

func TestGenericAndFallbacks(t *testing.T) {
	reg := tools(t)
	p, errs := presenter(t, reg, "/work", terminalCaps)

	// A generic view: its kind, rawInput and text blocks; empty blocks left out.
	rf := args("path", "go.mod")
	expect(t, "generic call", p.Call("read_file", "r1", rf), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read go.mod","kind":"read","status":"in_progress","rawInput":{"path":"go.mod"}}}`)
	expect(t, "generic result", p.Result("read_file", "r1", rf, text("module x")), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"r1","status":"completed",
		"content":[{"type":"content","content":{"type":"text","text":"module x"}}]}}`)

	// An unknown kind is "other"; a terminal result for a call that was
	// not a terminal falls back to the result's text.
	expect(t, "unknown kind", p.Call("odd_kind", "o1", rf), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"o1","title":"odd","kind":"other","status":"in_progress"}}`)
	expect(t, "terminal result of a generic call", p.Result("odd_kind", "o1", rf, text("ok")), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"o1","status":"completed",
		"content":[{"type":"content","content":{"type":"text","text":"ok"}}]}}`)

	// Malformed arguments: no view, the generic fallback.
	for _, tc := range []struct {
		args     string
		rawInput string
	}{
		{`{"command":5,"description":"d"}`, `{"command":5,"description":"d"}`},
		{`{"command":"ls"}`, `{"command":"ls"}`},
		{`{oops`, `"{oops"`},
		{``, `{}`},
		{" \t\r\n ", `{}`},
		{`null`, `{}`},
		{` null `, `{}`},
		{`[1,2]`, `[1,2]`},
		{`{} x`, `"{} x"`},
		{`{}{}`, `"{}{}"`},
	} {
		expect(t, "malformed "+tc.args, p.Call("bash", "m1", json.RawMessage(tc.args)), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call","toolCallId":"m1","title":"bash","kind":"other","status":"in_progress","rawInput":`+tc.rawInput+`}}`)
		expect(t, "result of malformed "+tc.args, p.Result("bash", "m1", json.RawMessage(tc.args), tool.ErrorResult(tool.CodeInvalidArgs, "invalid arguments")), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call_update","toolCallId":"m1","status":"failed",
			"content":[{"type":"content","content":{"type":"text","text":"Error: invalid arguments"}}]}}`)
	}
	// An unregistered tool: the fallback too.
	expect(t, "unknown tool", p.Call("gone", "g1", rf), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"g1","title":"gone","kind":"other","status":"in_progress","rawInput":{"path":"go.mod"}}}`)
	if len(*errs) != 0 {
		t.Errorf("errors reported without a panic: %v", *errs)
	}

	// A panicking presenter: the fallback, and the panic reported.
	expect(t, "panicking call presenter", p.Call("panicky", "p1", rf), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"p1","title":"panicky","kind":"other","status":"in_progress","rawInput":{"path":"go.mod"}}}`)
	expect(t, "panicking result presenter", p.Result("panicky", "p1", rf, text("done")), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"p1","status":"completed",
		"content":[{"type":"content","content":{"type":"text","text":"done"}}]}}`)
	if len(*errs) != 2 || !strings.Contains((*errs)[0].Error(), "call presenter broke") || !strings.Contains((*errs)[1].Error(), "result presenter broke") {
		t.Errorf("reported errors = %v, want the two panics", *errs)
	}
	// A nil error hook is fine.
	q := acp.NewPresenter(reg, acp.Session{ID: "s1"}, nil)
	q.Call("panicky", "p2", rf)
}

// TestUnmarshalableRawInput: a generic view whose rawInput JSON cannot
// encode gets the fallback (the update would not marshal), and the error
// is reported.
func TestUnmarshalableRawInput(t *testing.T) {
	reg := tools(t)
	for _, what := range []string{"nan", "func", "raw"} {
		p, errs := presenter(t, reg, "/work", terminalCaps)
		expect(t, "rawInput "+what, p.Call("bad_input", "b1", args("path", what)), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call","toolCallId":"b1","title":"bad_input","kind":"other","status":"in_progress","rawInput":{"path":"`+what+`"}}}`)
		if len(*errs) != 1 || !strings.Contains((*errs)[0].Error(), "rawInput") {
			t.Errorf("rawInput %s: reported errors = %v, want one about rawInput", what, *errs)
		}
	}
	// A rawInput that marshals is the view's.
	p, errs := presenter(t, reg, "/work", terminalCaps)
	expect(t, "rawInput that marshals", p.Call("bad_input", "b2", args("path", "ok")), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"b2","title":"Bad","kind":"read","status":"in_progress","rawInput":"fine"}}`)
	if len(*errs) != 0 {
		t.Errorf("errors reported for a rawInput that marshals: %v", *errs)
	}
}

// TestBlankTitle: a blank title is the tool name; a terminal card's
// rawInput stays the command.
func TestBlankTitle(t *testing.T) {
	reg := tools(t)
	p, _ := presenter(t, reg, "/work", terminalCaps)
	for _, title := range []string{"", " \t\n"} {
		in, _ := json.Marshal(map[string]string{"path": title})
		expect(t, fmt.Sprintf("generic title %q", title), p.Call("blank_title", "t1", in), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call","toolCallId":"t1","title":"blank_title","kind":"read","status":"in_progress","rawInput":`+string(in)+`}}`)
		command, _ := json.Marshal(title)
		expect(t, fmt.Sprintf("command %q", title), p.Call("bash", "t2", args("command", title, "description", "d")), `{"sessionId":"s1","update":{
			"sessionUpdate":"tool_call","toolCallId":"t2","title":"bash","kind":"execute","status":"in_progress","rawInput":`+string(command)+`,
			"content":[{"type":"content","content":{"type":"text","text":"d"}},{"type":"terminal","terminalId":"t2"}],
			"_meta":{"terminal_info":{"terminal_id":"t2","cwd":"/work"}}}}`)
	}
}

// TestFallbackNumbers: the fallback's rawInput keeps numbers as written;
// the SDK's encoding of the update then passes them through float64 (the
// package doc says so).
func TestFallbackNumbers(t *testing.T) {
	reg := tools(t)
	p, _ := presenter(t, reg, "", terminalCaps)
	n := p.Call("gone", "g1", json.RawMessage(`{"id":12345678901234567890,"f":1.50}`))
	in, _ := n.Update.ToolCall.RawInput.(map[string]any)
	if in["id"] != json.Number("12345678901234567890") || in["f"] != json.Number("1.50") {
		t.Errorf("rawInput = %#v, want the numbers as written", n.Update.ToolCall.RawInput)
	}
	variant, err := json.Marshal(n.Update.ToolCall)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"rawInput":{"f":1.50,"id":12345678901234567890}`; !strings.Contains(string(variant), want) {
		t.Errorf("the tool_call's JSON %s lacks %s", variant, want)
	}
	update, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"rawInput":{"f":1.5,"id":12345678901234567000}`; !strings.Contains(string(update), want) {
		t.Errorf("the SDK's encoding %s lacks %s: the package doc is out of date", update, want)
	}
	wire(t, n)
}

// TestResultFields: a result presenter sees only what a log keeps of a
// result (Content, IsError, Code).
func TestResultFields(t *testing.T) {
	reg := tools(t)
	p, _ := presenter(t, reg, "", terminalCaps)
	a := args("path", "x")
	p.Call("peek", "k1", a)
	res := tool.Result{
		Content: []tool.Content{tool.TextContent("out")}, IsError: true, Code: tool.CodeFailed,
		Structured: map[string]any{"exitCode": 1}, Notes: []string{"a note"},
	}
	expect(t, "result", p.Result("peek", "k1", a, res), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"k1","status":"failed",
		"content":[{"type":"content","content":{"type":"text","text":"content=1 isError=true code=\"TOOL_FAILED\" structured=<nil> notes=[]"}}]}}`)
}

// TestStoredResult: what a log keeps of a result, as JSON.
func TestStoredResult(t *testing.T) {
	res := tool.Result{
		Content: []tool.Content{tool.TextContent("Error: x")}, IsError: true, Code: tool.CodeFailed,
		Structured: map[string]any{"exitCode": 1}, Notes: []string{"a note"},
	}
	e := acp.Entry{Name: "bash", CallID: "c1", Args: `{"command":"ls"}`, Result: acp.StoreResult(res)}
	res.Content[0].Text = "changed later"
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"bash","callId":"c1","args":"{\"command\":\"ls\"}","result":{"content":[{"type":"text","text":"Error: x"}],"isError":true,"code":"TOOL_FAILED"}}`
	if string(data) != want {
		t.Errorf("stored entry:\n got %s\nwant %s", data, want)
	}
	var back acp.Entry
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Result.Result(), (tool.Result{Content: []tool.Content{tool.TextContent("Error: x")}, IsError: true, Code: tool.CodeFailed}); !reflect.DeepEqual(got, want) {
		t.Errorf("stored result = %#v, want %#v", got, want)
	}
	// A success keeps its content only.
	if data, _ := json.Marshal(acp.StoreResult(text("ok"))); string(data) != `{"content":[{"type":"text","text":"ok"}]}` {
		t.Errorf("stored success = %s", data)
	}
}

func TestOrphans(t *testing.T) {
	reg := tools(t)
	a := args("command", "echo hi", "description", "d")
	p, _ := presenter(t, reg, "/work", terminalCaps)
	rawText := `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed",
		"content":[{"type":"content","content":{"type":"text","text":"hi\n"}}]}}`
	// A result whose call was never rendered: no terminal _meta.
	expect(t, "unknown call id", p.Result("bash", "c1", a, text("hi\n")), rawText)
	// A second result for one call id: the terminal already exited.
	p.Call("bash", "c1", a)
	first := wire(t, p.Result("bash", "c1", a, text("hi\n")))
	if !strings.Contains(first, "terminal_exit") {
		t.Errorf("first result %s has no terminal_exit", first)
	}
	expect(t, "second result", p.Result("bash", "c1", a, text("hi\n")), rawText)
	// No text at all: the content key is left out.
	expect(t, "empty result", p.Result("bash", "zz", a, tool.Result{}), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"zz","status":"completed"}}`)
	// A call forgotten (its turn was cancelled): its result is an orphan.
	p.Call("bash", "f1", a)
	p.Forget("f1")
	expect(t, "result after Forget", p.Result("bash", "f1", a, text("hi\n")), strings.ReplaceAll(rawText, `"c1"`, `"f1"`))
	p.Forget("never-called")
}

// TestCapabilitySnapshot: the capability is the one at creation, whatever
// happens to the caps map later.
func TestCapabilitySnapshot(t *testing.T) {
	reg := tools(t)
	caps := acpsdk.ClientCapabilities{Meta: map[string]any{"terminal_output": true}}
	p := acp.NewPresenter(reg, acp.Session{ID: "s1", Capabilities: caps}, nil)
	caps.Meta["terminal_output"] = false
	if got := wire(t, p.Call("bash", "c", args("command", "ls", "description", "d"))); !strings.Contains(got, `"terminal"`) {
		t.Errorf("the presenter followed a later change of the caps: %s", got)
	}
}

// TestReplay: a live session with real commands, stored as a log, renders
// the same payloads through a fresh presenter, with and without the
// capability: orphan and repeated results, a call without a result and
// result fields a log does not keep included.
func TestReplay(t *testing.T) {
	reg := tools(t)
	owner := session.New("s1", t.TempDir())
	defer owner.End()
	calls := []struct {
		name string
		args json.RawMessage
	}{
		{"bash", args("command", "echo hi; echo err >&2; exit 2", "description", "Fail on purpose")},
		{"bash", args("command", "pwd", "description", "Where", "workdir", "sub")},
		{"bash", args("command", "kill -TERM $$", "description", "Die")},
		{"bash", args("command", "sleep 1", "description", "Too slow", "timeoutMs", 100)},
		{"read_file", args("path", "go.mod")},
		{"panicky", args("path", "x")},
		{"peek", args("path", "x")},
		{"bash", json.RawMessage(`{"command":`)},
	}
	echo := args("command", "echo hi", "description", "d")
	for _, caps := range []acpsdk.ClientCapabilities{terminalCaps, {}} {
		s := acp.Session{ID: "s1", Cwd: owner.Cwd(), Capabilities: caps}
		live := acp.NewPresenter(reg, s, nil)
		var log []acp.Entry
		var rendered []string
		call := func(name, id string, a json.RawMessage) {
			rendered = append(rendered, wire(t, live.Call(name, id, a)))
			log = append(log, acp.Entry{Name: name, CallID: id, Args: string(a)})
		}
		result := func(name, id string, a json.RawMessage, res tool.Result) {
			rendered = append(rendered, wire(t, live.Result(name, id, a, res)))
			log = append(log, acp.Entry{Name: name, CallID: id, Args: string(a), Result: acp.StoreResult(res)})
		}
		for i, c := range calls {
			id := "call-" + string(rune('a'+i))
			call(c.name, id, c.args)
			res := reg.Execute(t.Context(), tool.Call{Name: c.name, Args: c.args, Session: owner})
			// What a log does not keep.
			if res.Structured == nil {
				res.Structured = map[string]any{"i": i}
			}
			res.Notes = append(res.Notes, "a note")
			result(c.name, id, c.args, res)
		}
		// A result for an id never announced, a second result for one id,
		// and a call that never gets a result.
		result("bash", "orphan", echo, text("hi\n"))
		result("bash", "call-a", calls[0].args, text("again\n"))
		call("bash", "pending", echo)

		// The log survives storage as JSON.
		data, err := json.Marshal(log)
		if err != nil {
			t.Fatal(err)
		}
		var stored []acp.Entry
		if err := json.Unmarshal(data, &stored); err != nil {
			t.Fatal(err)
		}
		replayed := acp.Replay(reg, s, stored, nil)
		if len(replayed) != len(rendered) {
			t.Fatalf("replay rendered %d payloads, live %d", len(replayed), len(rendered))
		}
		for i := range replayed {
			if got := wire(t, replayed[i]); got != rendered[i] {
				t.Errorf("payload %d:\nlive   %s\nreplay %s", i, rendered[i], got)
			}
		}
		if want := `"exit_code":2`; acp.TerminalOutput(caps) && !strings.Contains(rendered[1], want) {
			t.Errorf("live result %s lacks %s", rendered[1], want)
		}
		n := len(rendered)
		for _, r := range rendered[n-3 : n-1] {
			if strings.Contains(r, "terminal_exit") || strings.Contains(r, "```") {
				t.Errorf("orphan or second result %s is not the raw text", r)
			}
		}
	}
}

// TestConcurrentSessions: several presenters, one per session, each used
// from many goroutines with the same call ids (run with -race): every
// result carries its own call's terminal _meta.
func TestConcurrentSessions(t *testing.T) {
	reg := tools(t)
	const sessions, goroutines, calls = 4, 4, 12
	type pair struct {
		id           string
		code         int
		call, result acpsdk.SessionNotification
	}
	out := make([][]pair, sessions*goroutines)
	a := args("command", "ls", "description", "d")
	var wg sync.WaitGroup
	for s := range sessions {
		sid := fmt.Sprintf("s%d", s)
		p := acp.NewPresenter(reg, acp.Session{ID: acpsdk.SessionId(sid), Cwd: "/w/" + sid, Capabilities: terminalCaps}, nil)
		for g := range goroutines {
			wg.Go(func() {
				for i := range calls {
					id := fmt.Sprintf("g%d-%d", g, i) // the same in every session
					code := (s + g + i) % 5
					c := p.Call("bash", id, a)
					r := p.Result("bash", id, a, text(fmt.Sprintf("%s %s\n[exit code: %d]", sid, id, code)))
					out[s*goroutines+g] = append(out[s*goroutines+g], pair{id, code, c, r})
				}
			})
		}
	}
	wg.Wait()
	for k, pairs := range out {
		sid := fmt.Sprintf("s%d", k/goroutines)
		if len(pairs) != calls {
			t.Fatalf("session %s: %d calls rendered, want %d", sid, len(pairs), calls)
		}
		for _, c := range pairs {
			expect(t, sid+" call "+c.id, c.call, `{"sessionId":"`+sid+`","update":{
				"sessionUpdate":"tool_call","toolCallId":"`+c.id+`","title":"ls","kind":"execute","status":"in_progress","rawInput":"ls",
				"content":[{"type":"content","content":{"type":"text","text":"d"}},{"type":"terminal","terminalId":"`+c.id+`"}],
				"_meta":{"terminal_info":{"terminal_id":"`+c.id+`","cwd":"/w/`+sid+`"}}}}`)
			expect(t, sid+" result "+c.id, c.result, fmt.Sprintf(`{"sessionId":%q,"update":{
				"sessionUpdate":"tool_call_update","toolCallId":%[2]q,"status":"completed",
				"_meta":{"terminal_output":{"terminal_id":%[2]q,"data":"%[1]s %[2]s\n[exit code: %[3]d]"},"terminal_exit":{"terminal_id":%[2]q,"exit_code":%[3]d}}}}`, sid, c.id, c.code))
		}
	}
}

// agentClient drives the example agent (serveExampleAgent) in-process with
// raw JSON-RPC lines, like Example, and checks every session/update's
// params against the ACP schema and the SDK's SessionNotification.
type agentClient struct {
	t     *testing.T
	in    io.Writer
	lines <-chan []byte
	id    int
}

type rpcMessage struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func startExampleAgent(t *testing.T) *agentClient {
	t.Helper()
	clientOut, agentIn := io.Pipe()
	agentOut, clientIn := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serveExampleAgent(clientOut, clientIn)
		clientIn.Close()
		done <- err
	}()
	lines := make(chan []byte, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(agentOut)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- bytes.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() {
		agentIn.Close()
		for range lines {
		}
		if err := <-done; err != nil {
			t.Errorf("the agent: %v", err)
		}
	})
	return &agentClient{t: t, in: agentIn, lines: lines}
}

// send sends a request and returns its id; notify a notification.
func (c *agentClient) send(method string, params any) int {
	c.id++
	c.write(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	return c.id
}

func (c *agentClient) notify(method string, params any) {
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (c *agentClient) write(msg map[string]any) {
	c.t.Helper()
	data, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(data, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the agent's next message, checking a session/update.
func (c *agentClient) next() rpcMessage {
	c.t.Helper()
	var line []byte
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the agent closed its output")
		}
		line = l
	case <-time.After(proctest.Scale(20 * time.Second)):
		c.t.Fatal("no message from the agent within 20s")
	}
	var msg rpcMessage
	if err := json.Unmarshal(line, &msg); err != nil {
		c.t.Fatalf("agent sent %s: %v", line, err)
	}
	if msg.Method == "session/update" {
		var n acpsdk.SessionNotification
		if err := json.Unmarshal(msg.Params, &n); err != nil {
			c.t.Errorf("session/update params do not decode as a SessionNotification: %v\n%s", err, msg.Params)
		}
		if s := notificationSchema(c.t); s != nil {
			var v any
			if err := json.Unmarshal(msg.Params, &v); err != nil {
				c.t.Fatal(err)
			}
			if err := s.Validate(v); err != nil {
				c.t.Errorf("session/update params do not validate against the ACP schema: %v\n%s", err, msg.Params)
			}
		}
	}
	return msg
}

// await returns the response to request id and the session/update params
// received before it.
func (c *agentClient) await(id int) (rpcMessage, []string) {
	c.t.Helper()
	var updates []string
	for {
		msg := c.next()
		if msg.Method == "session/update" {
			updates = append(updates, string(msg.Params))
		}
		if msg.ID != nil && *msg.ID == id && msg.Method == "" {
			return msg, updates
		}
	}
}

// call sends a request and awaits its successful response.
func (c *agentClient) call(method string, params any) (json.RawMessage, []string) {
	c.t.Helper()
	msg, updates := c.await(c.send(method, params))
	if msg.Error != nil {
		c.t.Fatalf("%s: error %s", method, msg.Error)
	}
	return msg.Result, updates
}

// TestExampleAgent drives the example agent in-process, with and without
// terminal_output: prompts, a cancelled prompt, session/load replaying
// what was sent, and session ids that outlive a closed session.
func TestExampleAgent(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps map[string]any
	}{
		{"terminal_output", map[string]any{"_meta": map[string]any{"terminal_output": true}}},
		{"plain", map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startExampleAgent(t)
			init, _ := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": tc.caps})
			var ir acpsdk.InitializeResponse
			if err := json.Unmarshal(init, &ir); err != nil || !ir.AgentCapabilities.LoadSession {
				t.Errorf("initialize result %s: want agentCapabilities.loadSession true (%v)", init, err)
			}
			cwd := t.TempDir()
			newSession := func() string {
				res, _ := c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
				var r acpsdk.NewSessionResponse
				if err := json.Unmarshal(res, &r); err != nil {
					t.Fatal(err)
				}
				return string(r.SessionId)
			}
			prompt := func(sid, command string) int {
				return c.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": command}}})
			}
			stopReason := func(msg rpcMessage) string {
				var r acpsdk.PromptResponse
				if msg.Error != nil || json.Unmarshal(msg.Result, &r) != nil {
					t.Errorf("session/prompt: response %s, error %s", msg.Result, msg.Error)
				}
				return string(r.StopReason)
			}

			s1 := newSession()
			msg, live := c.await(prompt(s1, "echo hello; exit 3"))
			if got := stopReason(msg); got != "end_turn" {
				t.Errorf("stopReason %q, want end_turn", got)
			}
			wantResult := `"content":[{"content":{"text":"` + "```console\\nhello\\n[exit code: 3]\\n```" + `","type":"text"},"type":"content"}]`
			if tc.caps["_meta"] != nil {
				wantResult = `"terminal_exit":{"exit_code":3,"terminal_id":"call-1"}`
			}
			if len(live) != 2 || !strings.Contains(live[0], `"sessionUpdate":"tool_call"`) || !strings.Contains(live[1], wantResult) {
				t.Errorf("prompt updates, want a tool_call and a result with %s:\n%s", wantResult, strings.Join(live, "\n"))
			}

			// session/cancel: the prompt ends cancelled, the client still
			// gets the call's end.
			id := prompt(s1, "sleep 30")
			if msg := c.next(); msg.Method != "session/update" || !strings.Contains(string(msg.Params), `"toolCallId":"call-2"`) {
				t.Fatalf("want the tool_call of call-2, got %+v", msg)
			} else {
				live = append(live, string(msg.Params))
			}
			c.notify("session/cancel", map[string]any{"sessionId": s1})
			msg, updates := c.await(id)
			if got := stopReason(msg); got != "cancelled" {
				t.Errorf("cancelled prompt: stopReason %q, want cancelled", got)
			}
			if len(updates) != 1 || !strings.Contains(updates[0], `"sessionUpdate":"tool_call_update"`) {
				t.Errorf("cancelled prompt: updates %v, want its tool_call_update", updates)
			}
			live = append(live, updates...)

			// session/load replays what the client was sent, in order.
			_, replayed := c.call("session/load", map[string]any{"sessionId": s1, "cwd": cwd, "mcpServers": []any{}})
			if strings.Join(replayed, "\n") != strings.Join(live, "\n") {
				t.Errorf("session/load replayed:\n%s\nlive:\n%s", strings.Join(replayed, "\n"), strings.Join(live, "\n"))
			}
			if msg, _ := c.await(c.send("session/load", map[string]any{"sessionId": "nope", "cwd": cwd, "mcpServers": []any{}})); msg.Error == nil {
				t.Errorf("session/load of an unknown session: %s, want an error", msg.Result)
			}

			// A closed session's id is not given again.
			s2 := newSession()
			c.call("session/close", map[string]any{"sessionId": s1})
			if s3 := newSession(); s3 == s1 || s3 == s2 {
				t.Errorf("sessions %s, %s, then %s after closing %s: an id was reused", s1, s2, s3, s1)
			}
			msg, updates = c.await(prompt(s2, "true"))
			if got := stopReason(msg); got != "end_turn" || len(updates) != 2 {
				t.Errorf("prompt in %s: stopReason %q, %d updates", s2, got, len(updates))
			}
		})
	}
}

// TestTaskScreenCard: a task_output call with screen: true is a terminal
// card whose output is the screen (docs/spec.md §4.2a); without the
// capability, a console block; other reads stay generic cards.
func TestTaskScreenCard(t *testing.T) {
	reg := tools(t)
	a := args("task_id", "bash-2", "screen", true)
	screen := "line 1\nline 2\n[cursor: row 3, col 1]\n[status: running]"
	data, _ := json.Marshal(screen)
	p, _ := presenter(t, reg, "/work", terminalCaps)
	expect(t, "screen call", p.Call("task_output", "s1", a), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"s1","title":"Screen of bash-2","kind":"execute","status":"in_progress",
		"rawInput":"Screen of bash-2","content":[{"type":"terminal","terminalId":"s1"}],
		"_meta":{"terminal_info":{"terminal_id":"s1","cwd":"/work"}}}}`)
	expect(t, "screen result", p.Result("task_output", "s1", a, text(screen)), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"s1","status":"completed",
		"_meta":{"terminal_output":{"terminal_id":"s1","data":`+string(data)+`},"terminal_exit":{"terminal_id":"s1","exit_code":0}}}}`)

	p, _ = presenter(t, reg, "/work", acpsdk.ClientCapabilities{})
	p.Call("task_output", "s2", a)
	fenced, _ := json.Marshal(tool.Fence(screen))
	expect(t, "screen result without the capability", p.Result("task_output", "s2", a, text(screen)), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call_update","toolCallId":"s2","status":"completed",
		"content":[{"type":"content","content":{"type":"text","text":`+string(fenced)+`}}]}}`)

	read := args("task_id", "bash-2")
	expect(t, "a read", p.Call("task_output", "r1", read), `{"sessionId":"s1","update":{
		"sessionUpdate":"tool_call","toolCallId":"r1","title":"Read bash-2","kind":"read","status":"in_progress","rawInput":{"task_id":"bash-2"}}}`)
}
