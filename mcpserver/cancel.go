package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// No response after a cancel (docs/spec.md §6.4). MCP says the receiver of
// notifications/cancelled should not respond to the request it names, and
// clients log one that comes anyway (the TypeScript SDK: "Received a
// response for an unknown message ID"). The Go SDK always responds: its
// JSON-RPC layer writes a response for every call whose handler returned,
// cancelled or not, and has no option against it. So dsh drops them on
// the way out, in the transports it owns: the stdio line transport, and
// each POST's stream over HTTP. A watch learns the calls from the client's
// messages (id and progress token) and which of them it cancelled; once a
// call is cancelled, its response and its progress notifications are not
// sent. A cancel for a call already answered, or unknown, changes nothing.

// watch tracks one connection's calls in flight.
type watch struct {
	mu      sync.Mutex
	byID    map[string]*inFlight
	byToken map[string]*inFlight
	refs    int // POSTs using it (HTTP), under httpWatches.mu
	// toClient are the requests dsh sent the client (nil: not
	// tracked), and change wakes drain (drain.go); the stdio transport's
	// only.
	toClient map[string]bool
	change   chan struct{}
}

// inFlight is a call the client sent and dsh has not answered yet.
type inFlight struct {
	token     string
	cancelled bool
}

func newWatch() *watch {
	return &watch{byID: make(map[string]*inFlight), byToken: make(map[string]*inFlight)}
}

// head is what a watch reads of a JSON-RPC message.
type head struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID     json.RawMessage `json:"requestId"`
		ProgressToken json.RawMessage `json:"progressToken"`
		Meta          struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

// heads reads the messages of data: one message or a batch.
func heads(data []byte) []head {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var hs []head
		_ = json.Unmarshal(data, &hs)
		return hs
	}
	var h head
	if json.Unmarshal(data, &h) != nil {
		return nil
	}
	return []head{h}
}

// key is an id or a token as JSON, "" for none.
func key(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// incoming records what the client sent: a call (it is in flight, under
// its id and progress token) or a cancel of one in flight. It returns the
// call it recorded, if data is one call.
func (w *watch) incoming(data []byte) *inFlight {
	var last *inFlight
	for _, h := range heads(data) {
		id := key(h.ID)
		switch {
		case h.Method == "notifications/cancelled":
			w.mu.Lock()
			if c := w.byID[key(h.Params.RequestID)]; c != nil {
				c.cancelled = true
			}
			w.mu.Unlock()
		case id != "" && h.Method != "":
			c := &inFlight{token: key(h.Params.Meta.ProgressToken)}
			w.mu.Lock()
			w.byID[id] = c
			if c.token != "" {
				w.byToken[c.token] = c
			}
			w.mu.Unlock()
			last = c
		}
	}
	return last
}

// outgoing reports whether a message dsh is about to send may go: not the
// response to a cancelled call, nor a progress notification of one. A
// response ends its call's watch. A batch always goes.
func (w *watch) outgoing(data []byte) bool {
	hs := heads(data)
	send := true
	for _, h := range hs {
		id := key(h.ID)
		w.mu.Lock()
		switch {
		case h.Method == "" && id != "": // a response
			if c := w.byID[id]; c != nil {
				delete(w.byID, id)
				if c.token != "" {
					delete(w.byToken, c.token)
				}
				send = send && !c.cancelled
			}
		case h.Method != "" && id != "" && w.toClient != nil: // a request to the client
			w.toClient[id] = true
		case h.Method == "notifications/progress":
			if c := w.byToken[key(h.Params.ProgressToken)]; c != nil && c.cancelled {
				send = false
			}
		}
		w.mu.Unlock()
	}
	return send || len(hs) > 1
}

// cancelledCall reports whether c was cancelled.
func (w *watch) cancelledCall(c *inFlight) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return c.cancelled
}

// dropCall forgets c (its POST ended) unless a response already did.
func (w *watch) dropCall(data []byte, c *inFlight) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range heads(data) {
		if id := key(h.ID); w.byID[id] == c {
			delete(w.byID, id)
		}
	}
	if c.token != "" && w.byToken[c.token] == c {
		delete(w.byToken, c.token)
	}
}

// httpWatches keeps a watch per MCP session of the HTTP endpoint.
type httpWatches struct {
	maxBody int64 // serve.maxRequestBytes: a larger body is left to the SDK
	mu      sync.Mutex
	session map[string]*watch
}

// guard wraps the streamable endpoint: it reads each POST's messages
// before the SDK does, so a cancel is recorded before the SDK cancels the
// call, and a POST that carries a call writes its stream through a writer
// that stops once that call was cancelled.
func (hw *httpWatches) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get("Mcp-Session-Id")
		if r.Method != http.MethodPost || sid == "" || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, hw.maxBody+1))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		if err != nil || int64(len(body)) > hw.maxBody {
			next.ServeHTTP(w, r) // the SDK refuses it
			return
		}
		wt := hw.acquire(sid)
		defer hw.release(sid, wt)
		c := wt.incoming(body)
		if c == nil {
			next.ServeHTTP(w, r)
			return
		}
		defer wt.dropCall(body, c)
		next.ServeHTTP(&cancelWriter{ResponseWriter: w, cancelled: func() bool { return wt.cancelledCall(c) }}, r)
	})
}

// acquire is the watch of a session, for one POST.
func (hw *httpWatches) acquire(sid string) *watch {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if hw.session == nil {
		hw.session = make(map[string]*watch)
	}
	wt := hw.session[sid]
	if wt == nil {
		wt = newWatch()
		hw.session[sid] = wt
	}
	wt.refs++
	return wt
}

// release ends a POST's use of a watch, which goes once no POST uses it
// and no call is in flight: a session that ends leaves nothing behind.
func (hw *httpWatches) release(sid string, wt *watch) {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	wt.refs--
	wt.mu.Lock()
	empty := len(wt.byID) == 0
	wt.mu.Unlock()
	if wt.refs == 0 && empty && hw.session[sid] == wt {
		delete(hw.session, sid)
	}
}

// cancelWriter is a POST's response writer that writes nothing more to an
// event stream once the call was cancelled: its progress and its response
// are dropped, and the stream ends when the SDK is done with it.
type cancelWriter struct {
	http.ResponseWriter
	cancelled func() bool
}

func (cw *cancelWriter) Write(p []byte) (int, error) {
	if cw.cancelled() && cw.Header().Get("Content-Type") == "text/event-stream" {
		return len(p), nil
	}
	return cw.ResponseWriter.Write(p)
}

func (cw *cancelWriter) Flush() {
	if f, ok := cw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (cw *cancelWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }
