package tasktool

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/tasks"
)

// Texts and limits of the renderings the model reads.
const (
	noTasksText      = "(no background tasks)"
	noNewOutputText  = "(no new output)"
	noticeReadOutput = ". Read its output with task_output."
	maxLabelRunes    = 120
	labelEllipsis    = "…"
)

// StatusLine renders "[status: <status>, <detail>]", or "[status: <status>]"
// when there is no detail (exact).
func StatusLine(s tasks.Snapshot) string {
	if s.Detail == "" {
		return marker.StatusOpen + string(s.Status) + "]"
	}
	return marker.StatusOpen + string(s.Status) + ", " + s.Detail + "]"
}

// Notice is the finish notice of s for its owner (exact, one line):
// "background task <id> (<kind>: <label>) finished <status line>. Read its
// output with task_output.", with the label shortened by ShortLabel.
func Notice(s tasks.Snapshot) string {
	return marker.NoticeOpen + s.ID + " (" + s.Kind + ": " + ShortLabel(s.Label) + ") finished " +
		StatusLine(s) + noticeReadOutput
}

// ShortLabel renders a label on one bounded line: whitespace runs (line
// breaks included) become one space, the ends are trimmed, and a label
// longer than 120 characters is cut to 119 and ends in "…". It reads no more
// of a huge label than it shows.
func ShortLabel(label string) string {
	out := make([]rune, 0, 32)
	pendingSpace := false
	for _, r := range label {
		if unicode.IsSpace(r) {
			pendingSpace = len(out) > 0
			continue
		}
		if pendingSpace {
			out = append(out, ' ')
			pendingSpace = false
		}
		out = append(out, r)
		if len(out) > maxLabelRunes {
			kept := strings.TrimRight(string(out[:maxLabelRunes-1]), " ")
			return kept + labelEllipsis
		}
	}
	return string(out)
}

// listLine renders one task of task_list; a task with a terminal says
// its size: "bash-2 [bash, tty 80x24] running — python3 -q".
func listLine(s tasks.Snapshot) string {
	kind := s.Kind
	if t := s.Terminal; t.Cols > 0 {
		kind += ", tty " + strconv.Itoa(t.Cols) + "x" + strconv.Itoa(t.Rows)
	}
	return s.ID + " [" + kind + "] " + string(s.Status) + " — " + ShortLabel(s.Label)
}

// StillRunningLine is the line task_output adds before the status line
// when its wait ran out after d with the task still running (exact):
// "[still running after <N> ms]".
func StillRunningLine(d time.Duration) string {
	return marker.YieldOpen + strconv.FormatInt(d.Milliseconds(), 10) + " ms]"
}

// outputText renders task_output's text: the still-running line comes
// before the status line when a wait ran out after waited (0: no wait, or
// one that saw the end) and the task has not ended since.
func outputText(text string, waited time.Duration, s tasks.Snapshot) string {
	if text == "" {
		text = noNewOutputText
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if waited > 0 && !s.Status.Terminal() {
		text += StillRunningLine(waited) + "\n"
	}
	return text + StatusLine(s)
}

// killText renders task_kill's text.
func killText(res tasks.KillResult, s tasks.Snapshot) string {
	if res == tasks.KillAlreadyTerminal {
		return "task " + s.ID + " had already finished " + StatusLine(s)
	}
	return "requested cancellation of task " + s.ID
}
