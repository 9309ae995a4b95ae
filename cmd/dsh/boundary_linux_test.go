package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/dsh-go/dsh/internal/proctest"
)

// TestServeSocketOutOfReach is the red team's escape of issue 27, item 4:
// dsh serve, sandboxed, listens on a Unix socket outside /run and /tmp
// (under /opt). A command of one of its sessions connects to that
// socket, opens an MCP session of its own, asks to run a command outside
// the sandbox and answers yes itself. Sandboxed, it must not reach the
// socket, and nothing runs; the same attacker run outside the sandbox,
// as dsh's user (the control), escapes. As nobody and as root, on each
// backend.
func TestServeSocketOutOfReach(t *testing.T) {
	t.Parallel()
	for _, user := range []string{"nobody", "root"} {
		for _, backend := range []string{"bwrap", "landlock"} {
			t.Run(user+"/"+backend, func(t *testing.T) {
				t.Parallel()
				serveSocketOutOfReach(t, asUser(t, user), backend)
			})
		}
	}
}

func serveSocketOutOfReach(t *testing.T, n nobody, backend string) {
	dir := optDirOf(t, n.owner)
	sock, target := filepath.Join(dir, "run", "dsh.sock"), filepath.Join(dir, "escaped")
	conf := filepath.Join(dir, "conf", "dsh.yaml")
	writeOwned(t, n.owner, conf, "bash:\n  yieldAfterMs: 0\nlocal:\n  sandbox:\n    mode: workspace-write\n    backend: "+backend+"\n")
	if out, err := n.command("doctor", "--config", conf).CombinedOutput(); exitStatus(err) == 2 {
		t.Skipf("SKIP-REASON: no %s sandbox here as %s: %s", backend, n.owner, out)
	}
	cmd := n.command("serve", "--addr", "unix:"+sock, "--workdir", n.workdir, "--config", conf)
	cmd.Env = append(os.Environ(), tokenEnv+"=")
	stderr := startCmd(t, cmd)
	stderr.await(t, regexp.MustCompile(`dsh serving MCP`))
	attacker := func(args ...string) string {
		all := append(append(append([]string(nil), n.prefix...), n.attacker), args...)
		c := exec.Command(all[0], all[1:]...)
		c.Env = append(os.Environ(), attackEnv+"=1")
		out, _ := c.CombinedOutput()
		return string(out)
	}
	// A session of the user's (the attacker as a plain MCP client) runs
	// the attack sandboxed.
	got := attacker("mcpcall", sock, n.attack("unixescape", sock, target))
	if strings.Contains(got, "ESCAPED") || exists(target) || !strings.Contains(got, "attack failed") {
		t.Errorf("a sandboxed command reached dsh serve's socket %s: %q (escaped: %v)", sock, got, exists(target))
	}
	t.Logf("sandboxed: %s", got)
	// The control: the same attacker outside the sandbox escapes.
	if got := attacker("unixescape", sock, target); !strings.Contains(got, "ESCAPED") || !exists(target) {
		t.Errorf("control: the attacker did not escape through the socket unsandboxed, so the test proves nothing: %q", got)
	}
	// SIGKILL: the socket closes without dsh unlinking its file, which
	// stays until optDirOf's cleanup. A file gone while still listed
	// would fail the mounts of another test's sandboxed command (a known
	// race of covering host sockets, docs/spec.md §11).
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// optDirOf is a directory under /opt (outside /run and /tmp, which the
// sandbox replaces anyway) that user owns, with the directories run and
// conf in it; it goes with the test.
func optDirOf(t *testing.T, user string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/opt", "dsh-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Once the commands that listed its socket while bound have
		// made their mounts.
		time.Sleep(proctest.Scale(time.Second))
		os.RemoveAll(dir)
	})
	for _, d := range []string{dir, filepath.Join(dir, "run"), filepath.Join(dir, "conf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		chownTo(t, user, d)
	}
	return dir
}

// writeOwned writes a file that user owns.
func writeOwned(t *testing.T, user, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	chownTo(t, user, path)
}

func chownTo(t *testing.T, user, path string) {
	t.Helper()
	if user != "nobody" {
		return
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorSandboxBoundary: doctor says, one line each, what stays
// writable and reachable (each writable root, each allowed socket, the
// network) and what is hidden of dsh's own (the audit log, the config
// file's directory, the spill base) and of the host (the run
// directories, the host sockets covered), on each backend.
func TestDoctorSandboxBoundary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "etc", "dsh.yaml")
	root, audit := filepath.Join(dir, "cache"), filepath.Join(dir, "audit.jsonl")
	sock := filepath.Join(dir, "agent.sock")
	for _, d := range []string{filepath.Dir(conf), root} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(audit, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			sockets := "[" + sock + "]"
			if backend == "landlock" {
				sockets = "[]" // landlock refuses allowSockets
			}
			cfg := "local:\n  sandbox:\n    mode: workspace-write\n    backend: " + backend + "\n    writableRoots: [" + root +
				"]\n    allowSockets: " + sockets + "\naudit:\n  path: " + audit + "\n"
			if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			got := dsh(t, nil, "doctor", "--config", conf)
			if got.code == 2 {
				t.Skipf("SKIP-REASON: no %s sandbox here: %s", backend, got.stderr)
			}
			want := []string{"\n  writable: the session's workspace (its cwd; default ", "\n  writable: " + root + "\n",
				"\n  hidden (dsh): " + audit + "\n",
				"\n  hidden (dsh): " + filepath.Dir(conf) + " (the config file's directory", "\n  hidden (dsh): ",
				"\n  hidden: /run"}
			// The default network: by domain with bwrap (root) and with
			// Landlock from ABI 4, its first with network rules; off with
			// an older Landlock, which cannot do a map.
			if abi, _ := llsys.LandlockGetABIVersion(); backend == "bwrap" || abi >= 4 {
				want = append(want, "\n  network: by domain")
			} else {
				want = append(want, "\n  network: off;")
			}
			if backend == "bwrap" {
				want = append(want, "\n  socket: "+sock+" (allowSockets; missing now)\n", "\n  host Unix sockets: ")
			}
			for _, w := range want {
				if !strings.Contains(got.stdout, w) {
					t.Errorf("doctor lacks %q:\n%s", w, got.stdout)
				}
			}
		})
	}
}
