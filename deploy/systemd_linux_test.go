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

// unitScript approximates what systemd makes of the unit before it runs
// ExecStart: a mount namespace whose root is read-only (ProtectSystem=
// strict) but for the state directory (StateDirectory=), a /tmp of its
// own (PrivateTmp=), the /proc of its pid namespace, lo up, and the service's user with no new
// privileges (User=, NoNewPrivileges=) and HOME its home, which is the
// state directory (useradd --home-dir /var/lib/dsh). The test's files
// are under /tmp: they are bound to /mnt first.
const unitScript = `
set -eu
mount --bind "$D" /mnt
mount --bind /mnt/state /mnt/state
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t proc proc /proc
mount -o remount,bind,ro /
ip link set lo up
u=$RUN_UID
unset D RUN_UID
export HOME=/mnt/state CREDENTIALS_DIRECTORY=/mnt/credentials STATE_DIRECTORY=/mnt/state
exec setpriv --reuid="$u" --regid="$u" --clear-groups --no-new-privs -- "$@"
`

// serviceUID is the service's user in TestSystemdExecStart.
const serviceUID = 10002

// TestSystemdExecStart: the unit's ExecStart, run as systemd would run it
// (unitScript: its user, no new privileges, a read-only system, the state
// directory its home and workdir, the credential a file of mode 0400 of
// that user), starts dsh serve, which takes the credential's token and
// no other, sandboxes its commands and runs them in the state directory;
// in network and pid namespaces of its own (its port is fixed), and gone
// after SIGTERM. Not emulated: Delegate= (dsh's cgroups), PrivateDevices=,
// the Protect*/Restrict* settings; dsh doctor under the real unit says
// what works there.
func TestSystemdExecStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: needs root for mount, network and pid namespaces and the service's user")
	}
	argv, dir := unitArgv(t)
	token := "systemd-credential-0123456789abcdef"
	writeUnitFiles(t, dir, token)
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "--net", "--pid", "--fork", "--kill-child", "bash", "-c", unitScript, "unit"}, argv...)...)
	cmd.Env = append(os.Environ(), "D="+dir, "RUN_UID="+fmt.Sprint(serviceUID))
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	child := 0
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dsh serve said:\n%s", out.String())
		}
		if child != 0 {
			syscall.Kill(child, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		<-exited
	})
	var pidns string
	child, pidns = unshareChild(t, cmd.Process.Pid)
	nsFile, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer nsFile.Close()
	client := &http.Client{
		Transport: &http.Transport{DialContext: netnsDialer(fmt.Sprintf("/proc/self/fd/%d", nsFile.Fd())), DisableKeepAlives: true},
		Timeout:   proctest.Scale(10 * time.Second),
	}
	addr := flagValue(argv, "--addr")
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
	checkUnitServes(t, client, "http://"+addr+"/mcp", token, filepath.Join(dir, "state"))
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
	pidnsEmpty(t, pidns)
}

// unitArgv is the unit's ExecStart with the built dsh and the test's
// directories (under /mnt, as unitScript binds them), and the directory
// of the test's files.
func unitArgv(t *testing.T) ([]string, string) {
	execStart := unitValues(t, "ExecStart")
	if len(execStart) != 1 {
		t.Fatalf("ExecStart %q: want one", execStart)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // the service's user runs dsh from it
		t.Fatal(err)
	}
	buildDsh(t, dir)
	vars := map[string]string{"CREDENTIALS_DIRECTORY": "/mnt/credentials", "STATE_DIRECTORY": "/mnt/state"}
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
	argv[0] = "/mnt/dsh"
	return argv, dir
}

// writeUnitFiles makes what systemd makes for the unit in dir: the state
// directory (StateDirectoryMode=) and the credential, the service user's.
func writeUnitFiles(t *testing.T, dir, token string) {
	cred := unitValues(t, "LoadCredential")
	if len(cred) != 1 {
		t.Fatalf("LoadCredential %q: want one", cred)
	}
	name, _, _ := strings.Cut(cred[0], ":")
	creds, state := filepath.Join(dir, "credentials"), filepath.Join(dir, "state")
	for _, err := range []error{
		os.Mkdir(creds, 0o500),
		os.WriteFile(filepath.Join(creds, name), []byte(token+"\n"), 0o400),
		os.Mkdir(state, 0o700),
		os.Lchown(creds, serviceUID, serviceUID),
		os.Lchown(filepath.Join(creds, name), serviceUID, serviceUID),
		os.Lchown(state, serviceUID, serviceUID),
		// Writable by the service's user, outside its workdir: only the
		// sandbox keeps a command from it.
		os.Mkdir(filepath.Join(dir, "open"), 0o777),
		os.Chmod(filepath.Join(dir, "open"), 0o777),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// unshareChild waits for unshare (pid) to be in its network namespace
// with a child, and returns the child and its pid namespace.
func unshareChild(t *testing.T, pid int) (child int, pidns string) {
	self, _ := os.Readlink("/proc/self/ns/net")
	proctest.Eventually(t, proctest.Scale(5*time.Second), func() error {
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil || ns == self {
			return fmt.Errorf("no network namespace yet: %v", err)
		}
		children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil || len(strings.Fields(string(children))) == 0 {
			return fmt.Errorf("no child yet: %v", err)
		}
		fmt.Sscan(strings.Fields(string(children))[0], &child)
		pidns, err = os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", child))
		return err
	})
	return child, pidns
}

// pidnsEmpty waits until no process of the pid namespace pidns runs.
func pidnsEmpty(t *testing.T, pidns string) {
	t.Helper()
	proctest.Eventually(t, proctest.Scale(5*time.Second), func() error {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		for _, e := range entries {
			if ns, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && ns == pidns {
				return fmt.Errorf("process %s of pid namespace %s still runs", e.Name(), pidns)
			}
		}
		return nil
	})
}

// flagValue is the value after name in argv.
func flagValue(argv []string, name string) string {
	for i, a := range argv {
		if a == name && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return ""
}

// checkUnitServes: the credential's token opens a session and no other
// does; the bash tool is sandboxed; a command writes the state directory
// (its workdir, as the service's user) and nothing outside it.
func checkUnitServes(t *testing.T, client *http.Client, url, token, state string) {
	wrong := &mcpClient{t: t, client: client, url: url, token: token + "x"}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+wrong.token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("initialize with another token: %s, want 401", resp.Status)
	}
	m := &mcpClient{t: t, client: client, url: url, token: token}
	m.post(initialize)
	m.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if list := m.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); strings.Contains(list, "not sandboxed") || !strings.Contains(list, `"bash"`) {
		t.Errorf("tools/list: the bash tool is not sandboxed under the unit:\n%s", list)
	}
	if got := m.call(3, "echo made > made && id -u && { touch /mnt/open/x 2>/dev/null || echo refused; }", "write"); got != fmt.Sprintf("%d\nrefused\n", serviceUID) {
		t.Errorf("a command under the unit: %q", got)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(state), "open", "x")); err == nil {
		t.Error("a sandboxed command wrote outside its workdir")
	}
	fi, err := os.Stat(filepath.Join(state, "made"))
	if err != nil {
		t.Fatalf("the command's file is not in the state directory: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != serviceUID {
		t.Errorf("the command's file belongs to %d, want %d", st.Uid, serviceUID)
	}
}

// initialize is an MCP initialize request.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"unit-test","version":"1"}}}`
