package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuditConcurrentSessions: 1000 calls at once over two HTTP sessions
// (the Go SDK's client) give 1000 call lines, each one whole JSON object,
// each session's 500 under its own name, which is not its id. Each client opens at most 120
// connections (the others' calls wait for one): a burst of 1000 new
// connections would pass dsh's bound on connections not yet authenticated
// (256), which closes the oldest, as it should.
func TestAuditConcurrentSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auditPath := filepath.Join(dir, "audit.jsonl")
	// Unsandboxed: what is measured is the audit log under 1000 calls.
	cfg := writeFile(t, "dsh.yaml", fmt.Sprintf("audit:\n  path: %s\nbash:\n  maxForegroundPerSession: 500\n  maxForeground: 1000\nlocal: {sandbox: {mode: off}}\n", auditPath))
	cmd, stderr := startServe(t, "", []string{tokenEnv + "="}, "--addr", "127.0.0.1:0", "--no-auth", "--config", cfg, "--workdir", dir)
	url := stderr.await(t, regexp.MustCompile(`url=(http://\S+/mcp)`))[1]

	const perSession = 500
	ids := make([]string, 2)
	var wg sync.WaitGroup
	for s := range 2 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "audit-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{MaxConnsPerHost: 120}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		ids[s] = cs.ID()
		for c := range perSession {
			wg.Go(func() {
				want := fmt.Sprintf("%d-%d", s, c)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo " + want, "description": "echo"}})
				if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != want+"\n" {
					t.Errorf("session %d call %d: %v %+v", s, c, err, res)
				}
			})
		}
	}
	wg.Wait()
	stopServe(t, cmd)

	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	perID := map[string]int{}
	commands := map[string]bool{}
	n := 0
	for sc.Scan() {
		n++
		var line struct {
			Event, Session, Command string
			ExitCode                *int
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", n, err, sc.Bytes())
		}
		if line.Event != "call" || line.ExitCode == nil || *line.ExitCode != 0 {
			t.Errorf("line %d: %s", n, sc.Bytes())
		}
		perID[line.Session]++
		commands[line.Command] = true
	}
	for name, count := range perID {
		if count != perSession || name == ids[0] || name == ids[1] {
			t.Errorf("session %q: %d lines; want %d, and a name that is not an id of %q", name, count, perSession, ids)
		}
	}
	if n != 2*perSession || len(perID) != 2 || len(commands) != 2*perSession {
		t.Errorf("%d lines, %d distinct commands, per session %v; want %d each of 2", n, len(commands), perID, perSession)
	}
}

// stopServe ends dsh serve with SIGTERM and waits for exit status 0.
func stopServe(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("dsh serve: %v", err)
	}
}

// TestAuditReadOnlyFile: an audit file dsh may not write (mode 0400, dsh
// run as the user nobody: root would write it anyway) logs an error, and
// the call runs and prints its result as usual.
func TestAuditReadOnlyFile(t *testing.T) {
	t.Parallel()
	setpriv, err := exec.LookPath("setpriv")
	if os.Getuid() != 0 || err != nil {
		t.Skip("SKIP-REASON: needs root and setpriv to run dsh as another user")
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // nobody reads the config and runs the binary
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(auditPath, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(auditPath, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "dsh.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "audit:\n  path: %s\n", auditPath), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dsh")
	data, err := os.ReadFile(dshBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "run", "--config", cfg, "--workdir", "/", "--", "echo ran")
	tmp := filepath.Join(dir, "tmp") // nobody's own: dsh run makes its spill base there
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR="+tmp)
	var stdout, stderrB strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderrB
	if err := cmd.Run(); err != nil {
		t.Fatalf("dsh run: %v\n%s", err, stderrB.String())
	}
	if stdout.String() != "ran\n" {
		t.Errorf("stdout %q, want the command's output", stdout.String())
	}
	if !strings.Contains(stderrB.String(), "level=ERROR") || !strings.Contains(stderrB.String(), "permission denied") {
		t.Errorf("stderr:\n%s\nwant an error naming the cause", stderrB.String())
	}
	if data, _ := os.ReadFile(auditPath); len(data) != 0 {
		t.Errorf("the read-only file was written: %s", data)
	}
}
