package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/internal/audit"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// The attributes dsh puts on a call's span besides the registry's
// (docs/spec.md §15.5). OpenTelemetry's names where its conventions have
// one (process.*, session.id, error.type), dsh.* where they have none.
const (
	AttrDecision     = "dsh.decision"
	AttrDecidedBy    = "dsh.decided_by"
	AttrExitCode     = "process.exit.code"
	AttrSignal       = "dsh.signal"
	AttrTimedOut     = "dsh.timed_out"
	AttrStdoutBytes  = "dsh.stdout.bytes"
	AttrStderrBytes  = "dsh.stderr.bytes"
	AttrTaskID       = "dsh.task.id"
	AttrBackground   = "dsh.background"
	AttrSession      = "session.id"
	AttrClient       = "dsh.client"
	AttrCommand      = "process.command_line"
	AttrOriginal     = "dsh.original_command"
	AttrWorkdir      = "process.working_directory"
	AttrErrorType    = "error.type"
	errorTypeTimeout = "timeout"
)

// commandFields are the audit line's fields that hold a command's text
// or place, or may (an error result quotes the command; a hook's block
// reason is its output): on log records only with otel.logCommands.
var commandFields = []string{"command", "originalCommand", "workdir", "error"}

// Call completes the call's span on ctx with how the call ended, and
// sends the call's audit record as a log record; it is a tool observer.
func (t *Telemetry) Call(ctx context.Context, call tool.Call, res tool.Result) {
	if t == nil {
		return
	}
	line := audit.RenderCall(t.red, call, res, time.Now())
	if !t.settings.LogCommands {
		line.DecidedBy = withoutCommand(line.DecidedBy)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(t.callAttrs(line)...)
		switch {
		case res.IsError:
			span.SetAttributes(attribute.String(AttrErrorType, res.Code))
			span.SetStatus(codes.Error, line.Decision)
		case line.TimedOut:
			span.SetAttributes(attribute.String(AttrErrorType, errorTypeTimeout))
			span.SetStatus(codes.Error, "timed out")
		}
	}
	var extra []attribute.KeyValue
	if res.IsError {
		extra = append(extra, attribute.String(AttrErrorType, res.Code))
	}
	t.emit(ctx, audit.EventCall, call.Started, line, extra...)
}

// withoutCommand is what decided a call without a hook's command line,
// which may hold a token: "hook: CMD (SOURCE)" is "hook (SOURCE)".
func withoutCommand(by string) string {
	rest, ok := strings.CutPrefix(by, "hook: ")
	if !ok {
		return by
	}
	if i := strings.LastIndex(rest, " ("); i >= 0 {
		return "hook" + rest[i:]
	}
	return "hook"
}

// callAttrs are the span attributes of an audit line.
func (t *Telemetry) callAttrs(l audit.CallLine) []attribute.KeyValue {
	a := []attribute.KeyValue{attribute.String(AttrDecision, l.Decision)}
	str := func(k, v string) {
		if v != "" {
			a = append(a, attribute.String(k, v))
		}
	}
	str(AttrDecidedBy, l.DecidedBy)
	str(AttrSession, l.Session)
	str(AttrClient, l.Client)
	str(AttrTaskID, l.TaskID)
	str(AttrSignal, l.Signal)
	if l.ExitCode != nil {
		a = append(a, attribute.Int(AttrExitCode, *l.ExitCode))
	}
	if l.TimedOut {
		a = append(a, attribute.Bool(AttrTimedOut, true))
	}
	if l.Background {
		a = append(a, attribute.Bool(AttrBackground, true))
	}
	if l.Tool == "bash" {
		a = append(a, attribute.Int64(AttrStdoutBytes, l.StdoutBytes), attribute.Int64(AttrStderrBytes, l.StderrBytes))
	}
	if t.settings.LogCommands {
		str(AttrCommand, l.Command)
		str(AttrOriginal, l.OriginalCommand)
		str(AttrWorkdir, l.Workdir)
	}
	return a
}

// TaskEnd sends a settled task's audit record; it is a settled listener.
func (t *Telemetry) TaskEnd(snap tasks.Snapshot) {
	if t == nil {
		return
	}
	t.emit(context.Background(), audit.EventTaskEnd, snap.Finished, audit.TaskEnd(snap))
}

// Net sends the audit record of a sandboxed command's connection.
func (t *Telemetry) Net(owner string, r gateway.Record) {
	if t == nil {
		return
	}
	t.emit(context.Background(), audit.EventNet, time.Now(), audit.RenderNet(t.red, owner, r))
}

// emit sends an audit line as a log record: its event as the body and as
// the event name dsh.audit.<event>, its fields (but event and time) as
// attributes under their names in the audit log. ctx carries the call's
// span, whose ids the record takes.
func (t *Telemetry) emit(ctx context.Context, event string, at time.Time, line any, extra ...attribute.KeyValue) {
	if t.logger == nil {
		return
	}
	var rec otellog.Record
	rec.SetTimestamp(at)
	rec.SetObservedTimestamp(time.Now())
	rec.SetSeverity(otellog.SeverityInfo)
	rec.SetSeverityText("INFO")
	rec.SetEventName("dsh.audit." + event)
	rec.SetBody(attribute.StringValue(event))
	rec.AddAttributes(t.lineAttrs(line)...)
	rec.AddAttributes(extra...)
	t.logger.Emit(ctx, rec)
}

// lineAttrs are an audit line's fields as attributes, sorted by name: a
// string, a bool, an integer, else a float.
func (t *Telemetry) lineAttrs(line any) []attribute.KeyValue {
	b, err := json.Marshal(line)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var fields map[string]any
	if dec.Decode(&fields) != nil {
		return nil
	}
	delete(fields, "event")
	delete(fields, "time")
	if !t.settings.LogCommands {
		for _, k := range commandFields {
			delete(fields, k)
		}
	}
	out := make([]attribute.KeyValue, 0, len(fields))
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		switch v := fields[k].(type) {
		case string:
			out = append(out, attribute.String(k, v))
		case bool:
			out = append(out, attribute.Bool(k, v))
		case json.Number:
			if i, err := v.Int64(); err == nil {
				out = append(out, attribute.Int64(k, i))
			} else if f, err := v.Float64(); err == nil {
				out = append(out, attribute.Float64(k, f))
			}
		}
	}
	return out
}
