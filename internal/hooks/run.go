package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/num"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
)

// Limits of a hook's output (docs/spec.md §10).
const (
	maxStdout = 1 << 20 // read whole up to this; beyond, the hook failed
	maxReason = 10000   // characters of an exit-2 reason
)

// outcome is what one hook said.
type outcome struct {
	// failed says why the hook failed ("exit code 1", "timed out after
	// 60s"); "" when it ran.
	failed string
	// block: exit 2 (reason: its stderr), or JSON that blocks.
	block  bool
	reason string
	// out is its JSON output; nil when it printed none.
	out *output
	// stderr is the first line of its stderr, for the log of a failure.
	stderr string
}

// run runs hd with payload on its stdin, in workdir, for session s, in
// a span of its own under the call's (docs/spec.md §15.5).
func (h *Hooks) run(ctx context.Context, hd Handler, payload []byte, workdir string, s *session.Session) outcome {
	ctx, span := tool.StartSpan(ctx, SpanHook)
	o := h.runHook(ctx, hd, payload, workdir, s)
	if span.IsRecording() {
		span.SetAttributes(attribute.String(AttrHookEvent, hd.Event), attribute.String(AttrHookSource, hd.Source),
			attribute.String(AttrHookOutcome, o.name()))
		span.End()
	}
	return o
}

// The span of a hook command and its attributes: the event, where the
// hook came from ("dsh config" or a settings file), and how it ended
// (ok, block, failed). The command line is not on it: it may hold a
// token.
const (
	SpanHook        = "dsh.hook"
	AttrHookEvent   = "dsh.hook.event"
	AttrHookSource  = "dsh.hook.source"
	AttrHookOutcome = "dsh.hook.outcome"
)

// name is o as AttrHookOutcome's value.
func (o outcome) name() string {
	switch {
	case o.failed != "":
		return "failed"
	case o.block:
		return "block"
	}
	return "ok"
}

// runHook runs hd.
func (h *Hooks) runHook(ctx context.Context, hd Handler, payload []byte, workdir string, s *session.Session) outcome {
	ms := float64(num.CeilMillis(hd.Timeout)) // a Go caller's 500µs is 1 ms, not none
	env := map[string]string{"CLAUDE_PROJECT_DIR": h.project(s), "DSH_SESSION_ID": sessionID(s)}
	req := bash.Request{Command: hd.Command, Workdir: workdir, Stdin: payload, Env: env, TimeoutMs: &ms,
		// The sandbox holds the hooks the project's files brought, as
		// it holds the model's commands; the user's own run outside it.
		Unsandboxed: !hd.Project}
	if s != nil {
		req.Owner = s
	}
	spec, err := h.exec.Resolve(req)
	if err != nil {
		return outcome{failed: err.Error()}
	}
	res, err := bash.Run(ctx, h.exec, spec)
	if err != nil {
		return outcome{failed: err.Error()}
	}
	o := judge(res)
	o.stderr, _, _ = strings.Cut(strings.TrimSpace(streamStart(res.Stderr)), "\n")
	// A hook's spill files are nobody's to read later.
	for _, p := range []string{res.Stdout.SpillPath, res.Stderr.SpillPath} {
		if p != "" {
			_ = os.Remove(p)
		}
	}
	return o
}

// streamStart is a stream's text from its start: its head when the middle
// was cut, else all of it (or only its tail, when no head was kept).
func streamStart(o bash.Output) string {
	if o.Head != "" {
		return o.Head
	}
	return o.Text
}

// judge reads a hook's result: exit 0 with JSON, or without it no
// decision; exit 2 a block; anything else a failure.
func judge(res bash.Result) outcome {
	switch {
	case res.TimedOut:
		return outcome{failed: "timed out after " + strconv.FormatFloat(float64(res.Timeout.Milliseconds())/1000, 'f', -1, 64) + "s"}
	case res.Signal != "":
		return outcome{failed: "killed by signal " + res.Signal}
	case res.ExitCode != nil && *res.ExitCode == 2:
		return outcome{block: true, reason: blockReason(res.Stderr)}
	case res.ExitCode == nil || *res.ExitCode != 0:
		return outcome{failed: fmt.Sprintf("exit code %d", *res.ExitCode)}
	}
	stdout, err := wholeStdout(res.Stdout)
	if err != nil {
		return outcome{failed: err.Error()}
	}
	trimmed := bytes.TrimLeft(stdout, " \t\r\n")
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		return outcome{}
	}
	var out output
	if err := json.Unmarshal(trimmed, &out); err != nil {
		return outcome{failed: "invalid JSON output: " + err.Error()}
	}
	return outcome{out: &out}
}

// blockReason is an exit-2 hook's reason: its stderr, trimmed, at most
// maxReason characters.
func blockReason(stderr bash.Output) string {
	r := strings.TrimSpace(streamStart(stderr))
	if rs := []rune(r); len(rs) > maxReason {
		r = string(rs[:maxReason])
	}
	if r == "" {
		return "blocked by hook"
	}
	return r
}

var errTooMuch = errors.New("more than 1 MiB of output")

// wholeStdout is a hook's stdout, read back from the spill file when it
// did not fit in the executor's memory.
func wholeStdout(o bash.Output) ([]byte, error) {
	if o.TotalBytes > maxStdout {
		return nil, errTooMuch
	}
	if !o.Truncated {
		return []byte(o.Text), nil
	}
	if o.SpillPath == "" {
		return nil, errors.New("its output could not be kept")
	}
	f, err := os.Open(o.SpillPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxStdout))
}

// failure is what failClosed makes of a failed hook (exact, docs/spec.md
// §10): "hook failed: COMMAND: exit code N".
func failure(hd Handler, why string) string { return "hook failed: " + hd.Command + ": " + why }

func sessionID(s *session.Session) string {
	if s == nil {
		return ""
	}
	return s.ID()
}
