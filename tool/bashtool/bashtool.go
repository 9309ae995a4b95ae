// Package bashtool is the model-facing `bash` tool (docs/spec.md §3): its schema
// and description, the checks on its arguments, the request it builds for
// an executor, the exact text the model reads, background runs through the
// task runtime, its prompt section and its presenters.
//
// A call goes: the registry's schema validation (exact messages of §3.2) →
// value checks here (blank command or description, a timeout that is not a
// positive number) → for a background call, the background checks, in
// order (disabled, no task runtime, already cancelled) → the request, built
// from the named arguments only: `env` or `stdin` keys a model sends never
// reach the executor → the executor → [Render] (foreground) or
// `started background task <id>` (background).
//
// Decisions where the spec is silent:
//   - A foreground call whose context was cancelled, before or during the
//     run, is the error `command aborted`; other executor errors (a missing
//     workdir, no shell) are error results with the executor's message.
//   - A model that sends `run_in_background: true` to a deployment without
//     background execution gets the disabled error, even though the
//     property is not in its schema.
//   - The spill files reported to a session (foreground results, background
//     reads) are deleted when the session ends (§4.4), and so are those of
//     its background tasks whose output was never read, and those of an
//     aborted call (whose paths the model never saw). Calls without a
//     session leave theirs to the executor, which removes its private spill
//     directory when it closes.
//   - The tool's structured result (for MCP structuredContent) carries exit
//     code, signal, timedOut, timeoutMs, durationMs, taskId and per-stream
//     truncated/spillPath/totalBytes/omittedBytes. omittedBytes is always
//     sent, 0 for a stream that was not truncated, like totalBytes; with
//     keepHeadBytes: 0 it counts the bytes before the tail.
//   - Command output reaches the model sanitized, redacted and guarded
//     (docs/spec.md §3.4b): a line that begins like one of dsh's markers
//     gets the prefix "> " (package marker), in results, yields,
//     background reads and progress messages alike. Each piece (head,
//     tail, read) is guarded on its own, and dsh always breaks the line
//     after it, so a marker split between two pieces never reads as one.
//   - A head cut to nothing (a keepHeadBytes of 1–3 bytes inside one
//     character) renders as the tail-only text: there is no head to show
//     the omitted line under.
//   - Yielding (docs/spec.md §12, yield.go): only a call whose context
//     allows it (tool.AllowYield: the MCP front end) yields, with
//     bash.yieldAfterMs > 0, background runs on and a task runtime loaded;
//     the task is started first and only its Run makes the executor
//     yield, so a runtime that refuses leaves the call in the foreground.
//     The yielded result's structured facts are those of the output so
//     far, with taskId and yielded; hooks see it as a background start. A
//     yielded task's timeout ends it killed with the detail `timed out
//     after <N>ms`, and its first read after the end adds that marker.
//     The description adds one clause while yielding is on, whatever the
//     front end: `dsh run` and an ACP agent that does not allow it simply
//     never yield.
//   - Terminals (docs/spec.md §4.2a, tty.go): tty, cols and rows are in the
//     schema whenever run_in_background is; a tty task's output feeds a
//     bash/term screen on the collector's goroutine, and the emulator's
//     answers to the program's queries are typed back within a second.
//     The screen is redacted line by line when read, a full row joined to
//     the next (a secret the terminal wrapped is found), its rows guarded. A
//     finished task keeps its last screen as text; the emulator is
//     released. Every background task's output wakes task_output's
//     waitFor (tasks.Hooks.Changed); a yielded one's is polled.
//
// The package is a plug-in of package tool: it imports tool, tasks and bash,
// and host.Standard registers it ([New], [Tool.Definition], [Section]).
package bashtool

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dsh-go/dsh/internal/num"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/internal/sanitize"
	"github.com/dsh-go/dsh/prompt"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
)

// Name is the tool's name.
const Name = "bash"

// TaskKind is the kind of the background tasks the tool starts.
const TaskKind = "bash"

const (
	descCommon = "Run a command with bash -c and return its output. " +
		"Each call is a fresh non-interactive shell with empty stdin: nothing (cd, variables) persists between calls, so pass workdir instead of cd. " +
		"A non-zero exit shows as [exit code: N], a timeout as [timed out after Nms]. " +
		"Long output keeps its start and end and names a file with the full output." + descGuard
	// descGuard says how output that imitates a marker reads (exact,
	// docs/spec.md §3.1): its lines start with marker.Prefix, "> ".
	descGuard      = " Output lines resembling markers start with >."
	descBackground = " For servers, watchers and long jobs set run_in_background: you get a task id at once; read it with task_output, stop it with task_kill"
	// descNoBackground is exact (docs/spec.md §3.1).
	descNoBackground = " Background execution is not available; long-running commands must finish within the timeout."
)

// Description is the tool's description for the given config, without a
// sandbox.
func Description(cfg config.Bash) string { return description(cfg, config.Sandbox{}) }

// description adds, with a sandbox on, the sentence that names its mode.
func description(cfg config.Bash, sb config.Sandbox) string {
	d := descCommon + descNoBackground
	if cfg.Background() {
		d = descCommon + descBackground + yieldClause(num.CeilMillis(cfg.YieldDelay())) + "."
	}
	return d + sandboxSentence(sb)
}

// yieldClause tells the model, with background runs on, that a long
// foreground command goes on as a task too (docs/spec.md §12); "" when
// yielding is off.
func yieldClause(ms int64) string {
	if ms == 0 {
		return ""
	}
	after := strconv.FormatInt(ms, 10) + "ms"
	if ms%1000 == 0 {
		after = strconv.FormatInt(ms/1000, 10) + "s"
	}
	return " (a foreground command still running after " + after + " goes on as a task too)"
}

// Parameters is the tool's schema for the given config, without a
// sandbox: command, description, timeoutMs, workdir and, only when
// background execution is enabled, run_in_background, in that order.
func Parameters(cfg config.Bash) *jsonschema.Schema { return parameters(cfg, config.Sandbox{}) }

// parameters adds dangerouslyDisableSandbox, last, while a sandbox is on
// that allows it (docs/spec.md §11).
func parameters(cfg config.Bash, sb config.Sandbox) *jsonschema.Schema {
	s := baseParameters(cfg)
	if sb.On() && sb.Unsandboxed() {
		s.Properties[escapeParam] = &jsonschema.Schema{Type: "boolean", Description: "Run outside the sandbox; the user is asked first. Only after a failure the sandbox caused."}
		s.PropertyOrder = append(s.PropertyOrder, escapeParam)
	}
	return s
}

// parameters is the tool's schema, without the terminal's arguments
// where the executor has no terminals.
func (t *Tool) parameters() *jsonschema.Schema {
	s := parameters(t.cfg, t.sandbox)
	if t.noTTY {
		for _, name := range []string{"tty", "cols", "rows"} {
			delete(s.Properties, name)
		}
		s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(n string) bool { return n == "tty" || n == "cols" || n == "rows" })
	}
	return s
}

// escapeParam is the argument that asks to run outside the sandbox
// (Claude Code's name).
const escapeParam = "dangerouslyDisableSandbox"

func baseParameters(cfg config.Bash) *jsonschema.Schema {
	s := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"command":     {Type: "string", Description: "The command, run by bash -c."},
			"description": {Type: "string", Description: "What it does, in 5-10 words, active voice (shown to the user)."},
			"timeoutMs":   {Type: "number", Description: "Timeout in ms; the server caps it."},
			"workdir":     {Type: "string", Description: "Working directory, relative to the session's."},
		},
		PropertyOrder: []string{"command", "description", "timeoutMs", "workdir"},
		Required:      []string{"command", "description"},
	}
	if cfg.Background() {
		s.Properties["run_in_background"] = &jsonschema.Schema{Type: "boolean", Description: "Return a task id at once; the command goes on."}
		s.Properties["tty"] = &jsonschema.Schema{Type: "boolean", Description: "With run_in_background: a terminal, for task_input."}
		s.Properties["cols"] = &jsonschema.Schema{Type: "integer"}
		s.Properties["rows"] = &jsonschema.Schema{Type: "integer"}
		s.PropertyOrder = append(s.PropertyOrder, "run_in_background", "tty", "cols", "rows")
	}
	return s
}

// Section is the tool's prompt section (docs/spec.md §3.6).
var Section = prompt.Section{
	Name:  "tool:bash",
	Order: 105,
	Text:  "Check the [exit code: N] marker on every bash result. When a command fails, find out why before moving on.",
}

// Tool is the bash tool bound to an executor.
type Tool struct {
	exec    bash.Executor
	runtime *tasks.Service // for background calls; nil: none
	cfg     config.Bash
	sandbox config.Sandbox // the executor's, for the description, schema and hints
	// noSandboxHere: mode auto found no backend (WithNoSandboxHere).
	noSandboxHere bool
	noTTY         bool // WithoutTerminals
	spills        spillTracker
	redactor      *redact.Redactor
	limit         foregroundLimit
}

// WithRedactor makes r redact the secrets in model-facing text
// (docs/spec.md §14); without it the Known rules apply, the default of
// the redact key. A nil r redacts nothing.
func WithRedactor(r *redact.Redactor) Option {
	return func(t *Tool) { t.redactor = r }
}

// Option configures the tool beyond its section.
type Option func(*Tool)

// WithRunning gives the tool a count it keeps of the foreground commands
// that run now, in all sessions (the metrics' commands running).
func WithRunning(n *atomic.Int64) Option {
	return func(t *Tool) { t.limit.running = n }
}

// WithSandbox tells the tool the sandbox its executor runs commands in
// (docs/spec.md §11): the description names its mode, the schema offers
// dangerouslyDisableSandbox when it allows it, and a failure that looks
// like the sandbox's gets a hint line.
//
// sb is the sandbox as it applies ([config.Sandbox.Resolved]): mode auto
// is taken as off, which is what it is where no backend works.
func WithSandbox(sb config.Sandbox) Option {
	return func(t *Tool) { t.sandbox = sb.Resolved(false).WithDefaults() }
}

// WithNoSandboxHere tells the tool that the sandbox is on by default
// (mode auto) but no backend works here, so commands run unsandboxed: the
// description says so in one sentence (docs/spec.md §11). mode off,
// the user's choice, says nothing.
func WithNoSandboxHere() Option {
	return func(t *Tool) { t.noSandboxHere = true }
}

// WithoutTerminals leaves tty, cols and rows out of the schema, for an
// executor that cannot run a command under a terminal (the SSH one): a
// call that sends tty anyway gets the executor's refusal.
func WithoutTerminals() Option {
	return func(t *Tool) { t.noTTY = true }
}

// WithSpillsKept leaves the spill files reported to a session when it
// ends (dsh run, whose printed paths must outlive it; its executor keeps
// them too, local.WithKeptSpill). Files never reported are still removed.
func WithSpillsKept() Option {
	return func(t *Tool) { t.spills.keep = true }
}

// New returns the tool over exec. Background calls, and foreground ones
// that yield, become tasks of runtime; it may be nil (no background
// execution).
func New(exec bash.Executor, runtime *tasks.Service, cfg config.Bash, opts ...Option) *Tool {
	known, _ := redact.New(redact.Known)
	limits := cfg.WithDefaults()
	t := &Tool{exec: exec, runtime: runtime, cfg: cfg, redactor: known,
		limit: foregroundLimit{perSession: limits.MaxForegroundPerSession, overall: limits.MaxForeground}}
	t.spills.remove = removeFiles
	if r, ok := exec.(bash.SpillRemover); ok {
		// Spill files on another machine (the SSH executor's), or counted
		// against a budget (the local one's).
		t.spills.remove = r.RemoveSpills
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Definition is the tool's registry definition.
func (t *Tool) Definition() tool.Definition {
	return tool.Definition{
		Name:         Name,
		Description:  description(t.cfg, t.sandbox) + t.notSandboxed(),
		Parameters:   t.parameters(),
		OutputSchema: outputSchema(),
		Annotations:  tool.Annotations{Destructive: true, OpenWorld: true},
		Execute:      t.execute,
		Presenters:   tool.Presenters{Call: presentCall, Result: presentResult},
		MissingHints: map[string]string{"description": DescriptionHint},
	}
}

func (t *Tool) execute(ctx context.Context, call tool.Call) (tool.Result, error) {
	t.spills.watch(call.Session)
	a, err := DecodeArgs(call.Args)
	if err != nil {
		return tool.Result{}, &tool.Error{Code: tool.CodeInvalidArgs, Message: tool.InvalidArgsPrefix + err.Error()}
	}
	req, err := request(a, call.Session)
	if err != nil {
		return tool.Result{}, err
	}
	if t.sandbox.On() && t.sandbox.Network.Filter() != nil {
		req.Net = netCall(call, a.Command)
	}
	if a.LeavesSandbox() && t.sandbox.On() {
		if err := t.leaveSandbox(ctx, &req); err != nil {
			return tool.Result{}, err
		}
	}
	if a.Background() {
		return t.background(ctx, call.Session, req)
	}
	return t.foreground(ctx, call.Session, req)
}

// request checks the argument values (first failure wins) and builds the
// executor request from the named arguments only.
func request(a Args, s *session.Session) (bash.Request, error) {
	if strings.TrimSpace(a.Command) == "" {
		return bash.Request{}, invalid(invalidBlank("command"))
	}
	if strings.TrimSpace(a.Description) == "" {
		return bash.Request{}, invalid(invalidBlank("description") + "\n" + DescriptionHint)
	}
	req := bash.Request{Command: a.Command, Workdir: a.ResolveWorkdir(s)}
	if s != nil {
		req.Owner = s // never a nil *Session inside the interface
	}
	if a.TimeoutMs != nil {
		ms, err := strconv.ParseFloat(string(*a.TimeoutMs), 64)
		if err != nil || !num.PositiveFinite(ms) {
			return bash.Request{}, invalid(invalidTimeout(string(*a.TimeoutMs)))
		}
		req.TimeoutMs = &ms
	}
	tty, err := a.terminal()
	if err != nil {
		return bash.Request{}, err
	}
	req.TTY = tty
	return req, nil
}

func invalid(msg string) error { return &tool.Error{Code: tool.CodeInvalidArgs, Message: msg} }

func (t *Tool) foreground(ctx context.Context, s *session.Session, req bash.Request) (tool.Result, error) {
	release, err := t.limit.acquire(s)
	if err != nil {
		return tool.Result{}, err
	}
	defer release()
	if report := tool.ProgressFrom(ctx); report != nil {
		w := watchProgress(report, t.modelPart)
		defer w.close()
		req.Observe = w.observe
	}
	spec, err := t.exec.Resolve(req)
	if err != nil {
		return tool.Result{}, err
	}
	res, taskID, err := t.runOrYield(ctx, s, req, spec)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, &tool.Error{Code: tool.CodeFailed, Message: Aborted}
		}
		return tool.Result{}, err
	}
	if taskID != "" && ctx.Err() != nil {
		// Cancelled as it yielded: the transport drops this call's
		// response (docs/spec.md §6.4), so nobody would learn of the task.
		// The cancel ends the command, as it ends a foreground one.
		_, _, _ = t.runtime.Kill(s, taskID)
		// The facts name the task for the audit log, whose task-end line
		// ends it; an error result's facts never reach the model.
		out := tool.ErrorResult(tool.CodeFailed, Aborted)
		out.Structured = Structured{TaskID: taskID, Yielded: true}
		return out, nil
	}
	if taskID == "" { // a yielded result is model text already (runOrYield)
		res.Stdout, res.Stderr = t.modelOutput(res.Stdout), t.modelOutput(res.Stderr)
	}
	if res.Aborted {
		// The model never sees these paths: nobody else would delete them.
		t.spills.removeAll(res.Stdout.SpillPath, res.Stderr.SpillPath)
		return tool.Result{}, &tool.Error{Code: tool.CodeFailed, Message: Aborted}
	}
	t.spills.track(s, res.Stdout.SpillPath, res.Stderr.SpillPath)
	if taskID != "" {
		out := tool.TextResult(renderYielded(res, num.CeilMillis(t.cfg.YieldDelay()), taskID))
		st := structured(res)
		st.TaskID, st.Yielded = taskID, true
		out.Structured = st
		return out, nil
	}
	notes := joinLines(t.hint(req, res.ExitCode, res.Signal, res.Stdout, res.Stderr), refusedLine(req.Net.Refused()))
	out := tool.TextResult(render(res, notes))
	out.Structured = structured(res)
	return out, nil
}

func (t *Tool) background(ctx context.Context, s *session.Session, req bash.Request) (tool.Result, error) {
	if !t.cfg.Background() {
		return tool.Result{}, &tool.Error{Code: tool.CodeFailed, Message: errDisabled}
	}
	rt := t.runtime
	if rt == nil {
		return tool.Result{}, &tool.Error{Code: tool.CodeFailed, Message: errNoRuntime}
	}
	if ctx.Err() != nil {
		return tool.Result{}, &tool.Error{Code: tool.CodeFailed, Message: Aborted}
	}
	news := newSignal()
	req.Observe = func(string, []byte) { news.fire() }
	var scr *screenTask
	if req.TTY != nil {
		scr = newScreenTask(*req.TTY, news, t.redactor.Text)
		req.Observe = scr.observe
	}
	spec, err := t.exec.Resolve(req)
	if err == nil {
		var snap tasks.Snapshot
		snap, err = rt.Start(tasks.Spec{
			Kind:  TaskKind,
			Label: req.Command,
			Owner: s,
			Run:   func() (tasks.Hooks, error) { return t.startProcess(ctx, s, spec, req, news, scr) },
			// mode auto without a backend is off here (WithSandbox)
			Sandboxed: t.sandbox.On() && !req.Unsandboxed,
		})
		if err == nil {
			out := tool.TextResult(startedText(snap.ID))
			out.Structured = Structured{TaskID: snap.ID}
			return out, nil
		}
	}
	if scr != nil {
		scr.end()
	}
	return tool.Result{}, err
}

// startProcess is the bash producer of the task runtime. The caller's
// context bounds the start only and is deliberately not wired to the
// process: only task_kill, session end and shutdown stop it. news is
// fired by the command's output; scr, when set, is its screen.
func (t *Tool) startProcess(ctx context.Context, s *session.Session, spec bash.Spec, req bash.Request, news *signal, scr *screenTask) (tasks.Hooks, error) {
	p, err := t.exec.Start(ctx, spec)
	if err != nil {
		return tasks.Hooks{}, err
	}
	h := t.processHooks(s, p, req, spec.Timeout.Milliseconds(), t.newStreams())
	h.Changed = news.next
	if scr == nil {
		return h, nil
	}
	tp, ok := p.(bash.TerminalProcess)
	if !ok {
		p.Kill()
		<-p.Done()
		return tasks.Hooks{}, errNoTerminal
	}
	scr.attach(tp)
	h.Terminal = scr
	go func() { <-p.Done(); scr.end() }()
	return h, nil
}

// errNoTerminal: an executor started a tty command without a terminal.
var errNoTerminal = errors.New("bash: the executor gave the command no terminal")

// processHooks are the task hooks of a background process: one started
// in the background, or a foreground run that yielded (still bound to its
// timeout of timeoutMs, which then ends it killed, docs/spec.md §12). st
// redacts its reads.
func (t *Tool) processHooks(s *session.Session, p bash.Process, req bash.Request, timeoutMs int64, st *streams) tasks.Hooks {
	done := make(chan tasks.Outcome, 1)
	go func() {
		<-p.Done()
		// Spill files of output the model never reads are the session's
		// too: they go when it ends (or at once if it has ended).
		out, errOut := p.SpillPaths()
		t.spills.track(s, out, errOut)
		done <- outcome(p.State(), timeoutMs)
	}()
	var shown atomic.Bool // a read named the spill files to the model
	timeoutSaid := false  // reads are serialized by the task runtime
	return tasks.Hooks{
		Cancel: func(string) error { p.Kill(); return nil },
		Done:   done,
		Read: func() string {
			finished := isClosed(p.Done())
			r := p.Read()
			if r.Lossy {
				shown.Store(true)
			}
			if finished && !shown.Load() {
				// The read took the rest, and the model was never told
				// of the files: nobody needs them any more (§4.4).
				t.spills.release(s, r.StdoutSpill, r.StderrSpill)
			} else {
				t.spills.track(s, r.StdoutSpill, r.StderrSpill)
			}
			r.Delta = bash.JoinStreams(st.out.read(r.Stdout, finished), st.err.read(r.Stderr, finished))
			text := readText(r)
			if finished {
				st := p.State()
				text = withHint(text, t.hint(req, st.ExitCode, st.Signal, bash.Output{Text: r.Delta}))
				if st.TimedOut && !timeoutSaid {
					timeoutSaid = true
					text = withHint(text, timedOutMarker(timeoutMs))
				}
			}
			return text
		},
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Command output as the model may read it: without the escape sequences
// and control characters a terminal would act on (docs/spec.md §3.4),
// then with its secrets redacted (§14; after the stripping, so that an
// escape sequence inside a token cannot hide it), then with bidi controls
// and zero-width characters shown as escapes (§3.4; after the redaction,
// since an escape's last hex digit would glue to a token after it), then
// with its lines that look like dsh's markers guarded (last, so that the
// guard sees each line as the model will: §3.4b). Redaction sees each
// stream as a stream: a part that starts at a cut (a tail, a lossy read)
// is redacted with what came before it; at the end of a part a secret
// that may run on is replaced, or, between two reads, held back for the
// next; so no part of one shows. The end of a whole output counts as a
// cut too: the output may be a cut of a file (head -c). The spill files
// keep the raw bytes.
//
// Each piece of output is guarded on its own, its first and last lines as
// whole ones: dsh puts a line break between a piece and whatever follows
// it, so a marker split between two pieces never reads as one line.

// modelPart is s, a part of a stream, as the model may read it: before is
// what came just before it (bash.ContextBytes of it, when cut).
// Controls are stripped from before and s as one text, so a sequence the
// cut splits is removed whole. Redaction then reads the text twice: with
// each removed control as a word boundary, as a terminal shows it
// (`ok\e[0mghp_…`), then without them (`ghp_ab\e[0mcd…`), so that
// neither hides a token (sanitize.StripMarked).
func (t *Tool) modelPart(before, s string) string {
	whole, b := sanitize.StripMarked(before+s), sanitize.StripMarked(before)
	from := 0
	for from < len(b) && from < len(whole) && b[from] == whole[from] {
		from++
	}
	context := sanitize.Unmark(whole[:from])
	return shown(t.redactor.Part(context+sanitize.Unmark(t.redactor.Part(whole, from)), len(context)))
}

// shown is redacted text as the model reads it: invisible characters as
// escapes, marker-like lines guarded.
func shown(s string) string { return marker.Guard(sanitize.ShowInvisible(s)) }

// modelOutput is o, a stream that ended, with its head and tail as the
// model may read them.
func (t *Tool) modelOutput(o bash.Output) bash.Output {
	o.Head, o.Text = t.modelPart("", o.Head), t.modelPart(o.Before, o.Text)
	o.Before = ""
	return o
}

// streams redact a process's stdout and stderr read by read.
type streams struct{ out, err stream }

// stream is one of them: its redaction with removed controls as word
// boundaries, then without them (modelPart says why), and the escape
// sequence the last read ended inside, which the next read may finish.
type stream struct {
	marked, joined *redact.Stream
	unfinished     *string
}

func (t *Tool) newStream() stream {
	return stream{t.redactor.Stream(), t.redactor.Stream(), new(string)}
}

func (t *Tool) newStreams() *streams { return &streams{t.newStream(), t.newStream()} }

// read is r as the model may read it: after a loss with what came before
// it as context, and the head it missed (r.Head) before the omitted
// line, as a foreground result's (keptText); the end of a secret, and
// an escape sequence cut short, are held back unless end.
func (st stream) read(r bash.StreamRead, end bool) string {
	if r.Lossy && r.Head != "" {
		// The head continues what was read before; it ends at a cut.
		head := st.readPart(bash.StreamRead{Text: r.Head}, true)
		r.Head = ""
		return keptText(bash.Output{Head: head, OmittedBytes: r.OmittedBytes, Text: st.readPart(r, end)})
	}
	return st.readPart(r, end)
}

// readPart is read of one part, without a head.
func (st stream) readPart(r bash.StreamRead, end bool) string {
	text := *st.unfinished + r.Text
	if r.Lossy {
		text = r.Text
		st.marked.Cut(sanitize.StripMarked(r.Before))
		st.joined.Cut(sanitize.StripControls(r.Before))
	}
	*st.unfinished = ""
	if !end {
		text, *st.unfinished = sanitize.SplitUnfinished(text)
	}
	marked := st.marked.Next(sanitize.StripMarked(text), end)
	return shown(st.joined.Next(sanitize.Unmark(marked), end))
}

// yielded is o, the output so far of a run that goes on in the
// background, as the model may read it: its tail is the first piece of
// st, which the task's reads go on with.
func (t *Tool) yielded(o bash.Output, st stream) bash.Output {
	o.Head = t.modelPart("", o.Head)
	o.Text = st.read(bash.StreamRead{Text: o.Text, Lossy: o.Truncated, Before: o.Before}, false)
	o.Before = ""
	return o
}

// outputSchema describes Structured (MCP outputSchema). The pointer fields
// are left out when empty, never sent as null, so each gets one plain type:
// a nullable type array is less portable (some clients accept only a
// single type). Made on first use, not at every start of dsh.
var outputSchema = sync.OnceValue(func() *jsonschema.Schema {
	s, err := jsonschema.For[Structured](nil)
	if err != nil {
		panic(err)
	}
	for name, typ := range map[string]string{"exitCode": "integer", "stdout": "object", "stderr": "object"} {
		s.Properties[name].Types, s.Properties[name].Type = nil, typ
	}
	return s
})

// Structured is the bash tool's structured result.
type Structured struct {
	ExitCode   *int   `json:"exitCode,omitempty"`
	Signal     string `json:"signal,omitempty"`
	TimedOut   bool   `json:"timedOut"`
	TimeoutMs  int64  `json:"timeoutMs,omitempty"`
	DurationMs int64  `json:"durationMs"`
	TaskID     string `json:"taskId,omitempty"`
	// Yielded: a foreground call handed its command to the background
	// task TaskID; the streams are the output so far (docs/spec.md §12).
	Yielded bool         `json:"yielded,omitempty"`
	Stdout  *StreamFacts `json:"stdout,omitempty"`
	Stderr  *StreamFacts `json:"stderr,omitempty"`
	// StdoutText and StderrText are each stream's text as the model reads
	// it, for the hooks' tool_response; not structuredContent (the text
	// block carries them).
	StdoutText string `json:"-"`
	StderrText string `json:"-"`
}

// StreamFacts describes one stream of a foreground run.
type StreamFacts struct {
	Truncated  bool   `json:"truncated"`
	SpillPath  string `json:"spillPath,omitempty"`
	TotalBytes int64  `json:"totalBytes"`
	// OmittedBytes counts the bytes the text leaves out (docs/spec.md
	// §3.4a): between the head and the tail, or before a tail without one.
	OmittedBytes int64 `json:"omittedBytes"`
}

func structured(r bash.Result) Structured {
	facts := func(o bash.Output) *StreamFacts {
		return &StreamFacts{Truncated: o.Truncated, SpillPath: o.SpillPath, TotalBytes: o.TotalBytes, OmittedBytes: o.OmittedBytes}
	}
	return Structured{
		ExitCode:   r.ExitCode,
		Signal:     r.Signal,
		TimedOut:   r.TimedOut,
		TimeoutMs:  r.Timeout.Milliseconds(),
		DurationMs: r.Duration.Milliseconds(),
		StdoutText: streamText(r.Stdout),
		StderrText: streamText(r.Stderr),
		Stdout:     facts(r.Stdout),
		Stderr:     facts(r.Stderr),
	}
}

// spillTracker remembers the spill files reported to each session and
// deletes them when the session ends (docs/spec.md §4.4). The end hook is
// registered the first time a session calls the tool, before that call
// can start a task, so (hooks running last-registered first) the task
// runtime's hook has killed and awaited the session's tasks before their
// files are deleted.
type spillTracker struct {
	// remove deletes spill files: os.Remove, or the executor's
	// bash.SpillRemover.
	remove func(paths ...string)
	// keep: a session's end forgets its files without removing them.
	keep bool

	mu       sync.Mutex
	sessions map[*session.Session]*sessionSpills
}

// removeAll deletes the non-empty paths among paths.
func (st *spillTracker) removeAll(paths ...string) {
	var files []string
	for _, p := range paths {
		if p != "" {
			files = append(files, p)
		}
	}
	if len(files) > 0 {
		st.remove(files...)
	}
}

type sessionSpills struct {
	files map[string]bool
}

// watch registers s's end hook once.
func (st *spillTracker) watch(s *session.Session) {
	if s == nil {
		return
	}
	st.mu.Lock()
	if st.sessions == nil {
		st.sessions = make(map[*session.Session]*sessionSpills)
	}
	_, known := st.sessions[s]
	if !known {
		st.sessions[s] = &sessionSpills{files: make(map[string]bool)}
	}
	st.mu.Unlock()
	if !known {
		// Outside the lock: on an ended session OnEnd runs the hook at once.
		s.OnEnd(func() { st.end(s) })
	}
}

// track records spill paths reported to s. A path reported after s ended
// (a read racing the end) is deleted at once: the session is no longer
// known then, since every call watches its session first.
func (st *spillTracker) track(s *session.Session, paths ...string) {
	if s == nil {
		return
	}
	st.mu.Lock()
	ss := st.sessions[s]
	var late []string
	for _, p := range paths {
		switch {
		case p == "":
		case ss == nil:
			late = append(late, p)
		default:
			ss.files[p] = true
		}
	}
	st.mu.Unlock()
	st.removeAll(late...)
}

// release deletes spill files of s before s ends, and forgets them.
func (st *spillTracker) release(s *session.Session, paths ...string) {
	st.mu.Lock()
	if ss := st.sessions[s]; ss != nil {
		for _, p := range paths {
			delete(ss.files, p)
		}
	}
	st.mu.Unlock()
	st.removeAll(paths...)
}

// end deletes a session's spill files and forgets the session.
func (st *spillTracker) end(s *session.Session) {
	st.mu.Lock()
	var files map[string]bool
	if ss := st.sessions[s]; ss != nil {
		files = ss.files
	}
	delete(st.sessions, s)
	st.mu.Unlock()
	if st.keep {
		return
	}
	st.removeAll(slices.Sorted(maps.Keys(files))...)
}
