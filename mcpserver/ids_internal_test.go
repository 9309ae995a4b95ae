package mcpserver

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestRequestIDs: a request leaves with a random string id (130 bits),
// taken back once; answers with any other id are refused; notifications
// and responses pass as they are.
func TestRequestIDs(t *testing.T) {
	r := newRequestIDs()
	seen := map[string]bool{}
	var first string
	for n := 1; n <= 3; n++ {
		out := r.outgoing(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{}}`+"\n", n))
		var m struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(out, &m); err != nil || m.Method != "elicitation/create" || out[len(out)-1] != '\n' {
			t.Fatalf("outgoing = %s (%v)", out, err)
		}
		id, ok := m.ID.(string)
		if !ok || len(id) != 26 || seen[id] {
			t.Fatalf("id %#v: want 26 fresh base32 characters", m.ID)
		}
		seen[id] = true
		if first == "" {
			first = id
		}
	}
	for _, msg := range []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, `{"jsonrpc":"2.0","id":7,"result":{}}`} {
		if got := string(r.outgoing([]byte(msg))); got != msg {
			t.Errorf("outgoing(%s) = %s", msg, got)
		}
	}
	answer := func(id string) (string, bool) {
		out, err := r.incoming([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept"}}`))
		return string(out), err == nil
	}
	if got, ok := answer(`"` + first + `"`); !ok || got != `{"id":1,"jsonrpc":"2.0","result":{"action":"accept"}}` {
		t.Errorf("the answer to the first request = %s, %v", got, ok)
	}
	for _, id := range []string{`"` + first + `"`, `1`, `2`, `"2"`, `null`, `"` + first[:25] + `"`} {
		if _, ok := answer(id); ok {
			t.Errorf("an answer with id %s was taken", id)
		}
	}
	if got, err := r.incoming([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)); err != nil || string(got) != `{"jsonrpc":"2.0","id":1,"method":"tools/call"}` {
		t.Errorf("a request from the client = %s, %v", got, err)
	}
}

// TestPendingRequestsAreBounded: past maxPending the oldest id is
// forgotten, and its late answer refused.
func TestPendingRequestsAreBounded(t *testing.T) {
	r := newRequestIDs()
	var ids []string
	for n := range maxPending + 1 {
		out := r.outgoing(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, n))
		var m struct{ ID string }
		_ = json.Unmarshal(out, &m)
		ids = append(ids, m.ID)
	}
	if len(r.sent) != maxPending || len(r.order) != maxPending {
		t.Fatalf("%d pending, %d in order; want %d", len(r.sent), len(r.order), maxPending)
	}
	if _, err := r.incoming([]byte(`{"id":"` + ids[0] + `","result":{}}`)); err == nil {
		t.Error("the oldest request's answer was taken")
	}
	if _, err := r.incoming([]byte(`{"id":"` + ids[maxPending] + `","result":{}}`)); err != nil {
		t.Error("the newest request's answer was refused")
	}
}

// TestMalformedAnswersAreRefused: the SDK reads the first value of a body
// with data after it, the last of keys given twice, keys in any case, and
// a message without result or error as an answer: each such message is
// refused, whatever its id (a review's forgeries of id 1).
func TestMalformedAnswersAreRefused(t *testing.T) {
	r := newRequestIDs()
	r.outgoing([]byte(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}`))
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"action":"accept"},"id":1}`,
		`{"jsonrpc":"2.0","id":1,"result":{"action":"accept"},"result":{"action":"accept"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{"action":"accept"},"id":1}]`,
		`[{"jsonrpc":"2.0","id":1,"result":{"action":"accept"}}] x`,
		`{"jsonrpc":"2.0","id":1,"result":{"action":"accept"}} {}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"Result":{"action":"accept"}}`,
		`{"jsonrpc":"2.0","ID":1,"id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":null,"result":{}}`,
		`"x"`, `[1]`, `{`,
	} {
		if out, err := r.incomingBody([]byte(body)); err == nil {
			t.Errorf("%s was taken as %s", body, out)
		}
	}
}
