package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
)

// The JSON-RPC error codes of lines dsh answers itself (docs/spec.md §6.2).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// maxDepth is the deepest nesting of objects and arrays the SDK decodes;
// it fails the whole connection on a deeper message, so dsh refuses one
// first.
const maxDepth = 1000

// maxExactInteger is the largest integer every JSON reader holds exactly
// (2^53): the SDK reads ids as float64, so a larger one would come back
// changed in the reply.
const maxExactInteger = 1 << 53

// integerID is an id's number as MCP allows it: an integer, written
// without fraction, exponent or "-0".
var integerID = regexp.MustCompile(`^(?:0|-?[1-9][0-9]*)$`)

// badMessage is why a line cannot go to the SDK, and its JSON-RPC reply.
type badMessage struct {
	code int
	why  string
	// id is the id to echo, as written in the line (a string or a number
	// whose value is not an id MCP allows, such as 1.5, is echoed
	// exactly); nil for null.
	id json.RawMessage
}

// reply is the error response to the line, one line of JSON. The id is
// written as the line had it: HTML characters are not escaped.
func (b *badMessage) reply() []byte {
	prefix := "Invalid Request: "
	if b.code == codeParseError {
		prefix = "Parse error: "
	}
	id := b.id
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{b.code, prefix + b.why}})
	return out.Bytes() // Encode ends it with a newline
}

func invalidRequest(id json.RawMessage, format string, args ...any) *badMessage {
	return &badMessage{code: codeInvalidRequest, why: fmt.Sprintf(format, args...), id: id}
}

// checkMessage returns nil when line is one JSON-RPC 2.0 message that the
// SDK takes without ending the session: an object with "jsonrpc": "2.0",
// no key twice, an id that is a string or an integer it holds exactly,
// and either a string method with structured params (a request or a
// notification) or a result or an error object (a response). Otherwise it
// says why, with the id to echo. The SDK ends the whole session on a
// message it cannot decode, so everything it would choke on is refused
// here, line by line.
func checkMessage(line []byte) *badMessage {
	if !json.Valid(line) {
		return &badMessage{code: codeParseError, why: "not valid JSON"}
	}
	if depth(line) > maxDepth {
		return invalidRequest(nil, "nested deeper than %d levels", maxDepth)
	}
	switch first := firstByte(line); first {
	case '{':
	case '[':
		return invalidRequest(nil, "batches are not supported")
	default:
		return invalidRequest(nil, "a message must be a JSON object")
	}
	fields, err := objectFields(line)
	if err != nil {
		return invalidRequest(nil, "%v", err)
	}
	return checkFields(fields)
}

// checkFields checks the fields of a message object.
func checkFields(f map[string]json.RawMessage) *badMessage {
	id, idOK := f["id"], true
	if id != nil {
		idOK = validID(id)
	}
	echo := echoID(id)
	switch {
	case !bytes.Equal(f["jsonrpc"], []byte(`"2.0"`)):
		return invalidRequest(echo, `"jsonrpc" must be "2.0"`)
	case !idOK:
		return invalidRequest(echo, `"id" must be a string or an integer of at most 2^53`)
	case f["method"] != nil:
		return checkRequest(f, echo)
	default:
		return checkResponse(f, echo)
	}
}

func checkRequest(f map[string]json.RawMessage, echo json.RawMessage) *badMessage {
	if kind(f["method"]) != '"' {
		return invalidRequest(echo, `"method" must be a string`)
	}
	if p := f["params"]; p != nil && kind(p) != '{' && kind(p) != '[' && kind(p) != 'n' {
		return invalidRequest(echo, `"params" must be an object or an array`)
	}
	return nil
}

func checkResponse(f map[string]json.RawMessage, echo json.RawMessage) *badMessage {
	result, rpcErr := f["result"], f["error"]
	switch {
	case result == nil && rpcErr == nil:
		return invalidRequest(echo, `neither a request ("method") nor a response ("result" or "error")`)
	case f["id"] == nil:
		return invalidRequest(echo, `a response needs an "id"`)
	case rpcErr != nil && kind(rpcErr) != 'n' && !validError(rpcErr):
		return invalidRequest(echo, `"error" must be an object with an integer "code" and a string "message"`)
	}
	return nil
}

// validID reports whether raw is an id MCP allows and the SDK keeps
// exactly: a string, or an integer of at most 2^53 in magnitude.
func validID(raw json.RawMessage) bool {
	switch kind(raw) {
	case '"':
		return true
	case '0':
		if !integerID.Match(raw) {
			return false
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil && n >= -maxExactInteger && n <= maxExactInteger
	}
	return false
}

// echoID is the id a reply carries: the id as written when it is a string
// or a number a client can read back (1.5, but not 1e400), else none
// (null).
func echoID(raw json.RawMessage) json.RawMessage {
	switch kind(raw) {
	case '"':
		return raw
	case '0':
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil && !math.IsInf(f, 0) {
			return raw
		}
	}
	return nil
}

// validError reports whether raw is an error object the SDK decodes: an
// integer code within int64 and a string message.
func validError(raw json.RawMessage) bool {
	var e struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if kind(raw) != '{' || json.Unmarshal(raw, &e) != nil || kind(e.Message) != '"' || kind(e.Code) != '0' {
		return false
	}
	f, err := strconv.ParseFloat(string(e.Code), 64)
	return err == nil && f == math.Trunc(f) && math.Abs(f) < math.MaxInt64
}

// kind is the kind of a JSON value by its first byte: '{', '[', '"', 'n'
// (null), 't' or 'f' (a bool), '0' (a number), or 0 for none.
func kind(raw json.RawMessage) byte {
	switch c := firstByte(raw); {
	case c == '-' || c >= '0' && c <= '9':
		return '0'
	default:
		return c
	}
}

// firstByte is the first byte of b that is not JSON white space, or 0.
func firstByte(b []byte) byte {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 {
		return t[0]
	}
	return 0
}

var errDuplicateKey = errors.New("a key is given twice")

// objectFields returns the top-level fields of a JSON object, refusing a
// key given twice (two readers could take different ones).
func objectFields(line []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	fields := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := fields[key]; dup {
			return nil, fmt.Errorf("%w: %q", errDuplicateKey, key)
		}
		fields[key] = v
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) { // }
		return nil, err
	}
	return fields, nil
}

// depth is the deepest nesting of objects and arrays in valid JSON b,
// counted as the SDK counts it (brackets outside strings).
func depth(b []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}
