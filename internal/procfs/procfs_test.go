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
