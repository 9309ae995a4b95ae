package permissions

// The spans of the gate's steps under a call's span (docs/spec.md §15.5)
// and their attributes; the question's span is tool.SpanAsk.
const (
	SpanPolicy = "dsh.policy"
	// AttrDecision is the policy's decision (allow, ask, deny) on a policy
	// span; AttrDecidedBy the rule or default that made it.
	AttrDecision  = "dsh.policy.decision"
	AttrDecidedBy = "dsh.decided_by"
)
