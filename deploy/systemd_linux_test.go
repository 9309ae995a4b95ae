package deploy

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
)

// unitPath is the systemd unit for dsh serve.
const unitPath = "systemd/dsh.service"

// unitValues returns the values of key in the unit's lines.
func unitValues(t *testing.T, key string) []string {
	t.Helper()
	data, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			vals = append(vals, v)
		}
	}
	return vals
}

// buildDsh builds dsh into dir.
func buildDsh(t *testing.T, dir string) string {
	t.Helper()
	dsh := filepath.Join(dir, "dsh")
	if out, err := exec.Command("go", "build", "-o", dsh, "../cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dsh
}

// TestSystemdUnit: the unit passes systemd-analyze verify with nothing to
// say (an unknown or misspelt key is only a warning there), with its
// ExecStart's dsh the one built here, and has the hardening and the
// credential docs/operations.md describes. Without systemd-analyze the
// test fails in CI ($CI set; .ci/run installs it) and is skipped
// elsewhere.
func TestSystemdUnit(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("systemd-analyze is not installed (.ci/run installs the systemd package): %v", err)
		}
		t.Skip("SKIP-REASON: no systemd-analyze (Debian package systemd; .ci/run installs it) to verify deploy/systemd/dsh.service")
	}
	for key, want := range map[string]string{
		"NoNewPrivileges": "yes", "ProtectSystem": "strict", "PrivateTmp": "yes", "User": "dsh",
		"LoadCredential": "token:/etc/dsh/token", "Delegate": "yes",
	} {
		if got := unitValues(t, key); len(got) != 1 || got[0] != want {
			t.Errorf("%s=%q, want %s", key, got, want)
		}
	}
	for _, key := range []string{"RestrictNamespaces", "PrivateUsers", "ProtectControlGroups", "DynamicUser"} {
		if got := unitValues(t, key); len(got) > 0 {
			t.Errorf("%s=%q: it would break the sandbox or the cgroup containment, or the working tree's owner", key, got)
		}
	}
	dir := t.TempDir()
	dsh := buildDsh(t, dir)
	data, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(dir, "dsh.service")
	if err := os.WriteFile(unit, []byte(strings.ReplaceAll(string(data), "/usr/local/bin/dsh", dsh)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", unit).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unitPath, err, out)
	}
}

// TestSystemdExecStart: the unit's ExecStart, its ${CREDENTIALS_DIRECTORY}
// and ${STATE_DIRECTORY} as systemd sets them (the credential a file of
// mode 0400), starts dsh serve, which takes the credential's token and no
// other; in network and pid namespaces of its own (its port is fixed),
// and gone after SIGTERM.
func TestSystemdExecStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: needs root for a network namespace")
	}
	execStart := unitValues(t, "ExecStart")
	cred := unitValues(t, "LoadCredential")
	if len(execStart) != 1 || len(cred) != 1 {
		t.Fatalf("ExecStart %q, LoadCredential %q: want one each", execStart, cred)
	}
	name, _, _ := strings.Cut(cred[0], ":")
	dir := t.TempDir()
	dsh := buildDsh(t, dir)
	creds, state := filepath.Join(dir, "credentials"), filepath.Join(dir, "state")
	token := "systemd-credential-0123456789abcdef"
	if err := os.Mkdir(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(creds, name), []byte(token+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"CREDENTIALS_DIRECTORY": creds, "STATE_DIRECTORY": state}
	var argv []string
	for _, f := range strings.Fields(execStart[0]) {
		f = regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(f, func(v string) string {
			val, ok := vars[v[2:len(v)-1]]
			if !ok {
				t.Fatalf("ExecStart uses %s, which this test does not set", v)
			}
			return val
		})
		argv = append(argv, f)
	}
	if argv[0] != "/usr/local/bin/dsh" {
		t.Fatalf("ExecStart runs %s, want /usr/local/bin/dsh", argv[0])
	}
	argv[0] = dsh
	var addr string
	for i, a := range argv {
		if a == "--addr" && i+1 < len(argv) {
			addr = argv[i+1]
		}
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--pid", "--fork", "--kill-child", "bash", "-c", `ip link set lo up && exec "$@"`, "unit"}, argv...)...)
	cmd.Env = append(os.Environ(), "CREDENTIALS_DIRECTORY="+creds, "STATE_DIRECTORY="+state)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	child := 0
	t.Cleanup(func() {
		if child != 0 {
			syscall.Kill(child, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		<-exited
	})
	self, _ := os.Readlink("/proc/self/ns/net")
	var pidns string
	proctest.Eventually(t, proctest.Scale(5*time.Second), func() error {
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
		if err != nil || ns == self {
			return fmt.Errorf("no network namespace yet: %v", err)
		}
		children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if err != nil || len(strings.Fields(string(children))) == 0 {
			return fmt.Errorf("no child yet: %v", err)
		}
		fmt.Sscan(strings.Fields(string(children))[0], &child)
		pidns, err = os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", child))
		return err
	})
	nsFile, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer nsFile.Close()
	client := &http.Client{
		Transport: &http.Transport{DialContext: netnsDialer(fmt.Sprintf("/proc/self/fd/%d", nsFile.Fd())), DisableKeepAlives: true},
		Timeout:   proctest.Scale(10 * time.Second),
	}
	proctest.Eventually(t, proctest.Scale(10*time.Second), func() error {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("ExecStart %q exited: %v\n%s", argv, err, out.String())
		default:
		}
		resp, err := client.Get("http://" + addr + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	for tok, want := range map[string]int{token: http.StatusOK, token + "x": http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"unit-test","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("initialize with token %q: %s, want %d", tok, resp.Status, want)
		}
	}
	syscall.Kill(child, syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(proctest.Scale(60 * time.Second)):
		t.Fatalf("still running after SIGTERM:\n%s", out.String())
	}
	child = 0
	proctest.Eventually(t, proctest.Scale(5*time.Second), func() error {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if ns, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && ns == pidns {
				return fmt.Errorf("process %s still runs", e.Name())
			}
		}
		return nil
	})
}
