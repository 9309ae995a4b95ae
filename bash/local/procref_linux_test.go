package local

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/procfs"
	"github.com/dsh-go/dsh/internal/proctest"
)

// stoppedSleep starts a sleep, stops it and returns it once it is
// stopped; it is killed and reaped at cleanup.
func stoppedSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "300")
	c.Env = append(os.Environ(), proctest.Name+"="+proctest.Value)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	_ = syscall.Kill(c.Process.Pid, syscall.SIGSTOP)
	proctest.Eventually(t, proctest.Scale(5*time.Second), func() error {
		if st, _ := procfs.ReadStat(c.Process.Pid); st.State != 'T' {
			return os.ErrNotExist
		}
		return nil
	})
	return c
}

// stillStopped fails unless pid is stopped after a resume: a SIGCONT
// wakes a stopped process in the kill call itself, so no wait is needed.
func stillStopped(t *testing.T, pid int, what string) {
	t.Helper()
	if st, _ := procfs.ReadStat(pid); st.State != 'T' {
		t.Errorf("%s: pid %d was resumed (state %c): a SIGCONT reached a process that took over a dead member's pid", what, pid, st.State)
	}
}

// TestResumeSignalsNoReusedPid: group mode stops a command's members
// before a signal and resumes them after it; a member that died
// meanwhile (the SIGKILL, an unhandled SIGTERM) may be reaped and its pid
// taken by an unrelated process, which the SIGCONT must not reach. The
// unrelated process here is a stopped sleep; the dead member is a
// process recorded under its pid, by a pidfd of a process since reaped,
// and (no pidfd) by another start time.
func TestResumeSignalsNoReusedPid(t *testing.T) {
	t.Parallel()
	victim := stoppedSleep(t)
	pid := victim.Process.Pid

	// The member had the pid before: another start time.
	resume(map[int]procRef{pid: {pid: pid, start: procfs.Start(pid) + 1, fd: -1}})
	stillStopped(t, pid, "by start time")

	// A pidfd of the member, which then died and was reaped; the pid
	// number is now the victim's.
	member := stoppedSleep(t)
	ref, ok := openRef(member.Process.Pid, procfs.Start(member.Process.Pid))
	if !ok {
		t.Fatal("openRef of a live process failed")
	}
	_ = member.Process.Kill()
	_ = member.Wait()
	ref.pid = pid
	resume(map[int]procRef{pid: ref})
	stillStopped(t, pid, "by pidfd")

	// The live member itself is resumed.
	ref, ok = openRef(pid, procfs.Start(pid))
	if !ok {
		t.Fatal("openRef of a live process failed")
	}
	resume(map[int]procRef{pid: ref})
	proctest.Eventually(t, proctest.Scale(5*time.Second), func() error {
		if st, _ := procfs.ReadStat(pid); st.State == 'T' {
			return os.ErrExist
		}
		return nil
	})
	if _, ok := openRef(pid, procfs.Start(pid)+1); ok {
		t.Error("openRef took a pid whose start time differs")
	}
}
