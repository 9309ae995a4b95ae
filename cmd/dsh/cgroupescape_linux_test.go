package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dsh-go/dsh/internal/proctest"
)

// TestNonRootEscapeFromDelegatedCgroup is the reviewer's attack on a dsh
// that is not root, in a cgroup subtree delegated to its user (the
// cgroup.procs files are the user's, as systemd's Delegate= makes them)
// on a hierarchy without nsdelegate: a command moves a process into dsh's
// own cgroup, or into a cgroup it makes beside its own, with an empty
// environment, in a session of its own, orphaned. The process must not
// outlive `dsh run`. Without util-linux's unshare (no user namespace for
// the command), the one that moved beside its cgroup, in dsh's, is found
// still.
func TestNonRootEscapeFromDelegatedCgroup(t *testing.T) {
	t.Parallel()
	setpriv, err := exec.LookPath("setpriv")
	if os.Geteuid() != 0 || err != nil {
		t.Skip("SKIP-REASON: needs root to delegate a cgroup and setpriv to run dsh as another user")
	}
	own := ownCgroupDir(t)
	for _, target := range []string{"dsh", "beside", "beside-without-unshare"} {
		t.Run(target, func(t *testing.T) {
			deleg := delegatedCgroup(t, own, 65534)
			dir := nobodyRunDir(t)
			into := deleg // dsh's own cgroup
			if strings.HasPrefix(target, "beside") {
				into = "$(echo " + deleg + "/dsh-*)/evil" // beside the command's, in the executor's
			}
			pidFile := filepath.Join(dir, "work", "pid")
			script := fmt.Sprintf(`into=%s
( env -i setsid sh -c 'mkdir -p "$0"; echo $$ > "$0/cgroup.procs" && m=moved || m=stuck; echo $m > "$1.moved"; echo $$ > "$1"; exec sleep 300' "$into" %s & ) &
while [ ! -s %s ]; do sleep 0.05; done`, into, pidFile, pidFile)
			cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", filepath.Join(dir, "dsh"),
				"run", "--config", filepath.Join(dir, "dsh.yaml"), "--workdir", filepath.Join(dir, "work"), "--", script)
			cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR="+filepath.Join(dir, "tmp"))
			if target == "beside-without-unshare" {
				cmd.Env = append(cmd.Env, "PATH="+pathWithout(t, "unshare", "bash", "sh", "env", "setsid", "mkdir", "sleep"))
			}
			fd, err := syscall.Open(deleg, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Close(fd)
			cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("dsh run: %v\n%s", err, out)
			}
			pid := proctest.ReadPid(t, pidFile)
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			if moved := proctest.AwaitFile(t, pidFile+".moved"); moved != "moved" {
				t.Fatalf("the escapee could not move into %s: the attack did not happen\n%s", into, out)
			}
			if left := proctest.Survivors(proctest.Wait, pid); len(left) > 0 {
				t.Fatalf("the escapee %d outlived the command (in cgroup %s)\n%s", pid, cgroupOfPid(pid), out)
			}
		})
	}
}

// pathWithout is a PATH directory holding links to progs and not to the
// program left out.
func pathWithout(t *testing.T, left string, progs ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		path, err := exec.LookPath(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, left)); err == nil {
		t.Fatalf("%s is in %s", left, dir)
	}
	return dir
}

// ownCgroupDir is this process's cgroup v2 directory.
func ownCgroupDir(t *testing.T) string {
	t.Helper()
	rel := strings.TrimSpace(strings.TrimPrefix(cgroupOfPid(os.Getpid()), "0::"))
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, _ := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) >= 5 && len(tail) >= 3 && tail[0] == "cgroup2" && fields[3] == "/" {
			if strings.Contains(","+tail[2]+",", ",nsdelegate,") {
				t.Skip("SKIP-REASON: the hierarchy is mounted with nsdelegate: the kernel refuses the move")
			}
			return filepath.Join(fields[4], rel)
		}
	}
	t.Skip("SKIP-REASON: no cgroup2 mount of the whole hierarchy")
	return ""
}

// cgroupOfPid is pid's cgroup v2 path.
func cgroupOfPid(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p
		}
	}
	return ""
}

// delegatedCgroup makes a cgroup below parent delegated to uid, as
// systemd's Delegate= does, and removes it (and what dsh or the attack
// made below it) at the end.
func delegatedCgroup(t *testing.T, parent string, uid int) string {
	t.Helper()
	dir, err := os.MkdirTemp(parent, "dsh-test-delegated-")
	if err != nil {
		t.Skipf("SKIP-REASON: cannot make a cgroup in %s: %v", parent, err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs"), filepath.Join(dir, "cgroup.threads"), filepath.Join(dir, "cgroup.subtree_control")} {
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { removeCgroups(dir) })
	return dir
}

// removeCgroups kills what is left in dir and below, and removes them.
func removeCgroups(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeCgroups(filepath.Join(dir, e.Name()))
		}
	}
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	// A cgroup can be removed once its killed processes are gone.
	proctest.Within(proctest.Wait, func() bool { return os.Remove(dir) == nil })
}

// nobodyRunDir is a directory the user nobody can use: dsh's binary, its
// config, a work directory and a TMPDIR of its own.
func nobodyRunDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(dshBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dsh"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dsh.yaml"), []byte("local: {containment: cgroup, sandbox: {mode: off}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"work", "tmp"} {
		p := filepath.Join(dir, d)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
