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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"

	"github.com/dsh-go/dsh/bash/term"
	"github.com/dsh-go/dsh/policy"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tasks"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/tasktool"
)

// TypedTask is what the gate knows of a task that a call types into.
type TypedTask struct {
	// Command is the task's command line.
	Command string
	// Foreground lists the programs input goes to now (the terminal's
	// foreground process group); nil when unknown.
	Foreground []tasks.Program
	// Sandboxed: the task runs in the sandbox. Running: it still runs.
	Sandboxed, Running bool
	// Typed is what was typed into it most recently (truncated: more came
	// before), from which the line being typed is followed.
	Typed     []byte
	Truncated bool
}

// TaskLookup finds the task id of session s that has a terminal.
type TaskLookup func(s *session.Session, id string) (TypedTask, bool)

// shells are the programs whose input lines are commands the policy reads.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "fish": true, "ksh": true, "mksh": true}

// The REASONs of the questions about typed input (exact).
const (
	reasonShellOutside = "the shell runs outside the sandbox, and the command policy cannot follow what an interactive shell does with input (key bindings, history, terminal settings)"
	reasonEdited       = "the line was edited with keys the command policy cannot follow"
	reasonSeveral      = "it submits more than one line: the command policy cannot tell which program reads the lines after the first"
	reasonInteractive  = "it uses a feature of interactive shells the command policy cannot follow (history, aliases, traps, prompts)"
)

func reasonNotShell(program string) string {
	return program + " is not a shell: the command policy cannot tell what this input runs"
}

// typedQuestion is what the user is asked about typing text into a task
// running command (exact, docs/spec.md §4.2a).
func typedQuestion(before, text string, keys []string, command, reason string) tool.Question {
	reason = tool.Visible(reason)
	shown := tool.ShownCommand(text) + keysText(keys)
	if before != "" {
		shown += "\n(after the line typed before: " + tool.ShownCommand(before) + ")"
	}
	return tool.Question{
		Message: "Type this into a task?\n\n" + shown + "\n\ninto: " + tool.ShownCommand(command) + "\n\n" + reason,
		Reason:  reason, Title: "Type into a task?",
	}
}

// typed decides a task_input call.
func (g *Gate) typed(ctx context.Context, call tool.Call, next tool.PreNext) tool.Decision {
	st := g.state(call.Session)
	if st.unruled && call.Advice.Ask == "" {
		return next(ctx, call) // no policy: not even the task is looked at
	}
	var a tasktool.InputArgs
	task, ok := TypedTask{}, false
	if g.tasks != nil && json.Unmarshal(call.Args, &a) == nil {
		task, ok = g.tasks(call.Session, strings.TrimSpace(a.TaskID))
	}
	switch {
	case !ok && call.Advice.Ask != "":
		// A hook asked; nothing else can be decided here.
		return check{g: g, st: st, call: call}.askOther(ctx, next, call.Advice.Ask)
	case !ok:
		return next(ctx, call) // the tool says why: bad arguments, unknown, another's, no terminal
	case st.managed != "":
		return tool.Decision{Verdict: tool.Deny, Reason: errManaged(st.managed), Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: errManaged(st.managed)}}
	}
	input, err := tasktool.InputBytes(a, term.Keys)
	if err != nil || !task.Running {
		return next(ctx, call) // the tool refuses it, nothing typed: no question
	}
	c := check{g: g, st: st, call: call, advice: call.Advice}
	reason, by, before := "", byInterrupt, pending{}
	if !interruptOnly(input) {
		var deny *tool.Decision
		if reason, by, before, deny = g.typedInto(st, task, input); deny != nil {
			return *deny // a deny wins over a hook's ask, as for a command
		}
	}
	if c.advice.Ask != "" {
		reason, by = c.advice.Ask, c.advice.By
	}
	if reason == "" {
		return ruled(next(ctx, call), tool.OutcomeAllow, by)
	}
	return c.askTyped(ctx, next, typedQuestion(before.text, a.Text, a.Keys, task.Command, reason), by)
}

// typedInto decides input typed into task by what reads it: the reason
// to ask ("" for none) and what decided, or a denial; before is the line
// the input continues.
func (g *Gate) typedInto(st *sessionState, task TypedTask, input []byte) (reason, by string, before pending, deny *tool.Decision) {
	program, shell := g.shellReads(task)
	if !shell {
		if task.Sandboxed {
			return "", bySandboxedTask, before, nil
		}
		r := reasonNotShell(program)
		return r, r, before, nil
	}
	before, lines, after := submitted(task.Typed, task.Truncated, input)
	for _, l := range lines { // denials first, whatever else asks
		if res := st.check(l.text); res.Decision == policy.Deny {
			return "", "", before, &tool.Decision{Verdict: tool.Deny, Reason: res.DenyText(), Ruling: tool.Ruling{Outcome: tool.OutcomeDeny, By: decidedBy(res)}}
		}
	}
	switch {
	case !task.Sandboxed:
		return reasonShellOutside, reasonShellOutside, before, nil
	case len(lines) > 1:
		return reasonSeveral, reasonSeveral, before, nil
	case after.unknown || slices.ContainsFunc(lines, func(l pending) bool { return l.unknown }):
		return reasonEdited, reasonEdited, before, nil
	case slices.ContainsFunc(lines, func(l pending) bool { return interactiveOnly(l.text) }):
		return reasonInteractive, reasonInteractive, before, nil
	}
	for _, l := range lines {
		if res := st.check(l.text); res.Decision == policy.Ask {
			return res.Reason(), decidedBy(res), before, nil
		}
	}
	return "", byTypedLines, before, nil
}

// What decided a task_input call the gate let through unasked
// (tool.Ruling.By).
const (
	byInterrupt     = "only interrupts: C-c, C-\\ or C-z"
	bySandboxedTask = "typed into a sandboxed task"
	byTypedLines    = "typed lines allowed by the command policy"
)

// askTyped asks q; an accepted answer goes on.
func (c check) askTyped(ctx context.Context, next tool.PreNext, q tool.Question, by string) tool.Decision {
	select {
	case c.st.asking <- struct{}{}:
	case <-ctx.Done():
		return c.aborted(by)
	}
	answer, err := c.askUser(ctx, q)
	<-c.st.asking
	return c.answered(ctx, next, q, answer, err, tool.Advice{Ask: q.Reason, By: by}, by, func() tool.Decision { return next(ctx, c.call) })
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

// pending is a line being typed; unknown once edited with keys the gate
// cannot follow (Tab completion, history, cursor moves).
type pending struct {
	text    string
	unknown bool
}

// editor follows a shell's line editor over what is typed, as far as it
// can: printable text, Backspace, C-u on a line it knows, C-c, and line
// ends. A line ended by a backslash (bash would go on reading it, unless
// the backslash is quoted or in a comment) is one it cannot follow.
type editor struct {
	cur pending
}

// feed applies p, calling submit for each line it submits.
func (e *editor) feed(p []byte, submit func(pending)) {
	for _, r := range string(p) {
		switch {
		case r == '\r' || r == '\n':
			// A backslash may continue the line into the next: both
			// are unknown.
			cont := strings.HasSuffix(e.cur.text, "\\")
			e.cur.unknown = e.cur.unknown || cont
			submit(e.cur)
			e.cur = pending{unknown: cont}
		case r == 0x03: // C-c: the line is dropped
			e.cur = pending{}
		case (r == 0x7f || r == 0x08) && !e.cur.unknown:
			if rs := []rune(e.cur.text); len(rs) > 0 {
				e.cur.text = string(rs[:len(rs)-1])
			}
		case r == 0x15 && !e.cur.unknown: // C-u on a known line: empty
			e.cur.text = ""
		case r < 0x20 || r >= 0x7f:
			// A control, or a byte readline may take for Meta where
			// the locale is not UTF-8.
			e.cur.unknown = true
		default:
			e.cur.text += string(r)
		}
	}
}

// submitted follows input typed after what was typed before (truncated:
// its start is unknown): the line it continues, the lines it submits, and
// the line it leaves.
func submitted(typed []byte, truncated bool, input []byte) (before pending, lines []pending, after pending) {
	e := &editor{cur: pending{unknown: truncated}}
	e.feed(typed, func(pending) {})
	before = e.cur
	e.feed(input, func(l pending) { lines = append(lines, l) })
	return before, lines, e.cur
}

// interruptOnly reports input that only interrupts, quits or suspends
// (C-c, C-\, C-z): signals to the foreground program, no command.
func interruptOnly(p []byte) bool {
	for _, b := range p {
		if b != 0x03 && b != 0x1c && b != 0x1a {
			return false
		}
	}
	return len(p) > 0
}

// interactiveWords are what an interactive shell runs later or
// elsewhere than where the line shows it: aliases, history, traps,
// key bindings, completions and the prompts.
var interactiveWords = map[string]bool{
	"alias": true, "fc": true, "history": true, "bind": true, "trap": true, "complete": true,
	"PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true, "PS4": true,
}

// interactiveOnly reports a line that uses a feature of interactive
// shells the policy does not follow: one of interactiveWords, history
// expansion (a "!" that is not followed by a blank, "=" or "("), or a
// quick substitution ("^old^new").
func interactiveOnly(line string) bool {
	if strings.HasPrefix(strings.TrimSpace(line), "^") {
		return true
	}
	for i := 0; i+1 < len(line); i++ {
		if line[i] == '!' && !strings.ContainsRune(" \t=(", rune(line[i+1])) {
			return true
		}
	}
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if interactiveWords[w] {
			return true
		}
	}
	return false
}

// shellReads reports whether the input goes to an interactive shell:
// every process of the terminal's foreground group is one (a system
// shell's executable, run with flags alone); else the program that reads
// it, for the question. Unknown: the task's command's program.
func (g *Gate) shellReads(task TypedTask) (program string, ok bool) {
	if len(task.Foreground) == 0 {
		return programOf(task.Command), false
	}
	// A program that is no shell names the question best; then a shell
	// that runs something else (bash -c).
	var other string
	for _, p := range task.Foreground {
		name := programOf(strings.Join(p.Args, " "))
		switch {
		case !g.systemShell(p.Exe):
			if name == "" {
				name = filepath.Base(p.Exe)
			}
			return name, false
		case !shells[name] && other == "":
			other = name
		}
	}
	return other, other == ""
}

// systemShell reports whether exe is one of the system's shells: a
// binary named bash, sh, … in /bin or /usr/bin, owned by root, whose
// resolved path is exe and is itself named like a shell. A program that
// merely calls itself bash, or a link a command planted elsewhere, is
// not one.
func (g *Gate) systemShell(exe string) bool {
	g.shellBinsOnce.Do(func() { g.shellBins = findShells() })
	return exe != "" && g.shellBins[exe]
}

func findShells() map[string]bool {
	found := map[string]bool{}
	for name := range shells {
		for _, dir := range []string{"/bin", "/usr/bin"} {
			real, err := filepath.EvalSymlinks(filepath.Join(dir, name))
			if err != nil || !shells[filepath.Base(real)] {
				continue
			}
			if fi, err := os.Stat(real); err == nil && ownedByRoot(fi) {
				found[real] = true
			}
		}
	}
	return found
}

func ownedByRoot(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == 0 && fi.Mode().Perm()&0o022 == 0
}
