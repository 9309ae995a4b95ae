package mcpserver

import (
	"encoding/json"
	"io"
)

// Answering a whole session piped in (`dsh mcp < session.jsonl`). The
// SDK ends the stdio session at the end of its input and abandons the
// calls still running, so a session read from a file would get the
// answers of its fast requests only. The line transport therefore holds
// the end of input back until every call it passed on has been answered.
// A call that waits for the client (roots/list, an elicitation of the
// command policy) would then wait forever, since nothing more will come:
// each request dsh sends the client after its input ended, or had sent
// before and is still unanswered, is answered on the client's behalf with
// the error inputEndedCode, which the server treats as a client that
// cannot answer (roots: the default cwd; an ask: its fallback).

// inputEndedCode is the JSON-RPC error of a request to the client that the
// client can no longer answer: its input ended (JSON-RPC's "server error"
// range, implementation-defined).
const inputEndedCode = -32000

// inputEndedMessage is that error's message.
const inputEndedMessage = "the client's input ended before it answered"

// newStdioWatch is the watch of the stdio transport, which also tracks
// the requests dsh sends the client, for drain.
func newStdioWatch() *watch {
	w := newWatch()
	w.toClient, w.change = make(map[string]bool), make(chan struct{}, 1)
	return w
}

// clientAnswer forgets the requests the client answered in data.
func (w *watch) clientAnswer(data []byte) {
	for _, h := range heads(data) {
		if id := key(h.ID); id != "" && h.Method == "" {
			w.mu.Lock()
			delete(w.toClient, id)
			w.mu.Unlock()
		}
	}
}

// changed wakes drain: a message went out (a call's answer, a request to
// the client). It is called after the message was written, so that the
// end of input, which drain lets through, cannot overtake an answer.
func (w *watch) changed() {
	if w.change == nil {
		return
	}
	select {
	case w.change <- struct{}{}:
	default:
	}
}

// drain waits, at the end of the input, until every call in flight has
// been answered, answering the requests dsh sent the client on its behalf
// through pw (the server's input). It returns early when quit closes (the
// session is being stopped) or pw fails (the session is gone).
func (w *watch) drain(pw io.Writer, quit <-chan struct{}) {
	answered := make(map[string]bool)
	for {
		w.mu.Lock()
		pending := len(w.byID)
		var unanswered []string
		for id := range w.toClient {
			if !answered[id] {
				answered[id] = true
				unanswered = append(unanswered, id)
			}
		}
		w.mu.Unlock()
		for _, id := range unanswered {
			if _, err := pw.Write(inputEndedReply(id)); err != nil {
				return
			}
		}
		if pending == 0 {
			return
		}
		select {
		case <-w.change:
		case <-quit:
			return
		}
	}
}

// inputEndedReply is the error response to the request id (as JSON).
func inputEndedReply(id string) []byte {
	reply, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      json.RawMessage(id),
		"error":   map[string]any{"code": inputEndedCode, "message": inputEndedMessage},
	})
	return append(reply, '\n')
}
