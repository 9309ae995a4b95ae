package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Ids of dsh's own requests (docs/spec.md §6.2 "Ids"). The SDK numbers
// the requests a server sends its client (elicitation/create, roots/list,
// ping) 1, 2, 3…: whoever can post to a session could answer dsh's
// question to the user, an ask, by guessing its id. So each request
// leaves with an id of its own, 128 random bits as a string, which is
// taken back once and only in the session it was sent to; an answer with
// any other id is refused before the SDK sees it.

// maxPending bounds the requests of one session waiting for an answer:
// past it the oldest is forgotten (its late answer is refused), so a
// client that never answers cannot grow the map.
const maxPending = 64

// requestIDs maps the ids dsh sent in one session to the SDK's.
type requestIDs struct {
	mu    sync.Mutex
	sent  map[string]json.RawMessage // the id sent → the SDK's id
	order []string                   // ids in sent, oldest first
}

func newRequestIDs() *requestIDs {
	return &requestIDs{sent: make(map[string]json.RawMessage)}
}

// outgoing returns msg with a fresh id when msg is a request; any other
// message is returned as is.
func (r *requestIDs) outgoing(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"method"`)) {
		return msg // neither a request nor a notification: cheap for large results
	}
	f, err := objectFields(msg)
	if err != nil || f["method"] == nil || f["id"] == nil {
		return msg
	}
	id := rand.Text() // 130 bits
	r.remember(id, f["id"])
	f["id"] = json.RawMessage(strconv.Quote(id))
	out, err := json.Marshal(f)
	if err != nil {
		return msg
	}
	if bytes.HasSuffix(msg, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

func (r *requestIDs) remember(id string, sdk json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.order) >= maxPending {
		delete(r.sent, r.order[0])
		r.order = r.order[1:]
	}
	r.sent[id] = sdk
	r.order = append(r.order, id)
}

// incoming returns msg with the SDK's id back when msg answers a request
// of this session, which it forgets; ok is false for an answer with an id
// this session was not sent (or was already answered). It fails closed:
// a message that is not one JSON object with distinct keys (the SDK would
// read the first value of trailing data, the last of keys given twice,
// and keys in any case) is refused, and one without a method is taken
// for an answer. Requests and notifications are returned as is.
func (r *requestIDs) incoming(msg []byte) (out []byte, err error) {
	f, err := strictObject(msg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", notOneMessage, err)
	}
	if m := f["method"]; m != nil && string(m) != "null" {
		return msg, nil // a request or a notification: the SDK judges it
	}
	var id string
	if json.Unmarshal(f["id"], &id) != nil {
		return nil, errUnknownAnswer
	}
	sdk, found := r.take(id)
	if !found {
		return nil, errUnknownAnswer
	}
	f["id"] = sdk
	return json.Marshal(f)
}

// Why incoming refuses a message: the body of the 400 over HTTP.
const notOneMessage = "not one JSON-RPC message"

var errUnknownAnswer = errors.New("an answer to a request this session was not sent")

// strictObject is objectFields for one JSON object and nothing after it,
// whose keys differ also when case is ignored.
func strictObject(msg []byte) (map[string]json.RawMessage, error) {
	if firstByte(msg) != '{' {
		return nil, errors.New("not a JSON object")
	}
	f, err := objectFields(msg)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the message")
	}
	folded := make(map[string]bool, len(f))
	for k := range f {
		if folded[strings.ToLower(k)] {
			return nil, fmt.Errorf("%w: %q", errDuplicateKey, k)
		}
		folded[strings.ToLower(k)] = true
	}
	return f, nil
}

func (r *requestIDs) take(id string) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sdk, ok := r.sent[id]
	if !ok {
		return nil, false
	}
	delete(r.sent, id)
	for i, o := range r.order {
		if o == id {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	return sdk, true
}

// incomingBody is incoming for an HTTP body: one message or a batch,
// which must be one JSON array and nothing after it.
func (r *requestIDs) incomingBody(body []byte) ([]byte, error) {
	if firstByte(body) != '[' {
		return r.incoming(body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var batch []json.RawMessage
	if err := dec.Decode(&batch); err != nil {
		return nil, fmt.Errorf("%s: %w", notOneMessage, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New(notOneMessage + ": data after the batch")
	}
	for i, m := range batch {
		out, err := r.incoming(m)
		if err != nil {
			return nil, err
		}
		batch[i] = out
	}
	return json.Marshal(batch)
}

// httpIDs holds the ids of each HTTP session, by its Mcp-Session-Id.
type httpIDs struct {
	s         *Server
	mu        sync.Mutex
	bySession map[string]*requestIDs
}

// of returns the ids of session sid, made when create is set; making one
// forgets those of sessions that ended.
func (h *httpIDs) of(sid string, create bool) *requestIDs {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.bySession[sid]; r != nil || !create {
		return r
	}
	live := map[string]bool{}
	for ss := range h.s.mcp.Sessions() {
		live[ss.ID()] = true
	}
	for id := range h.bySession {
		if !live[id] {
			delete(h.bySession, id)
		}
	}
	r := newRequestIDs()
	h.bySession[sid] = r
	return r
}

// guard gives the requests dsh sends on the streams of a session ids of
// their own, and refuses, with 400, a POST with an answer to none of them.
func (h *httpIDs) guard(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get("Mcp-Session-Id")
		if sid == "" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			if err != nil || int64(len(body)) > maxBody {
				r.Body = struct {
					io.Reader
					io.Closer
				}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
				next.ServeHTTP(w, r) // the SDK refuses it
				return
			}
			ids := h.of(sid, false)
			if ids == nil {
				ids = newRequestIDs() // no request was sent: no answer is known
			}
			body, err = ids.incomingBody(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		next.ServeHTTP(&idWriter{ResponseWriter: w, ids: func() *requestIDs { return h.of(sid, true) }}, r)
	})
}

// idWriter rewrites the ids of the requests the SDK writes on a session's
// streams: one event, or one JSON message, a Write.
type idWriter struct {
	http.ResponseWriter
	ids func() *requestIDs
}

func (w *idWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte(`"method"`)) {
		return w.ResponseWriter.Write(p)
	}
	out := rewriteEvent(p, w.ids())
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *idWriter) Flush()                      { _ = http.NewResponseController(w.ResponseWriter).Flush() }
func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// rewriteEvent is p with the message of its data line (an event) or p
// itself (a JSON body) through ids.outgoing.
func rewriteEvent(p []byte, ids *requestIDs) []byte {
	start := 0
	if !bytes.HasPrefix(p, []byte("data: ")) {
		i := bytes.Index(p, []byte("\ndata: "))
		if i < 0 {
			return ids.outgoing(p)
		}
		start = i + 1
	}
	data := start + len("data: ")
	end := bytes.IndexByte(p[data:], '\n')
	if end < 0 {
		end = len(p) - data
	}
	out := append([]byte(nil), p[:data]...)
	out = append(out, ids.outgoing(p[data:data+end])...)
	return append(out, p[data+end:]...)
}
