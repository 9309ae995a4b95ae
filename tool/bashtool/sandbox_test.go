package bashtool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/tool"
)

func sandboxCfg(mode string, network, unsandboxed bool) config.Sandbox {
	return config.Sandbox{Mode: mode, Network: &config.Network{Host: network}, AllowUnsandboxed: &unsandboxed}.WithDefaults()
}

// TestSandboxTexts: the hint line and the description's sentence, byte for
// byte (docs/spec.md §11).
func TestSandboxTexts(t *testing.T) {
	for _, tc := range []struct {
		sb   config.Sandbox
		hint string
		desc string
	}{
		{sandboxCfg(config.SandboxWorkspaceWrite, false, true),
			"[sandbox: writes outside the workspace and network access are blocked; if the sandbox caused this, retry with dangerouslyDisableSandbox: true to ask the user]",
			" Commands run in a workspace-write sandbox: they can write only in the workspace, the configured writable roots and /tmp, and have no network access."},
		{sandboxCfg(config.SandboxWorkspaceWrite, true, false),
			"[sandbox: writes outside the workspace are blocked]",
			" Commands run in a workspace-write sandbox: they can write only in the workspace, the configured writable roots and /tmp."},
		{sandboxCfg(config.SandboxReadOnly, false, false),
			"[sandbox: all writes and network access are blocked]",
			" Commands run in a read-only sandbox: they can write nothing but /tmp, and have no network access."},
		{sandboxCfg(config.SandboxReadOnly, true, true),
			"[sandbox: all writes are blocked; if the sandbox caused this, retry with dangerouslyDisableSandbox: true to ask the user]",
			" Commands run in a read-only sandbox: they can write nothing but /tmp."},
		{config.Sandbox{Mode: config.SandboxWorkspaceWrite, Network: config.DefaultNetwork()}.WithDefaults(),
			"[sandbox: writes outside the workspace are blocked; if the sandbox caused this, retry with dangerouslyDisableSandbox: true to ask the user]",
			" Commands run in a workspace-write sandbox: they can write only in the workspace, the configured writable roots and /tmp, and reach only the hosts the user allows."},
	} {
		if got := hintLine(tc.sb); got != tc.hint {
			t.Errorf("hint %+v:\n got %q\nwant %q", tc.sb, got, tc.hint)
		}
		if got := sandboxSentence(tc.sb); got != tc.desc {
			t.Errorf("sentence %+v:\n got %q\nwant %q", tc.sb, got, tc.desc)
		}
	}
	if sandboxSentence(config.Sandbox{}) != "" {
		t.Error("a sentence without a sandbox")
	}
}

// TestNotSandboxedSentence: where mode auto found no backend the
// description ends with the exact sentence, and only then: not with mode
// off, not with a sandbox; an unresolved auto is taken as off.
func TestNotSandboxedSentence(t *testing.T) {
	cfg := config.Bash{}.WithDefaults()
	plain := New(nil, nil, cfg).Definition().Description
	if got := New(nil, nil, cfg, WithNoSandboxHere()).Definition().Description; got != plain+" Commands are not sandboxed here." {
		t.Errorf("no backend here: %q", got)
	}
	for _, sb := range []config.Sandbox{{Mode: config.SandboxOff}, {Mode: config.SandboxAuto}} {
		tl := New(nil, nil, cfg, WithSandbox(sb)).Definition()
		if tl.Description != plain || tl.Parameters.Properties[escapeParam] != nil {
			t.Errorf("mode %q: %q, escape %v", sb.Mode, tl.Description, tl.Parameters.Properties[escapeParam])
		}
	}
	if d := New(nil, nil, cfg, WithSandbox(config.Sandbox{Mode: config.SandboxWorkspaceWrite})).Definition().Description; strings.Contains(d, "not sandboxed") {
		t.Errorf("sandboxed: %q", d)
	}
}

// TestSandboxHintWhen: the hint goes on a sandboxed failure with a
// telltale phrase in either stream, head or tail, and on nothing else.
func TestSandboxHintWhen(t *testing.T) {
	one, zero := 1, 0
	tl := &Tool{sandbox: sandboxCfg(config.SandboxWorkspaceWrite, false, true)}
	ro := bash.Output{Text: "touch: cannot touch '/etc/x': Read-only file system\n"}
	for _, tc := range []struct {
		name    string
		tool    *Tool
		req     bash.Request
		code    *int
		signal  string
		streams []bash.Output
		hint    bool
	}{
		{"EROFS, exit 1", tl, bash.Request{}, &one, "", []bash.Output{ro}, true},
		{"in the head", tl, bash.Request{}, &one, "", []bash.Output{{Head: "Permission denied\n", Text: "…"}}, true},
		{"stderr", tl, bash.Request{}, &one, "", []bash.Output{{}, {Text: "curl: (6) Could not resolve host: x"}}, true},
		{"signal", tl, bash.Request{}, nil, "SIGKILL", []bash.Output{{Text: "Operation not permitted"}}, true},
		{"exit 0", tl, bash.Request{}, &zero, "", []bash.Output{ro}, false},
		{"ordinary failure", tl, bash.Request{}, &one, "", []bash.Output{{Text: "ls: cannot access 'x': No such file or directory"}}, false},
		{"unsandboxed call", tl, bash.Request{Unsandboxed: true}, &one, "", []bash.Output{ro}, false},
		{"no sandbox", &Tool{}, bash.Request{}, &one, "", []bash.Output{ro}, false},
	} {
		if got := tc.tool.hint(tc.req, tc.code, tc.signal, tc.streams...) != ""; got != tc.hint {
			t.Errorf("%s: hint %v, want %v", tc.name, got, tc.hint)
		}
	}
	code := 1
	r := bash.Result{ExitCode: &code, TimedOut: true, Timeout: 5 * time.Millisecond, Stderr: ro}
	want := "[stderr]\n" + ro.Text + "[sandbox: x]\n[timed out after 5ms]\n[exit code: 1]"
	if got := render(r, "[sandbox: x]"); got != want {
		t.Errorf("render with a hint:\n got %q\nwant %q", got, want)
	}
	if got := withHint("out", "[sandbox: x]"); got != "out\n[sandbox: x]" {
		t.Errorf("withHint: %q", got)
	}
}

// TestSandboxSchemaAndEscape: dangerouslyDisableSandbox is offered last
// while a sandbox allows it. The tool runs a call that sends it outside the
// sandbox only with the user's consent in its context (the permissions
// gate's, docs/spec.md §11); without one, or with leaving disabled, it
// runs nothing. Without a sandbox the argument is ignored.
func TestSandboxSchemaAndEscape(t *testing.T) {
	bg := config.Bash{}
	const noConsent = "running outside the sandbox needs the user's approval, and nothing asked for it"
	consented := consentContext(t)
	for _, tc := range []struct {
		name    string
		sb      config.Sandbox
		ctx     context.Context
		order   string
		err     string
		outside bool
	}{
		{"no sandbox", config.Sandbox{}, context.Background(), "command description timeoutMs workdir run_in_background tty cols rows", "", false},
		{"no sandbox, consent", config.Sandbox{}, consented, "command description timeoutMs workdir run_in_background tty cols rows", "", false},
		{"no consent", sandboxCfg(config.SandboxWorkspaceWrite, false, true), context.Background(),
			"command description timeoutMs workdir run_in_background tty cols rows dangerouslyDisableSandbox", noConsent, false},
		{"consent", sandboxCfg(config.SandboxWorkspaceWrite, false, true), consented,
			"command description timeoutMs workdir run_in_background tty cols rows dangerouslyDisableSandbox", "", true},
		{"disabled", sandboxCfg(config.SandboxReadOnly, false, false), consented, "command description timeoutMs workdir run_in_background tty cols rows", noConsent, false},
	} {
		if got := strings.Join(parameters(bg, tc.sb).PropertyOrder, " "); got != tc.order {
			t.Errorf("%s: order %q, want %q", tc.name, got, tc.order)
		}
		exec := &countingExecutor{}
		tl := New(exec, nil, bg, WithSandbox(tc.sb))
		_, err := tl.execute(tc.ctx, tool.Call{Args: []byte(`{"command":"true","description":"d","dangerouslyDisableSandbox":true}`)})
		var te *tool.Error
		switch {
		case tc.err == "" && (err != nil || exec.runs != 1 || exec.unsandboxed != tc.outside):
			t.Errorf("%s: ran %d (unsandboxed %v, want %v), err %v", tc.name, exec.runs, exec.unsandboxed, tc.outside, err)
		case tc.err != "" && (!errors.As(err, &te) || te.Message != tc.err || te.Code != tool.CodeApprovalRequired || exec.runs != 0):
			t.Errorf("%s: err %v, want %q; ran %d", tc.name, err, tc.err, exec.runs)
		}
	}
}

// consentContext is the context the registry gives a call that a
// middleware allowed with the user's consent to leave the sandbox.
func consentContext(t *testing.T) context.Context {
	t.Helper()
	var ctx context.Context
	r := tool.NewRegistry()
	if err := r.Register(tool.Definition{Name: "probe", Parameters: &jsonschema.Schema{Type: "object"}, Execute: func(c context.Context, _ tool.Call) (tool.Result, error) {
		ctx = c
		return tool.TextResult("ok"), nil
	}}); err != nil {
		t.Fatal(err)
	}
	r.UsePre(func(c context.Context, call tool.Call, next tool.PreNext) tool.Decision {
		d := next(c, call)
		d.Consents = append(d.Consents, ConsentUnsandboxed)
		return d
	})
	r.Execute(context.Background(), tool.Call{Name: "probe"})
	return ctx
}

// countingExecutor counts runs and runs nothing.
type countingExecutor struct {
	bash.Executor
	runs        int
	unsandboxed bool // the last run's
}

func (c *countingExecutor) Resolve(r bash.Request) (bash.Spec, error) {
	return bash.Spec{Command: r.Command, Timeout: 1000 * time.Millisecond, Unsandboxed: r.Unsandboxed}, nil
}

func (c *countingExecutor) RunOrYield(_ context.Context, spec bash.Spec, _ <-chan struct{}) (bash.Result, bash.Process, error) {
	c.runs++
	c.unsandboxed = spec.Unsandboxed
	zero := 0
	return bash.Result{ExitCode: &zero}, nil, nil
}
