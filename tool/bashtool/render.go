package bashtool

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/tasks"
)

// Aborted is the text of a call its caller cancelled (exact, docs/spec.md
// §3.4), also when the cancellation came while the user was being asked.
const Aborted = "command aborted"

// The model-facing strings of docs/spec.md §3.4–§3.5 (§3.4a included), each
// in one place. Each marker line starts with its opening from package
// marker, which guards command output that imitates one.
const (
	noOutput        = "(no output)"
	unavailablePath = "(unavailable)"
	errDisabled     = "run_in_background is disabled for this deployment (enableRunInBackground: false)"
	errNoRuntime    = "background tasks unavailable: load the task runtime and the task tools"
	killedNoSignal  = "killed before exit"
)

func truncatedNotice(path string) string {
	return marker.TruncatedOpen + "full output: " + path + "]"
}

func cappedNotice(bytes int64, path string) string {
	return fmt.Sprintf(marker.TruncatedOpen+"first %d bytes saved: %s]", bytes, path)
}

func omittedMarker(n int64) string { return marker.Omitted(n) }

func timedOutMarker(ms int64) string { return "[" + timedOutDetail(ms) + "]" }
func timedOutDetail(ms int64) string { return fmt.Sprintf("timed out after %dms", ms) }
func signalMarker(sig string) string { return signalOpen + sig + "]" }
func exitMarker(code int) string     { return exitOpen + strconv.Itoa(code) + "]" }

// The openings of the final markers, which parseExit reads back.
const (
	signalOpen = marker.SignalOpen
	exitOpen   = marker.ExitOpen
)

func startedText(id string) string { return marker.StartedOpen + id }

func droppedNotice(paths []string) string {
	list := unavailablePath
	if len(paths) > 0 {
		list = strings.Join(paths, ", ")
	}
	return marker.DroppedOpen + list + "]"
}

func invalidBlank(name string) string { return "invalid " + name + ": expected a non-empty string" }

// DescriptionHint is the line that ends the error of a call without a
// description, or with a blank one: what to send (exact, docs/spec.md
// §3.2).
const DescriptionHint = "description: a 5-10 word summary of the command, for display"

func invalidTimeout(raw string) string {
	return "invalid timeoutMs: expected a positive number, got " + raw
}

// streamText is one stream's text: all of it, or, when it was truncated,
// what was kept of it and its truncation notice.
func streamText(o bash.Output) string {
	if !o.Truncated {
		return o.Text
	}
	return keptText(o) + "\n" + streamNotice(o)
}

// keptText is what was kept of a truncated stream (docs/spec.md §3.4a): the
// tail, after the head and a line that counts the bytes between them when a
// head was kept.
func keptText(o bash.Output) string {
	if o.Head == "" {
		return o.Text
	}
	marker := omittedMarker(o.OmittedBytes)
	var b strings.Builder
	b.Grow(len(o.Head) + 1 + len(marker) + 1 + len(o.Text))
	b.WriteString(o.Head)
	if !strings.HasSuffix(o.Head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(marker)
	b.WriteByte('\n')
	b.WriteString(o.Text)
	return b.String()
}

// streamNotice says where a truncated stream's full output is.
func streamNotice(o bash.Output) string {
	switch {
	case o.SpillPath == "":
		return truncatedNotice(unavailablePath)
	case o.SpillCapped:
		return cappedNotice(o.SpillBytes, o.SpillPath)
	default:
		return truncatedNotice(o.SpillPath)
	}
}

// Render is the text the model reads for a foreground run (docs/spec.md §3.4):
// the streams (each with its head, §3.4a, when one was kept), "(no output)"
// when both are empty, then the markers, each on its own line: a timeout,
// then a signal or a non-zero exit code.
func Render(r bash.Result) string { return render(r, "") }

// render is Render with, when hint is not empty, the sandbox's hint line
// between the body and the markers (docs/spec.md §11).
func render(r bash.Result, hint string) string {
	body := bash.JoinStreams(streamText(r.Stdout), streamText(r.Stderr))
	if body == "" {
		body = noOutput
	}
	var markers []string
	if hint != "" {
		markers = append(markers, hint)
	}
	if r.TimedOut {
		markers = append(markers, timedOutMarker(r.Timeout.Milliseconds()))
	}
	switch {
	case r.Signal != "":
		markers = append(markers, signalMarker(r.Signal))
	case r.ExitCode != nil && *r.ExitCode != 0:
		markers = append(markers, exitMarker(*r.ExitCode))
	}
	if len(markers) == 0 {
		return body
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + strings.Join(markers, "\n")
}

// readText is a background read as the model sees it (docs/spec.md §3.5): the
// delta, and, when unread output was dropped from memory, where the full
// output is.
func readText(r bash.ReadResult) string {
	if !r.Lossy {
		return r.Delta
	}
	var paths []string
	for _, p := range []string{r.StdoutSpill, r.StderrSpill} {
		if p != "" {
			paths = append(paths, p)
		}
	}
	text := r.Delta
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + droppedNotice(paths)
}

// outcome maps a finished background process to a task outcome. Its Exit
// facts say what its Detail says, no more (a kill before exit carries no
// code, even when the process's own exit raced the kill), and how much each
// stream wrote.
func outcome(st bash.State, timeoutMs int64) tasks.Outcome {
	o := ending(st, timeoutMs)
	o.Exit.StdoutBytes, o.Exit.StderrBytes = st.StdoutBytes, st.StderrBytes
	return o
}

// ending is how the process ended, as a task outcome.
func ending(st bash.State, timeoutMs int64) tasks.Outcome {
	switch {
	case st.Err != nil:
		// The executor lost the process (a dropped connection): how it
		// ended is unknown, which is a failure, not a kill.
		return tasks.Outcome{Status: tasks.Failed, Err: st.Err}
	case st.TimedOut:
		// A yielded run's timeout (docs/spec.md §12).
		return tasks.Outcome{Status: tasks.Killed, Detail: timedOutDetail(timeoutMs), Exit: tasks.Exit{Signal: st.Signal, TimedOut: true}}
	case st.Status == bash.StatusKilled && st.Signal != "":
		return tasks.Outcome{Status: tasks.Killed, Detail: "signal: " + st.Signal, Exit: tasks.Exit{Signal: st.Signal}}
	case st.Status == bash.StatusKilled:
		return tasks.Outcome{Status: tasks.Killed, Detail: killedNoSignal}
	case st.ExitCode != nil:
		code := *st.ExitCode
		return tasks.Outcome{Status: tasks.Completed, Detail: "exit code: " + strconv.Itoa(code), Exit: tasks.Exit{Code: &code}}
	default:
		// A signal death is always killed; this is a process that ended
		// without a state, which the executor never reports.
		return tasks.Outcome{Status: tasks.Failed, Err: fmt.Errorf("process ended without an exit status")}
	}
}

// parseExit reads how a command ended from the final marker line of a
// result text (docs/spec.md §3.7). The leading "\n" is required, so output that
// merely ends in marker-like text parses as exit 0.
func parseExit(text string) (code int, signal string) {
	if i := strings.LastIndex(text, "\n"+signalOpen); i >= 0 && strings.HasSuffix(text, "]") {
		sig := text[i+1+len(signalOpen) : len(text)-1]
		if sig != "" && !strings.ContainsAny(sig, "\n]") {
			return 0, sig
		}
	}
	if i := strings.LastIndex(text, "\n"+exitOpen); i >= 0 && strings.HasSuffix(text, "]") {
		if n, err := strconv.Atoi(text[i+1+len(exitOpen) : len(text)-1]); err == nil {
			return n, ""
		}
	}
	return 0, ""
}
