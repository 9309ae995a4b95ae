package audit

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// The events (exact, docs/spec.md §15).
const (
	EventCall    = "call"
	EventTaskEnd = "task-end"
)

// CallLine is the line of a tool call that ended, its fields in the order
// of docs/spec.md §15.
type CallLine struct {
	Event           string `json:"event"`
	Time            string `json:"time"`
	Session         string `json:"session,omitempty"`
	Client          string `json:"client,omitempty"`
	Tool            string `json:"tool"`
	Command         string `json:"command,omitempty"`
	OriginalCommand string `json:"originalCommand,omitempty"`
	Workdir         string `json:"workdir,omitempty"`
	Background      bool   `json:"background,omitempty"`
	Decision        string `json:"decision"`
	DecidedBy       string `json:"decidedBy,omitempty"`
	ExitCode        *int   `json:"exitCode,omitempty"`
	Signal          string `json:"signal,omitempty"`
	TimedOut        bool   `json:"timedOut,omitempty"`
	DurationMs      int64  `json:"durationMs"`
	StdoutBytes     int64  `json:"stdoutBytes,omitempty"`
	StderrBytes     int64  `json:"stderrBytes,omitempty"`
	TaskID          string `json:"taskId,omitempty"`
	Error           string `json:"error,omitempty"`
}

// TaskEndLine is the line of a task that ended.
type TaskEndLine struct {
	Event       string `json:"event"`
	Time        string `json:"time"`
	Session     string `json:"session,omitempty"`
	TaskID      string `json:"taskId"`
	Status      string `json:"status"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	Signal      string `json:"signal,omitempty"`
	TimedOut    bool   `json:"timedOut,omitempty"`
	DurationMs  int64  `json:"durationMs"`
	StdoutBytes int64  `json:"stdoutBytes,omitempty"`
	StderrBytes int64  `json:"stderrBytes,omitempty"`
}

// Call writes the line of an ended call; it is a [tool.Observer].
func (l *Log) Call(_ context.Context, call tool.Call, res tool.Result) {
	l.write(l.CallLine(call, res, time.Now()))
}

// TaskEnd writes the line of a settled task; it is a settled listener
// ([tasks.Service.OnSettled]).
func (l *Log) TaskEnd(snap tasks.Snapshot) {
	l.write(TaskEnd(snap))
}

// CallLine renders the line of call, which ended at end with res.
func (l *Log) CallLine(call tool.Call, res tool.Result, end time.Time) CallLine {
	return RenderCall(l.red, call, res, end)
}

// RenderCall renders the line of call, which ended at end with res, its
// texts redacted by red (nil: none).
func RenderCall(red *redact.Redactor, call tool.Call, res tool.Result, end time.Time) CallLine {
	line := CallLine{
		Event:      EventCall,
		Time:       call.Started.UTC().Format(TimeFormat),
		Client:     call.Client,
		Tool:       call.Name,
		Decision:   string(res.Ruling.Outcome),
		DecidedBy:  red.Text(res.Ruling.By), // a hook's command line, which may hold a token
		DurationMs: end.Sub(call.Started).Milliseconds(),
	}
	if call.Session != nil {
		line.Session = call.Session.ID()
	}
	if call.Name == bashtool.Name {
		bashFields(red, &line, call, res)
	} else {
		line.TaskID = taskIDArg(call.Args)
	}
	if st, ok := res.Structured.(bashtool.Structured); ok {
		line.ExitCode, line.Signal, line.TimedOut = st.ExitCode, st.Signal, st.TimedOut
		if st.Stdout != nil {
			line.StdoutBytes = st.Stdout.TotalBytes
		}
		if st.Stderr != nil {
			line.StderrBytes = st.Stderr.TotalBytes
		}
		if st.TaskID != "" {
			line.TaskID = st.TaskID
		}
	}
	if res.IsError {
		line.Error = red.Text(strings.TrimPrefix(firstText(res), tool.ErrorPrefix))
	}
	return line
}

// bashFields fills what a bash call ran: the final arguments, and the
// ones sent when a step rewrote the command.
func bashFields(red *redact.Redactor, line *CallLine, call tool.Call, res tool.Result) {
	sent, _ := bashtool.DecodeArgs(call.Args) // validated, or an invalid call: its fields as far as they go
	ran := sent
	if res.Args != nil {
		ran, _ = bashtool.DecodeArgs(res.Args)
	}
	line.Command = red.Text(ran.Command)
	if ran.Command != sent.Command {
		line.OriginalCommand = red.Text(sent.Command)
	}
	line.Workdir = ran.ResolveWorkdir(call.Session)
	line.Background = ran.Background()
}

// taskIDArg is the task_id argument of a task tool's call, if any.
func taskIDArg(raw json.RawMessage) string {
	var a struct {
		TaskID any `json:"task_id"`
	}
	_ = json.Unmarshal(raw, &a)
	id, _ := a.TaskID.(string)
	return id
}

// firstText is the first text block of res: the model-facing text.
func firstText(res tool.Result) string {
	for _, c := range res.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// TaskEnd renders the line of a settled task.
func TaskEnd(snap tasks.Snapshot) TaskEndLine {
	e := snap.Exit
	return TaskEndLine{
		Event:       EventTaskEnd,
		Time:        snap.Finished.UTC().Format(TimeFormat),
		Session:     snap.Owner,
		TaskID:      snap.ID,
		Status:      string(snap.Status),
		ExitCode:    e.Code,
		Signal:      e.Signal,
		TimedOut:    e.TimedOut,
		DurationMs:  snap.Finished.Sub(snap.Started).Milliseconds(),
		StdoutBytes: e.StdoutBytes,
		StderrBytes: e.StderrBytes,
	}
}

// EventNet is the event of a sandboxed command's connection decided by
// the network map (exact, docs/spec.md §15).
const EventNet = "net"

// NetLine is the line of one connection, when it ended (or was refused).
type NetLine struct {
	Event      string `json:"event"`
	Time       string `json:"time"`
	Session    string `json:"session,omitempty"`
	Caller     string `json:"caller,omitempty"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
	Address    string `json:"address,omitempty"`
	Decision   string `json:"decision"`
	Rule       string `json:"rule"`
	BytesUp    int64  `json:"bytesUp,omitempty"`
	BytesDown  int64  `json:"bytesDown,omitempty"`
	DurationMs int64  `json:"durationMs"`
}

// Net writes the line of a connection of owner's commands.
func (l *Log) Net(owner string, r gateway.Record) { l.write(RenderNet(l.red, owner, r)) }

// RenderNet renders the line of a sandboxed command's connection.
func RenderNet(red *redact.Redactor, owner string, r gateway.Record) NetLine {
	return NetLine{
		Event: EventNet, Time: time.Now().UTC().Format(TimeFormat), Session: owner, Caller: r.Caller,
		Host: r.Host, Port: r.Port, Address: r.Address, Decision: r.Decision, Rule: red.Text(r.Rule),
		BytesUp: r.BytesUp, BytesDown: r.BytesDown, DurationMs: r.Duration.Milliseconds(),
	}
}
