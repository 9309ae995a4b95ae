//go:build linux

package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
)

// carrying lists the live processes whose environment holds name=value.
func carrying(name, value string) []int {
	mark := []byte(name + "=" + value + "\x00")
	var out []int
	pids, _ := procfs.Pids()
	for _, pid := range pids {
		if st, ok := procfs.ReadStat(pid); !ok || st.Dead() {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && bytes.Contains(env, mark) {
			out = append(out, pid)
		}
	}
	return out
}

func TestSandboxEscapesFail(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: the escape attempts are made as root; run as root to check them")
	}
	home := outsideDir(t)
	t.Setenv("HOME", home)
	must(t, os.Mkdir(filepath.Join(home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PRIVATE KEY\n"), 0o600))
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			key := home + "/.ssh/id_ed25519"
			self := strconv.Itoa(os.Getpid()) // dsh, outside the sandbox
			for _, c := range []struct {
				name, attack string
				control      bool // the attack reads the key unsandboxed
			}{
				{"remount", "mount -o remount,rw /", false},
				{"umount a hidden path", "umount " + home + "/.ssh; cat " + key, false},
				{"unshare", "unshare -r cat " + key, true},
				{"nsenter", "nsenter -t 1 -m -n cat " + key, false},
				{"nsenter into dsh", "nsenter -t " + self + " -m -n cat " + key, true},
				{"/proc/1/root", "cat /proc/1/root" + key, false},
				{"dsh's /proc/PID/root", "cat /proc/" + self + "/root" + key, true},
				{"another cgroup", "echo $$ > " + cgroupRoot(t) + "/cgroup.procs", false},
			} {
				r := s.run(c.attack)
				if exitCode(r) == "0" || strings.Contains(r.Stdout.Text, "PRIVATE KEY") {
					t.Errorf("%s: %q succeeded: %+v", c.name, c.attack, r)
				}
				// Controls only for the reads: the others would change
				// the host. pid 1 may be out of root's reach even
				// unsandboxed (a VM's init), so the attacks on dsh's own
				// pid are the ones with a control.
				if !c.control {
					continue
				}
				if r := s.control(c.attack); !strings.Contains(r.Stdout.Text, "PRIVATE KEY") {
					t.Errorf("control %s failed, the test proves nothing: %+v", c.name, r)
				}
			}
			// Processes that leave the group, fork storms included, end
			// with their command.
			for i, attack := range []string{
				"setsid sleep 60 & sleep 0.1",
				"(sleep 60 &) ; (setsid sleep 60 &)",
				"for i in $(seq 100); do (sleep 60 &); done",
			} {
				token := fmt.Sprintf("%s-%d-%d", b, os.Getpid(), i)
				r := s.runSpec(bash.Request{Command: attack, Owner: s.owner, Env: map[string]string{"DSH_ESCAPE": token}})
				if exitCode(r) != "0" {
					t.Errorf("%q: %+v", attack, r)
				}
				proctest.Eventually(t, proctest.Wait, func() error {
					if left := carrying("DSH_ESCAPE", token); len(left) > 0 {
						return fmt.Errorf("%q left %v running", attack, left)
					}
					return nil
				})
			}
		})
	}
}

// cgroupRoot is the cgroup v2 root here (or a path that is not one, which
// fails the same).
func cgroupRoot(t *testing.T) string {
	for _, p := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
			return p
		}
	}
	return "/sys/fs/cgroup"
}

func TestSandboxSignals(t *testing.T) {
	// The timeout is the time bash has to set its trap, and the grace
	// the time the trap has to print before the SIGKILL: a loaded
	// machine needs more of both. The landlock helper is the -race test
	// binary executed again, whose start took over 300 ms in CI.
	timeout, grace := proctest.Scale(time.Second), proctest.Scale(300*time.Millisecond)
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.Grace = grace })
			if r := s.run("kill -TERM $$"); r.Signal != "SIGTERM" || r.ExitCode != nil {
				t.Errorf("kill -TERM $$: %+v", r)
			}
			if r := s.run("exit 143"); exitCode(r) != "143" {
				t.Errorf("exit 143 is not an exit: %+v", r)
			}
			// A TERM-trapping command: SIGTERM at the timeout, SIGKILL
			// after the grace.
			ms := float64(timeout / time.Millisecond)
			begin := time.Now()
			r := s.runSpec(bash.Request{Command: "trap 'echo got TERM' TERM; while :; do sleep 0.05; done", Owner: s.owner, TimeoutMs: &ms})
			took := time.Since(begin)
			if !r.TimedOut || r.Signal != "SIGKILL" || !strings.Contains(r.Stdout.Text, "got TERM") {
				t.Errorf("trapping command: %+v", r)
			}
			if took < timeout+grace {
				t.Errorf("killed after %v, before timeout and grace", took)
			}
			// A background task killed: killed by SIGTERM.
			spec, err := s.e.Resolve(bash.Request{Command: "sleep 60", Owner: s.owner})
			must(t, err)
			p, err := s.e.Start(context.Background(), spec)
			must(t, err)
			p.Kill()
			wait(t, p)
			if st := p.State(); st.Status != bash.StatusKilled || st.Signal != "SIGTERM" {
				t.Errorf("task kill: %+v", st)
			}
		})
	}
}

func TestSandboxSpillFilesReadableByTheSession(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.MaxOutputBytes = 100 })
			r := s.run("seq 1 1000")
			path := r.Stdout.SpillPath
			if path == "" {
				t.Fatalf("no spill file: %+v", r)
			}
			if r := s.run("wc -l < " + path); strings.TrimSpace(r.Stdout.Text) != "1000" {
				t.Errorf("the next call cannot read %s: %+v", path, r)
			}
			other := s.owner
			s.owner = newOwner(t, "other", s.ws)
			if r := s.run("wc -l < " + path); strings.TrimSpace(r.Stdout.Text) == "1000" {
				t.Errorf("another session read %s: %+v", path, r)
			}
			s.owner = other
			// The spill files go with the session.
			other.End()
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s outlived its session: %v", path, err)
			}
		})
	}
}

func TestSandboxSessionEndEndsItsTasks(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			spec, err := s.e.Resolve(bash.Request{Command: "sleep 60", Owner: s.owner})
			must(t, err)
			p, err := s.e.Start(context.Background(), spec)
			must(t, err)
			s.owner.End()
			wait(t, p)
			if st := p.State(); st.Status != bash.StatusKilled {
				t.Errorf("task after its session ended: %+v", st)
			}
			// A late call of the ended session does not run.
			spec.Command = "true"
			if _, err := bash.Run(t.Context(), s.e, spec); err == nil || !strings.Contains(err.Error(), "the session has ended") {
				t.Errorf("a call after its session ended: %v", err)
			}
		})
	}
}

// newOwner is a session that ends with the test.
func newOwner(t *testing.T, id, cwd string) *session.Session {
	s := session.New(id, cwd)
	t.Cleanup(s.End)
	return s
}

func TestSandboxBadInput(t *testing.T) {
	t.Run("missing writable root", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.Sandbox = config.Sandbox{Mode: config.SandboxWorkspaceWrite, WritableRoots: []string{"/nonexistent/dsh"}}
		_, err := New(cfg)
		if err == nil || err.Error() != "bash-local: sandbox: writableRoots: /nonexistent/dsh does not exist" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("hidden socket", func(t *testing.T) {
		for _, b := range backends {
			t.Run(b, func(t *testing.T) {
				sock := filepath.Join(outsideDir(t), "agent.sock")
				unixServer(t, sock)
				s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.Sandbox.Hide = []string{sock} })
				attack := "curl -sS --max-time 5 --unix-socket " + sock + " http://x/"
				if r := s.run(attack); exitCode(r) == "0" {
					t.Errorf("reached a hidden socket: %+v", r)
				}
				if r := s.control(attack); r.Stdout.Text != "ok" {
					t.Errorf("control: %+v", r)
				}
			})
		}
	})
	t.Run("workdir outside every root", func(t *testing.T) {
		for _, b := range backends {
			t.Run(b, func(t *testing.T) {
				s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
				dir := outsideDir(t)
				must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("data\n"), 0o644))
				r := s.runSpec(bash.Request{Command: "cat f && echo x > g", Owner: s.owner, Workdir: dir})
				if r.Stdout.Text != "data\n" || !blocked(r) {
					t.Errorf("outside every root: readable, not writable; got %+v", r)
				}
			})
		}
	})
}

// TestSandboxProgressAndStdin: what progress reports read (Observe) and
// the stdin bytes and long commands that reach the shell through pipes
// work inside the sandbox as outside.
func TestSandboxProgressAndStdin(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			var seen strings.Builder
			long := "echo " + strings.Repeat("x", 70<<10) + " | wc -c; cat"
			r := s.runSpec(bash.Request{Command: long, Owner: s.owner, Stdin: []byte("from stdin\n"),
				Observe: func(_ string, p []byte) { seen.Write(p) }})
			if r.Stdout.Text != "71681\nfrom stdin\n" || seen.String() != r.Stdout.Text {
				t.Errorf("got %+v, observed %q", r, seen.String())
			}
		})
	}
}

// TestSandboxAllowSockets: a socket allowSockets lists is reachable under
// the empty /run (bwrap); landlock, which cannot tell sockets apart,
// refuses the list.
func TestSandboxAllowSockets(t *testing.T) {
	dir := runDir(t)
	allowed := filepath.Join(dir, fmt.Sprintf("dsh-allowed-%d.sock", os.Getpid()))
	other := filepath.Join(dir, fmt.Sprintf("dsh-other-%d.sock", os.Getpid()))
	unixServer(t, allowed)
	unixServer(t, other)
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			if landlocked(b) {
				cfg := testConfig(t)
				cfg.Sandbox = sandboxOf(b, config.SandboxWorkspaceWrite)
				cfg.Sandbox.AllowSockets = []string{allowed}
				if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "landlock cannot keep only the allowSockets reachable") {
					t.Errorf("landlock with allowSockets: %v", err)
				}
				return
			}
			s := newSbx(t, b, config.SandboxWorkspaceWrite, func(c *config.Local) { c.Sandbox.AllowSockets = []string{allowed} })
			curl := "curl -sS --max-time 5 --unix-socket "
			if r := s.run(curl + allowed + " http://x/"); r.Stdout.Text != "ok" {
				t.Errorf("the allowed socket is not reachable: %+v", r)
			}
			if r := s.run(curl + other + " http://x/"); exitCode(r) == "0" {
				t.Errorf("a socket not allowed is reachable: %+v", r)
			}
		})
	}
}

// TestSandboxPrivilegesAndEnv: what a sandboxed command runs with (docs/
// spec.md §11): no capabilities and no_new_privs; SSH_AUTH_SOCK unset;
// the caches in its own /tmp; a missing protected directory (.claude)
// that cannot be made; with bwrap, $XDG_RUNTIME_DIR empty. Each with the
// same command unsandboxed as its control where the control differs.
func TestSandboxPrivilegesAndEnv(t *testing.T) {
	runtimeDir := outsideDir(t) // not under /run: a tmpfs of its own
	must(t, os.WriteFile(filepath.Join(runtimeDir, "bus"), nil, 0o600))
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	t.Setenv("SSH_AUTH_SOCK", filepath.Join(runtimeDir, "agent.sock"))
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			status := "grep -E '^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status | tr -d '\\t'"
			want := "CapPrm:0000000000000000\nCapEff:0000000000000000\nCapBnd:0000000000000000\nCapAmb:0000000000000000\nNoNewPrivs:1\n"
			if landlocked(b) && os.Geteuid() != 0 {
				// Without CAP_SETPCAP the bounding set cannot be dropped;
				// with nothing permitted and no_new_privs it grants nothing.
				status = strings.Replace(status, "CapBnd|", "", 1)
				want = strings.Replace(want, "CapBnd:0000000000000000\n", "", 1)
			}
			if r := s.run(status); r.Stdout.Text != want {
				t.Errorf("privileges inside: %q, want %q", r.Stdout.Text, want)
			}
			if r := s.control(status); r.Stdout.Text == want {
				t.Errorf("control: the same privileges unsandboxed, the test proves nothing: %q", r.Stdout.Text)
			}
			agent := "echo ${SSH_AUTH_SOCK-unset}"
			if r := s.run(agent); r.Stdout.Text != "unset\n" {
				t.Errorf("SSH_AUTH_SOCK inside: %+v", r)
			}
			if r := s.control(agent); r.Stdout.Text == "unset\n" {
				t.Errorf("control: SSH_AUTH_SOCK unset unsandboxed: %+v", r)
			}
			caches := `for v in "$XDG_CACHE_HOME" "$GOCACHE" "$npm_config_cache" "$PIP_CACHE_DIR"; do
				case $v in "$TMPDIR"/?*) mkdir -p "$v" && touch "$v/x" || exit 1;; *) echo "$v is not under $TMPDIR"; exit 1;; esac
			done`
			if r := s.run(caches); exitCode(r) != "0" {
				t.Errorf("the caches are not in the sandbox's /tmp: %+v", r)
			}
			settings := "mkdir -p .claude && echo '{}' > .claude/settings.local.json"
			if r := s.run(settings); !blocked(r) {
				t.Errorf("made a missing protected directory: %+v", r)
			}
			if r := s.control(settings); exitCode(r) != "0" {
				t.Errorf("control %s failed, the test proves nothing: %+v", settings, r)
			}
			if landlocked(b) {
				return // no mounts: Unix sockets are cut by seccomp (TestSandboxNetworkOff)
			}
			if r := s.run("ls -A " + runtimeDir); exitCode(r) != "0" || r.Stdout.Text != "" {
				t.Errorf("$XDG_RUNTIME_DIR is not empty inside: %+v", r)
			}
			if r := s.control("ls -A " + runtimeDir); r.Stdout.Text != "bus\n" {
				t.Errorf("control: %+v", r)
			}
		})
	}
}

// setuidEnv names, in the tests TestSandboxAsNonRoot runs as nobody, a
// setuid-root copy of id(1) that root made for them.
const setuidEnv = "DSH_TEST_SETUID_ID"

// TestSandboxSetuidDoesNotElevate: as nobody, a setuid-root program run
// sandboxed stays nobody (no_new_privs; bwrap's user namespace), where
// unsandboxed it becomes root.
func TestSandboxSetuidDoesNotElevate(t *testing.T) {
	suid := os.Getenv(setuidEnv)
	if suid == "" {
		if os.Geteuid() == 0 {
			t.Log("root cannot gain by setuid: TestSandboxAsNonRoot runs this test as nobody")
			return
		}
		t.Skip("SKIP-REASON: needs a setuid-root program that only root can make: run the tests as root")
	}
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSbx(t, b, config.SandboxWorkspaceWrite, nil)
			if r := s.run(suid + " -u"); r.Stdout.Text != strconv.Itoa(os.Geteuid())+"\n" {
				t.Errorf("setuid inside the sandbox: %+v", r)
			}
			if r := s.control(suid + " -u"); r.Stdout.Text != "0\n" {
				t.Errorf("control: a setuid-root program did not become root unsandboxed, the test proves nothing: %+v", r)
			}
		})
	}
}
