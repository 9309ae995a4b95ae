//go:build linux

package procfs

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

func TestReadStatAndGetenv(t *testing.T) {
	st, ok := ReadStat(os.Getpid())
	if !ok || st.Dead() || st.PPid != os.Getppid() || st.Start == 0 || !Alive(os.Getpid(), st.Start) || Alive(os.Getpid(), st.Start+1) {
		t.Fatalf("self: %+v %v", st, ok)
	}
	cmd := exec.Command("sleep", "5")
	cmd.Env = []string{"A=1", "PROCFS_TEST=x=y", "B="}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for name, want := range map[string]string{"PROCFS_TEST": "x=y", "B": "", "A": "1"} {
		if v, ok := Getenv(cmd.Process.Pid, name); !ok || v != want {
			t.Errorf("Getenv(%s) = %q, %v", name, v, ok)
		}
	}
	if _, ok := Getenv(cmd.Process.Pid, "PROCFS"); ok {
		t.Error("a prefix of a name matched")
	}
	pids, err := Pids()
	if err != nil || !slices.Contains(pids, os.Getpid()) || !slices.Contains(pids, cmd.Process.Pid) {
		t.Fatalf("Pids: %d pids, %v", len(pids), err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if st, ok := ReadStat(cmd.Process.Pid); ok && !st.Dead() {
		t.Errorf("a reaped process reads as alive: %+v", st)
	}
	if Alive(cmd.Process.Pid, 0) {
		t.Error("a reaped process is alive")
	}
}

// TestKernelThread: a kernel thread's stat (a kworker, as a host shows it;
// none is visible in a container's pid namespace) has PF_KTHREAD; this
// process's does not.
func TestKernelThread(t *testing.T) {
	kworker := "1234 (kworker/1:2-events) I 2 0 0 0 -1 69238880 0 0 0 0 0 3 0 0 20 0 1 0 5571 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0"
	st, ok := parseStat([]byte(kworker))
	if !ok || !st.Kernel() || st.PPid != 2 || st.Start != 5571 || st.State != 'I' {
		t.Fatalf("kworker: %+v %v", st, ok)
	}
	if self, ok := ReadStat(os.Getpid()); !ok || self.Kernel() {
		t.Fatalf("self: %+v %v", self, ok)
	}
}

func TestLookupEnv(t *testing.T) {
	start := func(env []string) int {
		cmd := exec.Command("sleep", "5")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		// Start returns once execve is past its point of no return; the
		// new environment may read empty a moment longer.
		for len(env) > 0 {
			if _, got := LookupEnv(cmd.Process.Pid, "X"); got != EnvEmpty {
				break
			}
		}
		return cmd.Process.Pid
	}
	withX, withoutX, empty := start([]string{"X=1"}), start([]string{"Y=1"}), start([]string{})
	for _, tc := range []struct {
		pid  int
		want Env
	}{{withX, EnvFound}, {withoutX, EnvAbsent}, {empty, EnvEmpty}, {1 << 30, EnvUnreadable}} {
		if _, got := LookupEnv(tc.pid, "X"); got != tc.want {
			t.Errorf("LookupEnv(%d) = %v, want %v", tc.pid, got, tc.want)
		}
	}
}
