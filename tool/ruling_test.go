package tool

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOutcomesAreExact: the audit log's decisions, byte for byte
// (docs/spec.md §15).
func TestOutcomesAreExact(t *testing.T) {
	got := []Outcome{OutcomeAllow, OutcomeAccepted, OutcomeDeclined, OutcomeDismissed, OutcomeUnavailable, OutcomeDeny, OutcomeBlocked, OutcomeInvalid}
	want := []Outcome{"allow", "ask:accepted", "ask:declined", "ask:dismissed", "ask:unavailable", "deny", "blocked", "invalid"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatal(diff)
	}
}

// observed collects what an observer sees.
type observed struct {
	mu    sync.Mutex
	calls []Call
	res   []Result
}

func (o *observed) observer() Observer {
	return func(_ context.Context, call Call, res Result) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.calls, o.res = append(o.calls, call), append(o.res, res)
	}
}

func (o *observed) last(t *testing.T) (Call, Result) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.res) == 0 {
		t.Fatal("the observer saw no call")
	}
	return o.calls[len(o.calls)-1], o.res[len(o.res)-1]
}

func TestRulings(t *testing.T) {
	failing := Definition{Name: "bad", Parameters: bashLikeSchema(), Execute: func(context.Context, Call) (Result, error) {
		return Result{}, &Error{Code: CodeInvalidArgs, Message: "command must not be blank"}
	}}
	args := json.RawMessage(`{"command":"ls","description":"d"}`)
	for _, tc := range []struct {
		name string
		tool string
		args json.RawMessage
		pre  PreExecute
		post PostExecute
		want Ruling
	}{
		{"no step: allow", "echo", args, nil, nil, Ruling{Outcome: OutcomeAllow}},
		{"unknown tool", "nope", args, nil, nil, Ruling{Outcome: OutcomeInvalid}},
		{"schema", "echo", json.RawMessage(`{"command":1}`), nil, nil, Ruling{Outcome: OutcomeInvalid}},
		{"the tool's own check", "bad", args, nil, nil, Ruling{Outcome: OutcomeInvalid}},
		{"a deny without a ruling", "echo", args, func(context.Context, Call, PreNext) Decision { return Decision{Verdict: Deny} }, nil,
			Ruling{Outcome: OutcomeDeny}},
		{"a step's ruling", "echo", args, func(context.Context, Call, PreNext) Decision {
			return Decision{Verdict: Deny, Ruling: Ruling{Outcome: OutcomeDeclined, By: `ask rule "ls" (dsh config)`}}
		}, nil, Ruling{Outcome: OutcomeDeclined, By: `ask rule "ls" (dsh config)`}},
		{"an allow a step decided", "echo", args, func(ctx context.Context, call Call, next PreNext) Decision {
			d := next(ctx, call)
			d.Ruling = d.Ruling.Or(Ruling{Outcome: OutcomeAccepted, By: "why"})
			return d
		}, nil, Ruling{Outcome: OutcomeAccepted, By: "why"}},
		{"ask unanswered", "echo", args, func(context.Context, Call, PreNext) Decision { return Decision{Verdict: Ask} }, nil,
			Ruling{Outcome: OutcomeUnavailable}},
		{"pre panics", "echo", args, func(context.Context, Call, PreNext) Decision { panic("boom") }, nil,
			Ruling{Outcome: OutcomeDeny, By: "pre-execute middleware panicked"}},
		{"post blocks", "echo", args, nil, func(context.Context, Call, Result, PostNext) PostDecision {
			return PostDecision{Block: true, By: "hook: x"}
		}, Ruling{Outcome: OutcomeBlocked, By: "hook: x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := quietRegistry(t, echoTool("echo", bashLikeSchema()), failing)
			if tc.pre != nil {
				r.UsePre(tc.pre)
			}
			if tc.post != nil {
				r.UsePost(tc.post)
			}
			var o observed
			r.Observe(o.observer())
			res := r.Execute(context.Background(), Call{Name: tc.tool, Args: tc.args})
			if res.Ruling != tc.want {
				t.Errorf("result's ruling %+v, want %+v", res.Ruling, tc.want)
			}
			call, seen := o.last(t)
			if seen.Ruling != tc.want || call.Started.IsZero() || string(call.Args) != string(tc.args) {
				t.Errorf("observer saw %+v of %+v", seen.Ruling, call)
			}
		})
	}
}

// TestObserverSeesBothArguments: the call as sent, the result with the
// arguments that ran; a blocked result still says what ran.
func TestObserverSeesBothArguments(t *testing.T) {
	r := newRegistry(t, echoTool("echo", bashLikeSchema()))
	r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		call.Args = json.RawMessage(`{"command":"ls -a","description":"d"}`)
		return next(ctx, call)
	})
	r.UsePost(func(context.Context, Call, Result, PostNext) PostDecision { return PostDecision{Block: true} })
	var o observed
	remove := r.Observe(o.observer())
	r.Execute(context.Background(), Call{Name: "echo", Args: json.RawMessage(`{"command":"ls","description":"d"}`)})
	call, res := o.last(t)
	if string(call.Args) != `{"command":"ls","description":"d"}` || string(res.Args) != `{"command":"ls -a","description":"d"}` || !res.Executed || !res.IsError {
		t.Errorf("call args %s, result args %s, executed %v, error %v", call.Args, res.Args, res.Executed, res.IsError)
	}
	remove()
	r.Execute(context.Background(), Call{Name: "echo", Args: json.RawMessage(`{"command":"x","description":"d"}`)})
	if len(o.res) != 1 {
		t.Errorf("a removed observer saw %d calls", len(o.res))
	}
}

// TestSuspendedCallIsNotObserved: it ends when it is repeated.
func TestSuspendedCallIsNotObserved(t *testing.T) {
	r := newRegistry(t, echoTool("echo", bashLikeSchema()))
	r.UsePre(func(context.Context, Call, PreNext) Decision {
		return Decision{Verdict: Suspend, Question: &Question{Message: "?"}}
	})
	var o observed
	r.Observe(o.observer())
	r.Execute(context.Background(), Call{Name: "echo", Args: json.RawMessage(`{"command":"x","description":"d"}`)})
	if len(o.res) != 0 {
		t.Errorf("observed %d calls", len(o.res))
	}
}

func TestPanickingObserver(t *testing.T) {
	r := quietRegistry(t, echoTool("echo", bashLikeSchema()))
	r.Observe(func(context.Context, Call, Result) { panic("observer") })
	res := r.Execute(context.Background(), Call{Name: "echo", Args: json.RawMessage(`{"command":"x","description":"d"}`)})
	if res.IsError {
		t.Errorf("a panicking observer changed the result: %+v", res)
	}
}

// quietRegistry is a registry whose contained panics are not logged.
func quietRegistry(t *testing.T, defs ...Definition) *Registry {
	t.Helper()
	r := NewRegistry(WithLogger(slog.New(slog.DiscardHandler)))
	for _, d := range defs {
		if err := r.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestObserverSeesRewriteOfRefusedCall: a step rewrites the call and a
// later one denies it: the result names the arguments the denying step
// judged, so the log shows the rewritten command and the original.
func TestObserverSeesRewriteOfRefusedCall(t *testing.T) {
	r := newRegistry(t, echoTool("echo", bashLikeSchema()))
	r.UsePre(func(ctx context.Context, call Call, next PreNext) Decision {
		call.Args = json.RawMessage(`{"command":"rm -rf x","description":"d"}`)
		return next(ctx, call)
	})
	r.UsePre(func(context.Context, Call, PreNext) Decision {
		return Decision{Verdict: Deny, Reason: "no rm"}
	})
	var o observed
	r.Observe(o.observer())
	r.Execute(context.Background(), Call{Name: "echo", Args: json.RawMessage(`{"command":"ls","description":"d"}`)})
	call, res := o.last(t)
	if string(call.Args) != `{"command":"ls","description":"d"}` || string(res.Args) != `{"command":"rm -rf x","description":"d"}` || res.Executed || !res.IsError {
		t.Errorf("call args %s, result args %s, executed %v, error %v", call.Args, res.Args, res.Executed, res.IsError)
	}
}
