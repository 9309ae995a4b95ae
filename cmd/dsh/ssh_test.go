package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/internal/sshtest"
)

// sshConfig writes a config file with executor ssh for srv; extra is
// added to the ssh section (indented by the caller).
func sshConfig(t *testing.T, srv *sshtest.Server, extra string) string {
	t.Helper()
	return writeFile(t, "dsh.yaml", fmt.Sprintf(`executor: ssh
ssh:
  host: %s
  port: %d
  user: %s
  identityFile: %s
  knownHosts: %s
  spillDir: %s
  graceMs: 200
  keepaliveMs: 1000
  env: {set: {%s: %q}}
%s`, srv.Host, srv.Port, srv.User, srv.Identity, srv.KnownHosts, srv.SharedDir(t), proctest.Name, proctest.Value, extra))
}

// TestEndToEndSSH: `dsh mcp` with executor ssh serves the same examples
// as over the local executor, against a real sshd; a session's cwd is the
// remote user's home, whatever roots the client offers.
func TestEndToEndSSH(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := sshConfig(t, srv, "")
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil)
	//lint:ignore SA1019 docs/spec.md §13: roots are ignored over SSH
	client.AddRoots(&mcp.Root{URI: "file://" + t.TempDir(), Name: "local project"})
	transport := &mcp.CommandTransport{Command: exec.Command(dshBin, "mcp", "--config", cfg), TerminateDuration: 5 * time.Second}
	cs, err := client.Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkExamples(t, cs)
	home := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "echo ~", "description": "print home"}))
	if got := sdkText(t, sdkCall(t, cs, "bash", map[string]any{"command": "pwd", "description": "where"})); got != home {
		t.Errorf("pwd = %q, want the remote home %q", got, home)
	}
}

// TestRunOverSSH: dsh run with executor ssh, --workdir naming a remote
// directory, and ssh.cwd.
func TestRunOverSSH(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	dir := srv.SharedDir(t)
	if got := dsh(t, nil, "run", "--config", sshConfig(t, srv, ""), "--workdir", dir, "--", "pwd; exit 3"); got.stdout != dir+"\n[exit code: 3]" || got.code != 3 {
		t.Errorf("run: %+v", got)
	}
	if got := dsh(t, nil, "run", "--config", sshConfig(t, srv, "  cwd: "+dir+"\n"), "--", "pwd"); got.stdout != dir+"\n" || got.code != 0 {
		t.Errorf("run with ssh.cwd: %+v", got)
	}
	if got := dsh(t, nil, "run", "--config", sshConfig(t, srv, ""), "--workdir", "/nonexistent/dir", "--", "true"); got.stdout != `Error: ssh: workdir "/nonexistent/dir" does not exist on 127.0.0.1` || got.code != 1 {
		t.Errorf("missing remote workdir: %+v", got)
	}
}

// TestDoctorOverSSH: dsh doctor names the host, the user, the login key
// and the host key, the remote bash and programs, and the round trips.
func TestDoctorOverSSH(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t, sshtest.Options{})
	got := dsh(t, nil, "doctor", "--config", sshConfig(t, srv, ""))
	for _, want := range []string{
		"executor: ssh\n",
		fmt.Sprintf("host: 127.0.0.1:%d\n", srv.Port),
		"user: " + srv.User + "\n",
		"key: ssh-ed25519 SHA256:",
		"(identity file " + srv.Identity + ")\n",
		"host key: ssh-ed25519 SHA256:",
		"remote bash: 5.",
		"remote programs: sh ",
		" setsid ",
		"round trip: ",
		" ms (true through the wrapper)\n",
		"\nspill base: /",
	} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, got.stdout)
		}
	}
	if got.code != 0 {
		t.Errorf("doctor: %+v", got)
	}
	// A spill base other users can write: exit 1, with the local
	// executor's words.
	cfg := sshConfig(t, srv, "")
	open := srv.SharedDir(t) + "/open"
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	spillDir := regexp.MustCompile(`(?m)^  spillDir: .*$`)
	got = dsh(t, nil, "doctor", "--config", writeFile(t, "open.yaml", spillDir.ReplaceAllLiteralString(readFile(t, cfg), "  spillDir: "+open)))
	want := "dsh: doctor: spill directory on 127.0.0.1: spill directory base " + open + ": " + open + " is writable by other users and has no sticky bit (mode 0777): make it 0700, or 1777 like /tmp\n"
	if got.code != 1 || !strings.HasSuffix(got.stderr, want) || strings.Contains(got.stdout, "spill base:") {
		t.Errorf("doctor with an open spill base: %+v, want %q", got, want)
	}
	// A host key that is not known: exit 1, the reason on stderr.
	kh := srv.KnownHostsFor(t, srv.Signer.PublicKey(), srv.Port)
	got = dsh(t, nil, "doctor", "--config", writeFile(t, "bad.yaml", strings.Replace(readFile(t, cfg), srv.KnownHosts, kh, 1)))
	if got.code != 1 || !strings.Contains(got.stderr, "host key of 127.0.0.1 changed") {
		t.Errorf("doctor with a changed host key: %+v", got)
	}
	// A known_hosts file that does not exist: a usage error.
	got = dsh(t, nil, "doctor", "--config", writeFile(t, "none.yaml", strings.Replace(readFile(t, cfg), srv.KnownHosts, "/nonexistent/known_hosts", 1)))
	if got.code != 2 || !strings.Contains(got.stderr, "dsh: ssh: known_hosts file /nonexistent/known_hosts: no such file or directory") {
		t.Errorf("doctor without known_hosts: %+v", got)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestMillis: doctor's round trips; a measured one never reads 0.0 ms.
func TestMillis(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                       "-",
		30 * time.Microsecond:   "<0.1 ms",
		50 * time.Microsecond:   "0.1 ms",
		6149 * time.Microsecond: "6.1 ms",
		2 * time.Second:         "2000.0 ms",
	} {
		if got := millis(d); got != want {
			t.Errorf("millis(%v) = %q, want %q", d, got, want)
		}
	}
}
