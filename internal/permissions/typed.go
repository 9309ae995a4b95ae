package permissions

// Typing into a task (docs/spec.md §4.2a): task_input can run commands the
// policy never saw. Into a shell, each line it submits is decided as a
// bash call's command would be; into any other program (python, psql,
// less, an ssh session) the policy cannot read what the text does, so the
// user is asked, unless the task is sandboxed: the sandbox is then the
// boundary, as it is for the task's own command.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// TypedTask is what the gate knows of a task that a call types into.
type TypedTask struct {
	// Command is the task's command line.
	Command string
	// Foreground names the program input goes to now ("python3"); ""
	// when unknown (the command's program is taken then).
	Foreground string
	// Sandboxed: the task runs in the sandbox.
	Sandboxed bool
}

// TaskLookup finds the task id of session s that has a terminal.
type TaskLookup func(s *session.Session, id string) (TypedTask, bool)

// shells are the programs whose input lines are commands the policy reads.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "fish": true, "ksh": true, "mksh": true}

// reasonNotShell is the REASON of the question about typing into another
// program than a shell (exact).
func reasonNotShell(program string) string {
	return program + " is not a shell: the command policy cannot tell what this input runs"
}

// reasonEdited is the REASON for a line edited with keys the gate cannot
// follow (history, completion) (exact).
const reasonEdited = "the line was edited with keys the command policy cannot follow"

// typedQuestion is what the user is asked about typing text into a task
// running command (exact, docs/spec.md §4.2a).
func typedQuestion(text string, keys []string, command, reason string) tool.Question {
	reason = tool.Visible(reason)
	return tool.Question{
		Message: "Type this into a task?\n\n" + tool.ShownCommand(text) + keysText(keys) + "\n\ninto: " + tool.ShownCommand(command) + "\n\n" + reason,
		Reason:  reason, Title: "Type into a task?",
	}
}

// typed decides a task_input call.
func (g *Gate) typed(ctx context.Context, call tool.Call, next tool.PreNext) tool.Decision {
	var a tasktool.InputArgs
	id, task, ok := "", TypedTask{}, false
	if g.tasks != nil && json.Unmarshal(call.Args, &a) == nil {
		id = strings.TrimSpace(a.TaskID)
		task, ok = g.tasks(call.Session, id)
	}
	st := g.state(call.Session)
	switch {
	case !ok && call.Advice.Ask != "":
		// A hook asked; nothing else can be decided here.
		return check{g: g, st: st, call: call}.askOther(ctx, next, call.Advice.Ask)
	case !ok:
		return next(ctx, call) // the tool says why: bad arguments, unknown, another's, no terminal
	case st.unruled && call.Advice.Ask == "":
		return next(ctx, call)
	case st.managed != "":
		return tool.Decision{Verdict: tool.Deny, Reason: errManaged(st.managed), Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: errManaged(st.managed)}}
	}
	c := check{g: g, st: st, call: call, advice: call.Advice}
	program := task.Foreground
	if program == "" {
		program = programOf(task.Command)
	}
	if !shells[program] {
		if task.Sandboxed && c.advice.Ask == "" {
			return ruled(next(ctx, call), tool.OutcomeAllow, bySandboxedTask)
		}
		reason := reasonNotShell(program)
		if c.advice.Ask != "" {
			reason = c.advice.Ask
		}
		return c.askTyped(ctx, next, typedQuestion(a.Text, a.Keys, task.Command, reason), func() {}, reason)
	}
	line := st.line(id)
	lines, after := line.typed(a.Text, a.Keys)
	reason, by := c.advice.Ask, c.advice.By
	for _, l := range lines {
		if l.unknown {
			reason, by = reasonEdited, reasonEdited
			continue
		}
		res := st.check(l.text)
		switch {
		case res.Decision == policy.Deny:
			return tool.Decision{Verdict: tool.Deny, Reason: res.DenyText(), Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: decidedBy(res)}}
		case res.Decision == policy.Ask && reason == "":
			reason, by = res.Reason(), decidedBy(res)
		}
	}
	commit := func() { line.set(after) }
	if reason == "" {
		d := next(ctx, call)
		if d.Verdict == tool.Allow {
			commit()
		}
		return ruled(d, tool.OutcomeAllow, byTypedLines)
	}
	q := typedQuestion(a.Text, a.Keys, task.Command, reason)
	return c.askTyped(ctx, next, q, commit, by)
}

// What decided a task_input call the gate let through unasked
// (tool.Ruling.By).
const (
	bySandboxedTask = "typed into a sandboxed task"
	byTypedLines    = "typed lines allowed by the command policy"
)

// askTyped asks q; an accepted answer commits the line and goes on.
func (c check) askTyped(ctx context.Context, next tool.PreNext, q tool.Question, commit func(), by string) tool.Decision {
	select {
	case c.st.asking <- struct{}{}:
	case <-ctx.Done():
		return c.aborted(by)
	}
	answer, err := c.askUser(ctx, q)
	<-c.st.asking
	return c.answered(ctx, next, q, answer, err, tool.Advice{Ask: q.Reason, By: by}, by, func() tool.Decision {
		d := next(ctx, c.call)
		if d.Verdict == tool.Allow {
			commit()
		}
		return d
	})
}

// keysText shows named keys after the text in a question.
func keysText(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return "\n(keys: " + tool.Visible(strings.Join(keys, " ")) + ")"
}

// programOf is the program a command line starts: its first word after
// variable assignments and the wrappers that run what follows (exec, env,
// command), as a base name. A shell run with -c or a script is not the
// shell the lines go to, so only a shell with flags alone counts as one.
func programOf(command string) string {
	words := strings.Fields(command)
	for len(words) > 0 && (strings.Contains(words[0], "=") || words[0] == "exec" || words[0] == "env" || words[0] == "command") {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	prog := filepath.Base(words[0])
	if shells[prog] {
		for _, w := range words[1:] {
			if runsOther(w) {
				return prog + " " + w
			}
		}
	}
	return prog
}

// runsOther reports whether a shell's argument makes it run something
// else than lines typed: a script, or -c among short flags (-lc).
func runsOther(arg string) bool {
	if !strings.HasPrefix(arg, "-") {
		return true
	}
	return !strings.HasPrefix(arg, "--") && strings.Contains(arg, "c")
}

// typedLine is what was typed into a shell task since its last Enter,
// the line the next Enter submits.
type typedLine struct {
	mu  sync.Mutex
	cur pending
}

// pending is a line being typed; unknown once edited with keys the gate
// cannot follow (Tab completion, history, cursor moves).
type pending struct {
	text    string
	unknown bool
}

// line is the typed line of task id.
func (st *sessionState) line(id string) *typedLine {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.lines == nil {
		st.lines = make(map[string]*typedLine)
	}
	l := st.lines[id]
	if l == nil {
		l = &typedLine{}
		st.lines[id] = l
	}
	return l
}

func (l *typedLine) set(p pending) {
	l.mu.Lock()
	l.cur = p
	l.mu.Unlock()
}

// typed applies text then keys to the line: the lines they submit, and
// the line left after them.
func (l *typedLine) typed(text string, keys []string) (submitted []pending, after pending) {
	l.mu.Lock()
	cur := l.cur
	l.mu.Unlock()
	for _, r := range text {
		cur, submitted = edit(cur, submitted, runeKey(r), r)
	}
	for _, k := range keys {
		cur, submitted = edit(cur, submitted, k, 0)
	}
	return submitted, cur
}

// runeKey names the key a typed character is, "" for a printable one.
func runeKey(r rune) string {
	switch {
	case r == '\r' || r == '\n':
		return "Enter"
	case r == 0x7f || r == 0x08:
		return "Backspace"
	case r < 0x20:
		return "C-" + string(rune('a'+r-1))
	}
	return ""
}

// edit applies one key (or the printable r when key is "") as a shell's
// line editor would.
func edit(cur pending, submitted []pending, key string, r rune) (pending, []pending) {
	switch key {
	case "":
		cur.text += string(r)
	case "Enter", "C-j", "C-m":
		submitted = append(submitted, cur)
		cur = pending{}
	case "Backspace", "C-h":
		if rs := []rune(cur.text); len(rs) > 0 {
			cur.text = string(rs[:len(rs)-1])
		}
	case "C-u", "C-c":
		cur = pending{}
	default:
		cur.unknown = true
	}
	return cur, submitted
}
