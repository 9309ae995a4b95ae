package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/stacktest"
)

// stdioSession is a session of RunLines driven line by line.
type stdioSession struct {
	t     *testing.T
	in    *io.PipeWriter
	lines *bufio.Scanner
	done  chan error
}

func startStdio(t *testing.T) *stdioSession {
	t.Helper()
	s := newServer(t, "")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.RunLines(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	ss := &stdioSession{t: t, in: inW, lines: lines, done: done}
	ss.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := ss.next(); !strings.Contains(got, `"id":"init"`) {
		t.Fatalf("initialize: %s", got)
	}
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return ss
}

func (ss *stdioSession) send(line string) {
	ss.t.Helper()
	if _, err := io.WriteString(ss.in, line+"\n"); err != nil {
		ss.t.Fatalf("writing %.80q: %v", line, err)
	}
}

func (ss *stdioSession) next() string {
	ss.t.Helper()
	if !ss.lines.Scan() {
		ss.t.Fatalf("no answer: %v", ss.lines.Err())
	}
	return ss.lines.Text()
}

// end closes the input and checks that RunLines ended without an error.
func (ss *stdioSession) end() {
	ss.t.Helper()
	ss.in.Close()
	for ss.lines.Scan() {
	}
	if err := <-ss.done; err != nil {
		ss.t.Fatalf("RunLines: %v", err)
	}
}

// invalid is the exact reply to a line that is not a message the server
// takes.
func invalid(id, why string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"Invalid Request: ` + why + `"}}`
}

// malformed are lines that are not one JSON-RPC 2.0 message dsh takes,
// each with its exact reply.
var malformed = []struct{ line, reply string }{
	{`not json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: not valid JSON"}}`},
	{`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, invalid("null", "batches are not supported")},
	{`42`, invalid("null", "a message must be a JSON object")},
	{`null`, invalid("null", "a message must be a JSON object")},
	{`"ping"`, invalid("null", "a message must be a JSON object")},
	{`{}`, invalid("null", `\"jsonrpc\" must be \"2.0\"`)},
	{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, invalid("7", `\"jsonrpc\" must be \"2.0\"`)},
	{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, invalid("null", `\"id\" must be a string or an integer of at most 2^53`)},
	{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, invalid("null", `\"id\" must be a string or an integer of at most 2^53`)},
	{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, invalid("null", `\"id\" must be a string or an integer of at most 2^53`)},
	{`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, invalid("null", `\"id\" must be a string or an integer of at most 2^53`)},
	{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, invalid("1.5", `\"id\" must be a string or an integer of at most 2^53`)},
	{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, invalid("1e2", `\"id\" must be a string or an integer of at most 2^53`)},
	{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, invalid("9007199254740993", `\"id\" must be a string or an integer of at most 2^53`)},
	{`{"jsonrpc":"2.0","id":3,"method":42}`, invalid("3", `\"method\" must be a string`)},
	{`{"jsonrpc":"2.0","id":"a<b","method":null}`, invalid(`"a<b"`, `\"method\" must be a string`)},
	{`{"jsonrpc":"2.0","id":4,"method":"ping","params":5}`, invalid("4", `\"params\" must be an object or an array`)},
	{`{"jsonrpc":"2.0","id":"x","id":"y","method":"ping"}`, invalid("null", `a key is given twice: \"id\"`)},
	{`{"jsonrpc":"2.0","id":9}`, invalid("9", `neither a request (\"method\") nor a response (\"result\" or \"error\")`)},
	{`{"jsonrpc":"2.0","result":{}}`, invalid("null", `a response needs an \"id\"`)},
	{`{"jsonrpc":"2.0","id":9,"error":{"code":1.5,"message":"x"}}`, invalid("9", `\"error\" must be an object with an integer \"code\" and a string \"message\"`)},
	{`{"jsonrpc":"2.0","id":9,"error":"boom"}`, invalid("9", `\"error\" must be an object with an integer \"code\" and a string \"message\"`)},
	{strings.Repeat("[", 1001) + strings.Repeat("]", 1001), invalid("null", "nested deeper than 1000 levels")},
	{`{"jsonrpc":"2.0","id":6,"method":"ping","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, invalid("null", "nested deeper than 1000 levels")},
}

// TestMalformedLinesOnStdio: each line that is not a message the server
// takes gets its exact error reply, and the session answers the next call.
func TestMalformedLinesOnStdio(t *testing.T) {
	ss := startStdio(t)
	for i, m := range malformed {
		ss.send(m.line)
		if got := ss.next(); got != m.reply {
			t.Errorf("%.60q:\n got %s\nwant %s", m.line, got, m.reply)
		}
		ss.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
		if got, want := ss.next(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, 100+i); got != want {
			t.Fatalf("ping after %.60q: %s, want %s", m.line, got, want)
		}
	}
	ss.end()
}

// TestAcceptedOddLinesOnStdio: lines that are well-formed though odd (a
// response nobody asked for, null params, an unknown method) do not end
// the session either.
func TestAcceptedOddLinesOnStdio(t *testing.T) {
	ss := startStdio(t)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":77,"result":{}}`,
		`{"jsonrpc":"2.0","id":"77","error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"notifications/unknown","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}`,
		`{"jsonrpc":"2.0","id":-9007199254740992,"method":"nope"}`,
		`{"jsonrpc":"2.0","id":"p","method":"ping","params":null}`,
	} {
		ss.send(line)
	}
	ss.send(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	for {
		got := ss.next()
		if strings.Contains(got, `"id":"last"`) {
			break
		}
	}
	ss.end()
}

// TestRandomBytesOnStdio: a mebibyte of random bytes gets one error reply
// per non-blank line, and the session goes on.
func TestRandomBytesOnStdio(t *testing.T) {
	ss := startStdio(t)
	junk := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(15, 4))
	for i := range junk {
		junk[i] = byte(r.Uint32())
	}
	want := 0
	for l := range bytes.SplitSeq(junk, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			want++
		}
	}
	go func() { _, _ = ss.in.Write(append(junk, '\n')) }()
	got := 0
	for got < want {
		var reply struct {
			ID    any `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		line := ss.next()
		if err := json.Unmarshal([]byte(line), &reply); err != nil || (reply.Error.Code != -32700 && reply.Error.Code != -32600) {
			t.Fatalf("reply %d of %d: %s", got+1, want, line)
		}
		got++
	}
	ss.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if got := ss.next(); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
		t.Fatalf("ping after the random bytes: %s", got)
	}
	ss.end()
}

// TestMalformedFloodOnStdio: malformed lines interleaved with tool calls,
// sent in waves without waiting for replies: every call gets its result
// and every bad line its error. A wave stays under the session's limit of
// concurrent commands (16), which would refuse the calls past it.
func TestMalformedFloodOnStdio(t *testing.T) {
	t.Parallel()
	ss := startStdio(t)
	const rounds, wave = 100, 10
	errs, results := 0, map[int]bool{}
	for first := 0; first < rounds; first += wave {
		var lines strings.Builder
		for i := first; i < first+wave; i++ {
			lines.WriteString(malformed[i%len(malformed)].line + "\n")
			fmt.Fprintf(&lines, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo call-%d","description":"echo"}}}`+"\n", i, i)
		}
		go func() { _, _ = io.WriteString(ss.in, lines.String()) }()
		for errs < first+wave || len(results) < first+wave {
			errs += floodReply(t, ss.next(), results)
		}
	}
	if errs != rounds || len(results) != rounds {
		t.Fatalf("%d errors and %d results, want %d of each", errs, len(results), rounds)
	}
	ss.end()
}

// floodReply checks one reply of the flood: a call's result is recorded in
// results; an error reply counts 1.
func floodReply(t *testing.T, line string, results map[int]bool) int {
	t.Helper()
	var reply struct {
		ID     *int `json:"id"`
		Result *struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &reply); err != nil {
		return 1 // an id echoed as written (1.5, "x") is no int
	}
	switch {
	case reply.Result != nil && reply.ID != nil:
		if want := fmt.Sprintf("call-%d\n", *reply.ID); len(reply.Result.Content) == 0 || reply.Result.Content[0].Text != want {
			t.Fatalf("result %s, want %q", line, want)
		}
		results[*reply.ID] = true
		return 0
	case strings.Contains(line, `"error"`):
		return 1
	}
	t.Fatalf("unexpected line %s", line)
	return 0
}

// TestToolsListedAsRegistered: the schemas on the wire are the registry's,
// byte for byte, properties in their order (mcpserver marshals them once,
// not on every tools/list), on every tools/list.
func TestToolsListedAsRegistered(t *testing.T) {
	ss := startStdio(t)
	defer ss.end()
	reg := stacktest.Must(t, config.Local{Grace: 300 * time.Millisecond}).Tools.List() // as newServer's
	for i := range 2 {
		ss.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i))
		var resp struct {
			Result struct {
				Tools []struct {
					Name         string          `json:"name"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(ss.next()), &resp); err != nil || len(resp.Result.Tools) != len(reg) {
			t.Fatalf("tools/list: %v, %d tools, want %d", err, len(resp.Result.Tools), len(reg))
		}
		listed := map[string]int{}
		for j, tl := range resp.Result.Tools {
			listed[tl.Name] = j
		}
		for _, sc := range reg {
			got := resp.Result.Tools[listed[sc.Name]]
			in, _ := json.Marshal(sc.Parameters)
			out := []byte(nil)
			if sc.OutputSchema != nil {
				out, _ = json.Marshal(sc.OutputSchema)
			}
			if got.Name != sc.Name || string(got.InputSchema) != string(in) || string(got.OutputSchema) != string(out) {
				t.Errorf("%s: listed %s\n%s\nregistry %s\n%s", sc.Name, got.InputSchema, got.OutputSchema, in, out)
			}
		}
	}
}
