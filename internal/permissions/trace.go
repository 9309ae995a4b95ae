package permissions

import (
	"context"
	"errors"

	"github.com/dsh-go/dsh/tool"
)

// The spans of the gate's steps under a call's span (docs/spec.md §15.4)
// and their attributes.
const (
	SpanPolicy = "dsh.policy"
	SpanAsk    = "dsh.ask"
	// AttrDecision is the policy's decision (allow, ask, deny) on a policy
	// span; AttrDecidedBy the rule or default that made it.
	AttrDecision  = "dsh.policy.decision"
	AttrDecidedBy = "dsh.decided_by"
	// AttrAnswer is how a question ended: accepted, declined, dismissed
	// (timed out or cancelled), unavailable (nobody could be asked),
	// suspended (asked between requests), aborted (the call was), failed.
	AttrAnswer = "dsh.ask.answer"
)

// answerName is AttrAnswer's value for an asker's answer and error.
func answerName(a tool.Answer, err error) string {
	switch {
	case errors.Is(err, tool.ErrCannotAsk):
		return "unavailable"
	case errors.Is(err, tool.ErrSuspend):
		return "suspended"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "aborted"
	case err != nil:
		return "failed"
	case a.Choice == tool.Accepted:
		return "accepted"
	case a.Choice == tool.Declined:
		return "declined"
	}
	return "dismissed"
}
