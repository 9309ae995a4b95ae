package bashtool

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/internal/marker"
	"github.com/dsh-go/dsh/tool"
)

// Network by domain (docs/spec.md §11.1): a sandboxed command's
// connection to a host no rule names asks the call's user, and the
// result of a call whose connections were refused says so, so that the
// model knows why a download failed and can ask the user.

// netQuestion is the question about a host (exact, docs/spec.md §11.1):
// "Allow network access to HOST:PORT for this session? (command: CMD)",
// the command cut and shown as every question shows it.
func netQuestion(host string, port int, command string) string {
	return "Allow network access to " + tool.Visible(host) + ":" + strconv.Itoa(port) +
		" for this session? (command: " + tool.ShownCommand(command) + ")"
}

// netCall is a call's part in the network by domain: it asks the call's
// user, through its front end.
func netCall(call tool.Call, command string) *bash.NetCall {
	n := &bash.NetCall{ID: call.ID}
	if n.ID == "" {
		n.ID = "call-" + strconv.FormatUint(call.Seq, 10)
	}
	if call.Asker == nil {
		return n
	}
	asker := call.Asker
	n.Ask = func(ctx context.Context, host string, port int) bash.NetAnswer {
		q := netQuestion(host, port, command)
		actx, span := tool.StartSpan(ctx, tool.SpanAsk)
		a, err := asker.Ask(actx, tool.Question{Message: q, Reason: "network access to " + host + ":" + strconv.Itoa(port),
			Title: "Allow network access?", ForSession: true})
		if span.IsRecording() {
			span.SetAttributes(attribute.String(tool.AttrAskAnswer, tool.AnswerName(a, err)),
				attribute.String("server.address", host), attribute.Int("server.port", port))
			span.End()
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return bash.NetDismissed
		case errors.Is(err, tool.ErrCannotAsk), errors.Is(err, tool.ErrSuspend):
			// A client that asks between requests cannot be asked while a
			// command runs.
			return bash.NetCannotAsk
		case err != nil:
			return bash.NetDismissed
		case a.Choice == tool.Accepted:
			return bash.NetAccepted
		case a.Choice == tool.Declined:
			return bash.NetDeclined
		}
		return bash.NetDismissed
	}
	return n
}

// maxRefusedShown is how many hosts the refusal line names.
const maxRefusedShown = 5

// refusedLine is the line of a result whose command had count
// connections refused (exact, docs/spec.md §11.1): "[network: N
// connections refused: host1, host2]", each host once, in the order
// first refused, at most five then "and K more"; "" when none were.
func refusedLine(count int, unique []string) string {
	if count == 0 {
		return ""
	}
	shown := slices.Clone(unique)
	if len(shown) > maxRefusedShown {
		shown = shown[:maxRefusedShown]
	}
	for i, h := range shown {
		shown[i] = tool.Visible(h)
	}
	list := strings.Join(shown, ", ")
	if more := len(unique) - len(shown); more > 0 {
		list += " and " + strconv.Itoa(more) + " more"
	}
	noun := " connections refused: "
	if count == 1 {
		noun = " connection refused: "
	}
	return marker.NetworkOpen + strconv.Itoa(count) + noun + list + "]"
}

// joinLines joins the lines that are not empty.
func joinLines(lines ...string) string {
	return strings.Join(slices.DeleteFunc(lines, func(s string) bool { return s == "" }), "\n")
}
