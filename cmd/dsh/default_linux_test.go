package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/bash/local"
)

// Safe by default (docs/spec.md §11): dsh with no config runs its
// commands in the sandbox, as root and as nobody; where no backend works
// they run unsandboxed and dsh says so in three places.

// defaultRun is one dsh mcp session as a user, with HOME at home and the
// extra environment, and the text of the bash tool's description.
type defaultRun struct {
	cs     *mcp.ClientSession
	desc   string
	stderr *bytes.Buffer
}

func startDefault(t *testing.T, n nobody, home string, env []string, args ...string) defaultRun {
	t.Helper()
	cmd := n.command(append([]string{"mcp", "--workdir", n.workdir}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + home}, env...)...)
	r := defaultRun{stderr: &bytes.Buffer{}}
	cmd.Stderr = r.stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	r.cs = cs
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "bash" {
			r.desc = tl.Description
		}
	}
	return r
}

// plantedHome is a home nobody can read, holding a private key that its
// user could read unsandboxed, and a directory outside every workspace
// that its user could write.
func plantedHome(t *testing.T) (home, key, outside string) {
	t.Helper()
	home, err := os.MkdirTemp(copies(t), "home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	key = "PRIVATE-KEY-" + newToken()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte(key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(home, 0o755)
	outside, err = os.MkdirTemp("/var/tmp", "dsh-default-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(outside, 0o777)
	t.Cleanup(func() { os.RemoveAll(outside) })
	return home, key, outside
}

// attackDefault reads the key and writes outside the workspace; it
// reports what it got.
func attackDefault(t *testing.T, cs *mcp.ClientSession, outside string) string {
	t.Helper()
	return sdkText(t, sdkCall(t, cs, "bash", map[string]any{"description": "attack",
		"command": "cat ~/.ssh/id_ed25519; echo x > " + outside + "/written && echo wrote"}))
}

// TestSandboxByDefault: with no config the commands of root and of nobody
// read no planted key and write nothing outside the workspace, and the
// description says the sandbox is on; with mode off (the control) the
// same attack works.
func TestSandboxByDefault(t *testing.T) {
	t.Parallel()
	if got := dsh(t, nil, "doctor"); strings.HasPrefix(got.stdout, "sandbox: NONE") {
		t.Skipf("SKIP-REASON: no sandbox backend here: %s", got.stdout)
	}
	for _, user := range []string{"root", "nobody"} {
		t.Run(user, func(t *testing.T) {
			n := asUser(t, user)
			home, key, outside := plantedHome(t)
			r := startDefault(t, n, home, nil)
			if !strings.Contains(r.desc, " Commands run in a workspace-write sandbox: ") || strings.Contains(r.desc, "not sandboxed") {
				t.Errorf("description: %q", r.desc)
			}
			if got := attackDefault(t, r.cs, outside); strings.Contains(got, key) || strings.Contains(got, "wrote") {
				t.Errorf("sandboxed by default, the attack got: %q", got)
			}
			if _, err := os.Stat(filepath.Join(outside, "written")); err == nil {
				t.Error("a command wrote outside the workspace")
			}
			off := filepath.Join(home, "off.yaml")
			if err := os.WriteFile(off, []byte("local: {sandbox: {mode: off}}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c := startDefault(t, n, home, nil, "--config", off)
			if got := attackDefault(t, c.cs, outside); !strings.Contains(got, key) || !strings.Contains(got, "wrote") {
				t.Errorf("control (mode off): the attack failed, so it proves nothing: %q", got)
			}
		})
	}
}

// TestNoSandboxBackendSaysSo: with no backend that can enforce the
// section (no bwrap on PATH, and allowSockets, which Landlock refuses),
// mode auto runs commands unsandboxed, and dsh says so at start, in
// doctor's first line and in the description.
func TestNoSandboxBackendSaysSo(t *testing.T) {
	t.Parallel()
	asUser(t, "root")                           // skips without root or setpriv
	bin, err := os.MkdirTemp(copies(t), "bin-") // nobody can reach it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sh, filepath.Join(bin, "bash")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(bin, 0o755)
	for _, user := range []string{"root", "nobody"} {
		t.Run(user, func(t *testing.T) {
			n := asUser(t, user)
			home, _, outside := plantedHome(t)
			cfg := filepath.Join(home, "dsh.yaml")
			if err := os.WriteFile(cfg, []byte("local: {sandbox: {allowSockets: [/run/dsh-e2e.sock]}}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r := startDefault(t, n, home, []string{"PATH=" + bin}, "--config", cfg)
			if !strings.HasSuffix(r.desc, ". Commands are not sandboxed here.") || strings.Contains(r.desc, "sandbox:") {
				t.Errorf("description: %q", r.desc)
			}
			if got := attackDefault(t, r.cs, outside); !strings.Contains(got, "wrote") {
				t.Errorf("an unsandboxed command could not write: %q", got)
			}
			r.cs.Close()
			const why = ` why="sandbox: bubblewrap not found (apt install bubblewrap) and landlock cannot keep only the allowSockets reachable`
			if w := strings.Count(r.stderr.String(), `level=WARN msg="`+local.NotSandboxedWarning+`"`+why); w != 1 {
				t.Errorf("the warning came %d times, want once:\n%s", w, r.stderr)
			}
			doc := n.command("doctor", "--config", cfg)
			doc.Env = append(os.Environ(), "HOME="+home, "PATH="+bin)
			out, err := doc.Output()
			if first, _, _ := strings.Cut(string(out), "\n"); err != nil ||
				!strings.HasPrefix(first, "sandbox: NONE, commands run with the user's full authority: bubblewrap not found") {
				t.Errorf("doctor: %v, first line %q", err, first)
			}
		})
	}
}
