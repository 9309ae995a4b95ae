package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/config"
)

// TestProbeRemembered: the bwrap probe runs at the first start, and not
// at the next while nothing it rests on changed; the version is asked
// only when something shows it. A command bwrap could not start, a cache
// directory others may write, a bwrap binary changed since, or other
// mounts make the probe run again. The bwrap
// seen is a script in PATH that logs each call, then runs the real one.
func TestProbeRemembered(t *testing.T) {
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("SKIP-REASON: no bwrap (apt install bubblewrap)")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	wrapper := filepath.Join(dir, "bin", "bwrap")
	if err := os.Mkdir(filepath.Dir(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(wrapper)+":"+os.Getenv("PATH"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	count := func(what string) int {
		data, _ := os.ReadFile(calls)
		return strings.Count(string(data), what)
	}
	mode := config.SandboxWorkspaceWrite
	start := func() *Sandbox {
		t.Helper()
		work := t.TempDir()
		s, err := New(config.Sandbox{Mode: mode, Backend: config.BackendBwrap, Network: &config.Network{}},
			Options{Cwd: work, Dir: work, Private: work, Shell: "/bin/bash", Env: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	const probe = "bash -c exit 7"
	start()
	if n := count(probe); n != 1 {
		t.Fatalf("first start: %d probes, want 1", n)
	}
	file := filepath.Join(dir, "cache", "dsh", "bwrap-probe")
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the probe was not remembered: %v %v", fi, err)
	}
	s := start()
	if n := count(probe); n != 1 || count("--version") != 0 {
		t.Fatalf("second start: %d probes, %d version calls; want 1 and 0", n, count("--version"))
	}
	if d := s.Describe()[0]; !strings.HasPrefix(d, "backend: bwrap 0.") || count("--version") != 1 {
		t.Errorf("describe: %q, %d version calls", d, count("--version"))
	}
	// A command whose starter reported nothing (here bwrap could not
	// enter its workdir) forgets the probe.
	st, err := s.Start(Command{Shell: "/bin/bash", Args: []string{"bash", "-c", "true"}, Dir: "/nonexistent-workdir", Env: os.Environ(), CgroupFD: -1})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Cmd.Wait()
	if _, ok := st.Status(); ok {
		t.Fatal("the starter reported a status from a workdir that does not exist")
	}
	st.Reaped()
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("after a start bwrap failed, the probe is still remembered: %v", err)
	}
	start()
	if n := count(probe); n != 2 {
		t.Fatalf("after it was forgotten: %d probes, want 2", n)
	}
	// A cache another user could have written is not believed.
	if err := os.Chmod(filepath.Dir(file), 0o777); err != nil {
		t.Fatal(err)
	}
	start()
	if n := count(probe); n != 3 {
		t.Fatalf("with a shared cache directory: %d probes, want 3", n)
	}
	if err := os.Chmod(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	start()
	if n := count(probe); n != 3 {
		t.Fatalf("after the directory is private again: %d probes, want 3", n)
	}
	// Another bwrap binary (here: the same file, modified) is probed.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(wrapper, later, later); err != nil {
		t.Fatal(err)
	}
	start()
	if n := count(probe); n != 4 {
		t.Fatalf("after bwrap changed: %d probes, want 4", n)
	}
	// Another config, other mounts: probed too.
	mode = config.SandboxReadOnly
	start()
	if n := count(probe); n != 5 {
		t.Fatalf("with another mode: %d probes, want 5", n)
	}
}
