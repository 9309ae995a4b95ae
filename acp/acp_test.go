package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/acp"
	"github.com/dsh-go/dsh/bash/local"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/host"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
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
	schema     *jsonschema.Resolved // nil when the file is absent
	schemaErr  error
)

// notificationSchema is the schema's SessionNotification (the params of
// session/update), or nil when the file is absent.
func notificationSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	schemaOnce.Do(func() {
		data, err := os.ReadFile(schemaFile())
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if err != nil {
			schemaErr = err
			return
		}
		var root struct {
			Schema string          `json:"$schema"`
			Defs   json.RawMessage `json:"$defs"`
		}
		if schemaErr = json.Unmarshal(data, &root); schemaErr != nil {
			return
		}
		top, _ := json.Marshal(map[string]any{"$schema": root.Schema, "$ref": "#/$defs/SessionNotification", "$defs": root.Defs})
		var s jsonschema.Schema
		if schemaErr = json.Unmarshal(top, &s); schemaErr != nil {
			return
		}
		schema, schemaErr = s.Resolve(nil)
	})
	if schemaErr != nil {
		t.Fatalf("ACP schema %s: %v", schemaFile(), schemaErr)
	}
	return schema
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
	exec, err := local.New(config.Local{GraceMs: 200, SpillDir: t.TempDir(), Env: config.Env{Set: proctest.Set()}})
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	h := host.New()
	t.Cleanup(func() {
		h.Close()
		_ = exec.Close()
	})
	err = errors.Join(
		h.Provide(host.Executor, exec),
		h.Provide(host.Tools, reg),
		h.Provide(host.Prompt, prompt.NewRegistry()),
		h.Load(bashtool.Plugin(bashtool.Config{})),
	)
	if err != nil {
		t.Fatal(err)
	}
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
		{"/srv/app/../lib", "", "/srv/lib"},
		{"sub/dir", "/work", "/work/sub/dir"},
		{"../up", "/work/repo", "/work/up"},
		{"sub", "", ""},
		{"", "/work", "/work"},
		{"", "", ""},
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
		{`null`, `{}`},
		{`[1,2]`, `[1,2]`},
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
// capability.
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
		{"bash", json.RawMessage(`{"command":`)},
	}
	for _, caps := range []acpsdk.ClientCapabilities{terminalCaps, {}} {
		s := acp.Session{ID: "s1", Cwd: owner.Cwd(), Capabilities: caps}
		live := acp.NewPresenter(reg, s, nil)
		var log []acp.Entry
		var rendered []string
		for i, c := range calls {
			id := "call-" + string(rune('a'+i))
			rendered = append(rendered, wire(t, live.Call(c.name, id, c.args)))
			log = append(log, acp.Entry{Name: c.name, CallID: id, Args: string(c.args)})
			res := reg.Execute(t.Context(), tool.Call{Name: c.name, Args: c.args, Session: owner})
			rendered = append(rendered, wire(t, live.Result(c.name, id, c.args, res)))
			log = append(log, acp.Entry{Name: c.name, CallID: id, Args: string(c.args), Result: &res})
		}
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
		if want := `"exit_code":2`; TerminalOutputIn(caps) && !strings.Contains(rendered[1], want) {
			t.Errorf("live result %s lacks %s", rendered[1], want)
		}
	}
}

// TerminalOutputIn is acp.TerminalOutput, named for the test's reading.
func TerminalOutputIn(c acpsdk.ClientCapabilities) bool { return acp.TerminalOutput(c) }

// TestConcurrentSessions: one presenter per session, used from many
// goroutines (run with -race).
func TestConcurrentSessions(t *testing.T) {
	reg := tools(t)
	p := acp.NewPresenter(reg, acp.Session{ID: "s1", Cwd: "/w", Capabilities: terminalCaps}, nil)
	a := args("command", "ls", "description", "d")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				id := string(rune('a'+g)) + "-" + strings.Repeat("x", i%5)
				p.Call("bash", id, a)
				p.Result("bash", id, a, text("ok"))
			}
		})
	}
	wg.Wait()
}
