// Package tool is the registry every tool call runs through, whatever the
// tool and whatever the front end (MCP, ACP, CLI).
//
// A [Definition] is a name, a description for the model, a JSON Schema of
// its parameters, an Execute function and optional presenters. A
// [Registry] lists the definitions (name, description, schema: what a model
// is shown) and executes calls:
//
//  1. an unknown name is an error result `Error: unknown tool "<name>"`
//     (code UNKNOWN_TOOL);
//  2. the arguments are validated against the schema ([Validate]); every
//     violation is listed, in parameter order, in one error result
//     `Error: invalid arguments: …` (code INVALID_ARGS);
//  3. the pre-execute waterfall decides: allow, deny or ask. The first
//     middleware registered is the outermost; [Registry.UsePreFirst] puts
//     one before all others. A denied call is not executed; an allowed
//     one may carry what the user consented to, which the tool reads with
//     [Consented];
//  4. the tool executes. An error or a panic becomes an error result
//     `Error: <message>`; the server never crashes for a tool;
//  5. the post-execute waterfall sees every result that got this far,
//     denied ones included, and may accept it (adding context for the
//     model) or block it (an error result with feedback).
//
// Unknown tools and invalid arguments stop before the waterfalls: policy
// and hooks only ever see well-formed calls.
//
// Presenters turn a call and its result into a [View] for a UI (a generic
// card or a terminal). They are pure functions of the tool name, the raw
// arguments and the result, so a stored log replays to the same views. The
// registry soft-validates around them: invalid arguments give no view, and
// a panicking presenter gives no view and an error, never a crash.
//
// tool/bashtool and tool/tasktool build on this package: they are its
// plug-ins, so they import it, not the other way around.
package tool

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/session"
)

// Definition describes one tool.
type Definition struct {
	// Name is how the model calls the tool.
	Name string
	// Description tells the model what the tool does and how to use it.
	Description string
	// Parameters is the JSON Schema of the arguments: an object schema.
	// Property order is the order of validation messages (PropertyOrder,
	// then the rest by name).
	Parameters *jsonschema.Schema
	// OutputSchema, when set, describes Result.Structured (MCP
	// outputSchema); a tool that sets it returns Structured on success.
	OutputSchema *jsonschema.Schema
	// Annotations are hints for clients (MCP tool annotations).
	Annotations Annotations
	// Execute runs a validated call. A returned error becomes an error
	// result; a *Error keeps its code.
	Execute func(ctx context.Context, call Call) (Result, error)
	// Presenters shape what a UI shows; both are optional.
	Presenters Presenters
	// MissingHints maps a required top-level property to a line that says
	// what to send in it: an invalid-arguments error that reports it
	// missing ends with that line, after a "\n". Optional.
	MissingHints map[string]string
}

// Annotations are hints about a tool's behaviour, for clients.
type Annotations struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Schema is what listing shows of a tool.
type Schema struct {
	Name         string
	Description  string
	Parameters   *jsonschema.Schema
	OutputSchema *jsonschema.Schema
	Annotations  Annotations
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the front end's id for the call, if it has one.
	ID   string
	Name string
	// Args are the raw JSON arguments; empty means none.
	Args json.RawMessage
	// Session is the calling owner, or nil.
	Session *session.Session
	// Asker asks the call's user for an approval; nil when nobody can be
	// asked.
	Asker Asker
	// Resume, on a call a front end repeats after a question (Suspend),
	// is what the steps settled the first time; trusted: the front end
	// checks that it gave it.
	Resume *Resume
	// Advice is what the pre-execute steps before the deciding one (the
	// hooks) said about the call; a step sets it on the call it passes
	// on, and the deciding step (the command policy) reads it. The
	// registry clears what a front end put here: only the steps advise.
	Advice Advice
	// Seq numbers the call among the registry's calls, so that the steps
	// before and after it can name it alike (a hook's tool_use_id); the
	// registry sets it.
	Seq uint64
	// Client names the front end's client, for logs: an MCP client's
	// clientInfo "name/version"; "" when there is none.
	Client string
	// Started is when the call arrived; the registry sets it when the
	// front end did not.
	Started time.Time
}

// Decode unmarshals the call's arguments into v. Execute functions call it
// after the registry validated them, so it fails only for types the schema
// does not describe.
func (c Call) Decode(v any) error {
	if len(c.Args) == 0 {
		return json.Unmarshal([]byte("{}"), v)
	}
	return json.Unmarshal(c.Args, v)
}

// Content is one block of a result.
type Content struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// TextContent is a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// Result is what a call returns to the model.
type Result struct {
	// Content is what the model reads, in order.
	Content []Content
	// IsError marks a failed call (validation, policy, infrastructure),
	// not a command that merely exited non-zero.
	IsError bool
	// Code classifies an error result (CodeInvalidArgs, …).
	Code string
	// Structured carries facts a client should not parse from text (MCP
	// structuredContent); nil when the tool has none.
	Structured any
	// Notes are extra lines for the model that are not the tool's output:
	// context added by post-execute middleware (and, in front ends,
	// finish notices). Front ends send them as text blocks after Content;
	// presenters see only Content, so a note never breaks a terminal card.
	Notes []string
	// Question, when set, suspends the call: nothing ran, and the front
	// end asks it and repeats the call with the answer (see ErrSuspend).
	Question *Question
	// Executed reports that the tool ran (its result, an error or not, is
	// the tool's own, not a validation error or a refusal).
	Executed bool
	// Args are the arguments the tool ran when a pre-execute step replaced
	// the call's; nil when it ran them as sent. A call refused after a
	// step replaced them has those the refusing step saw. Presenters and
	// logs take these.
	Args json.RawMessage
	// Ruling is how the call was decided and by what (set by the
	// registry; the audit log's decision and decidedBy, docs/spec.md §15).
	// When a post-execute step replaced the result, Executed, Args and
	// Structured still describe what ran.
	Ruling Ruling
}

// TextResult is a successful result of one text block.
func TextResult(text string) Result { return Result{Content: []Content{TextContent(text)}} }

// ErrorPrefix starts the text of every error result (exact).
const ErrorPrefix = "Error: "

// ErrorResult is an error result of one text block "Error: <message>".
func ErrorResult(code, message string) Result {
	return Result{Content: []Content{TextContent(ErrorPrefix + message)}, IsError: true, Code: code}
}

// Text returns the result's text blocks joined by newlines.
func (r Result) Text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Error codes of error results.
const (
	CodeInvalidArgs      = "INVALID_ARGS"
	CodeUnknownTool      = "UNKNOWN_TOOL"
	CodeDenied           = "DENIED"
	CodeApprovalRequired = "APPROVAL_REQUIRED"
	CodeBlocked          = "BLOCKED"
	CodeFailed           = "TOOL_FAILED"
	CodePanic            = "TOOL_PANIC"
)

// Error is an error with a code. A tool returns one to choose the code of
// its error result; the message becomes the text after "Error: ".
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Message
}
