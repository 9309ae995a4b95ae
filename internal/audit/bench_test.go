package audit_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/audit"
	"github.com/dsh-go/dsh/redact"
	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool"
	"github.com/dsh-go/dsh/tool/bashtool"
)

// BenchmarkCall is the audit log's cost per call: rendering, redacting
// and appending the line of a `bash true` call to a file. Against the
// round trip of such a call (BenchmarkOpsOverhead in cmd/dsh) it is the
// log's share of the 3% budget.
//
//	go test -run '^$' -bench . -count 6 ./internal/audit/
func BenchmarkCall(b *testing.B) {
	red, _ := redact.New(redact.Known)
	l := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{Redactor: red})
	defer l.Close()
	s := session.New("IZAO6JVXSWB4IELHMLO5WKYRPI", "/work")
	defer s.End()
	args, _ := json.Marshal(map[string]any{"command": "true", "description": "do nothing"})
	call := tool.Call{Name: "bash", Args: args, Session: s, Client: "claude-code/2.1.0", Started: time.Now()}
	code := 0
	res := tool.Result{Executed: true, Ruling: tool.Ruling{Outcome: tool.OutcomeAllow, By: "read-only command"},
		Structured: bashtool.Structured{ExitCode: &code, Stdout: &bashtool.StreamFacts{}, Stderr: &bashtool.StreamFacts{}}}
	for b.Loop() {
		l.Call(b.Context(), call, res)
	}
}
