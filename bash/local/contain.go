package local

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/procfs"
)

// RunIDEnv is the variable the executor puts in every command's
// environment: a value unique to the command that also names the dsh
// process that started it ("<pidns>-<pid>-<start>-<executor>-<seq>": a pid
// means something only in its pid namespace). Descendants
// inherit it, so they can be found after they left the process group, and
// after dsh itself died.
const RunIDEnv = "DSH_RUN_ID"

// containment is how an executor keeps track of its commands' processes:
// one cgroup v2 per command where it can make one, else the marker.
type containment struct {
	mode    string // config.ContainCgroup or config.ContainMarker
	reason  string // why the marker is used, in marker mode
	base    string // cgroup mode: this executor's cgroup, parent of one per command
	hasKill bool   // cgroup.kill exists (Linux 5.14)
	prefix  string // marker values: "<pid>-<start>-<executor>-"
	seq     atomic.Uint64
}

// newContainment sets up containment as cfg asks ("auto" when empty).
func newContainment(want string) (*containment, error) {
	rnd := make([]byte, 4)
	_, _ = rand.Read(rnd)
	c := &containment{
		mode:   config.ContainMarker,
		prefix: fmt.Sprintf("%s-%s-", owner(), hex.EncodeToString(rnd)),
	}
	if want == config.ContainMarker {
		c.reason = "chosen by the config"
		return c, nil
	}
	parent, err := ownCgroup()
	if err == nil {
		c.base, c.hasKill, err = makeCgroupBase(parent)
	}
	if err != nil {
		if want == config.ContainCgroup {
			return nil, fmt.Errorf("%s: containment: cgroup: %w", Name, err)
		}
		c.reason = err.Error()
		return c, nil
	}
	c.mode = config.ContainCgroup
	return c, nil
}

// describe says what containment is in use, for dsh doctor.
func (c *containment) describe() string {
	if c.mode == config.ContainCgroup {
		return "cgroup v2, one cgroup per command under " + filepath.Dir(c.base)
	}
	return "marker: the " + RunIDEnv + " variable and the parent chain (" + c.reason + ")"
}

// close removes the executor's cgroup, once every command's is gone.
func (c *containment) close() {
	if c.base != "" {
		_ = os.Remove(c.base)
	}
}

// command makes the containment of one command, before it is spawned.
func (c *containment) command() (*commandContainer, error) {
	n := strconv.FormatUint(c.seq.Add(1), 10)
	cc := &commandContainer{
		runID:  c.prefix + n,
		cgFD:   -1,
		marker: c.mode == config.ContainMarker,
	}
	if c.mode == config.ContainCgroup {
		dir := filepath.Join(c.base, n)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: cgroup: %w", Name, err)
		}
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			_ = os.Remove(dir)
			return nil, fmt.Errorf("%s: cgroup: %w", Name, err)
		}
		cc.cg, cc.cgFD, cc.hasKill = dir, fd, c.hasKill
	}
	return cc, nil
}

// commandContainer is a command's processes: its process group, and its
// cgroup or (marker mode) every process carrying its run id or descending
// from one that does. It implements container.
type commandContainer struct {
	runID   string
	leader  int    // pid of the shell; set once it runs
	since   uint64 // the shell's start time: no member started before it
	marker  bool   // find members by the marker and the parent chain
	cg      string
	cgFD    int
	hasKill bool
	// reaped is when the shell was reaped (clock ticks since boot, +1),
	// 0 before: its pid, and so its pgid, may then be reused, so the
	// group counts only processes started before.
	reaped atomic.Uint64

	// The signal sent last, and to whom: await sends it to members that
	// appeared since (a command that forks while it is being killed).
	sent      syscall.Signal
	signalled map[int]bool
}

// leaderStarted records the shell's pid once it runs and, for the marker,
// its start time: no member started before it.
func (cc *commandContainer) leaderStarted(pid int) {
	cc.leader = pid
	if cc.marker {
		cc.since = procfs.Start(pid)
	}
}

// leaderReaped records that the shell was reaped.
func (cc *commandContainer) leaderReaped() { cc.reaped.Store(procfs.Ticks() + 1) }

// env is the marker entry for the command's environment.
func (cc *commandContainer) env() string { return RunIDEnv + "=" + cc.runID }

func (cc *commandContainer) signal(sig syscall.Signal) {
	cc.sent, cc.signalled = sig, make(map[int]bool)
	// The group at once (atomic for its members), but only without a
	// cgroup and while the shell is not reaped: a cgroup lists every
	// member, and a reaped shell's pgid may be reused.
	if cc.cg == "" && cc.leader > 1 && cc.reaped.Load() == 0 {
		_ = syscall.Kill(-cc.leader, sig)
	}
	if cc.cg != "" && sig == syscall.SIGKILL && cc.hasKill {
		// Atomic, for the cgroup and the cgroups below it: nothing in
		// them gets to fork a new member.
		if os.WriteFile(filepath.Join(cc.cg, "cgroup.kill"), []byte("1"), 0) == nil {
			return
		}
	}
	cc.signalNew()
}

// signalNew sends the last signal to the members it has not reached yet.
func (cc *commandContainer) signalNew() {
	pids, _ := cc.members()
	for _, pid := range pids {
		if !cc.signalled[pid] {
			cc.signalled[pid] = true
			_ = syscall.Kill(pid, cc.sent)
		}
	}
}

func (cc *commandContainer) live() bool {
	if cc.cg != "" {
		if populated, err := cgroupPopulated(cc.cg); err == nil && !populated {
			return false
		}
	}
	pids, err := cc.members()
	return err != nil || len(pids) > 0
}

// cgroupPopulated reads the populated flag of a cgroup's cgroup.events:
// false once no live process is left in it (zombies do not count).
func cgroupPopulated(dir string) (bool, error) {
	var buf [128]byte
	data, err := procfs.ReadFile(filepath.Join(dir, "cgroup.events"), buf[:])
	if err != nil {
		return false, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, errors.New("no populated line in " + dir + "/cgroup.events")
}

// await waits until no member is left, or deadline. Members may start
// more members while it waits: it looks again after each round, and
// sends those the signal sent last.
func (cc *commandContainer) await(deadline time.Time) bool {
	for {
		pids, err := cc.members()
		if err != nil {
			return false
		}
		if len(pids) == 0 {
			return true
		}
		if cc.sent != 0 {
			cc.signalNew()
		}
		if !awaitExit(pids, deadline) {
			return false
		}
	}
}

// release removes the command's cgroup, and any the command made below
// it, once they are empty.
func (cc *commandContainer) release() {
	if cc.cgFD >= 0 {
		_ = unix.Close(cc.cgFD)
		cc.cgFD = -1
	}
	if cc.cg != "" {
		removeTree(cc.cg)
	}
}

// removeTree removes a cgroup directory and those below it, bottom up. An
// emptied cgroup can take a moment to be removable.
func removeTree(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeTree(filepath.Join(dir, e.Name()))
		}
	}
	for i := 0; i < 50; i++ {
		err := os.Remove(dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// members lists the live processes of the command, zombies left out.
func (cc *commandContainer) members() ([]int, error) {
	if cc.cg != "" {
		pids, err := cgroupTreeProcs(cc.cg)
		if err != nil {
			return nil, err
		}
		var live []int
		for _, pid := range pids {
			if st, ok := procfs.ReadStat(pid); ok && !st.Dead() {
				live = append(live, pid)
			}
		}
		return live, nil
	}
	return scanMembers(cc.leader, cc.since, cc.reaped.Load(), cc.marker, cc.runID)
}

// lookupEnv reads a process's environment; a variable so that a test can
// hold a process in the moment of its execve, when the environment reads
// empty, which a real process passes too quickly to be caught on purpose.
var lookupEnv = procfs.LookupEnv

// execEnvWait bounds how long a scan waits for environments that read
// empty. A process in execve shows its new one within milliseconds (tens
// on a loaded machine); missing it would leave an escapee that has just
// exec'd running. A process started with no environment at all (env -i)
// costs a scan this much.
const execEnvWait = 250 * time.Millisecond

// awaitEnvs reads the environments of pending again, with growing pauses,
// until none reads empty or execEnvWait is over, and marks those carrying
// runID in in.
func awaitEnvs(pending []int, runID string, in map[int]bool) {
	deadline := time.Now().Add(execEnvWait)
	for pause := time.Millisecond; len(pending) > 0 && time.Now().Before(deadline); pause = min(2*pause, 20*time.Millisecond) {
		time.Sleep(pause)
		left := pending[:0]
		for _, pid := range pending {
			if markByEnv(pid, runID, in) {
				left = append(left, pid)
			}
		}
		pending = left
	}
}

// markByEnv marks pid in in when its environment carries runID, and
// reports whether the environment read empty.
func markByEnv(pid int, runID string, in map[int]bool) (empty bool) {
	v, env := lookupEnv(pid, RunIDEnv)
	if env == procfs.EnvFound && v == runID {
		in[pid] = true
	}
	return env == procfs.EnvEmpty
}

// scanMembers lists, from /proc, the live processes in the group led by
// leader and, with marker, those carrying runID and their descendants.
// Only processes started at or after since can be members: the others'
// environments are not read. Once the leader was reaped (reaped > 0), the
// group counts only processes started before that.
func scanMembers(leader int, since, reaped uint64, marker bool, runID string) ([]int, error) {
	all, err := procfs.Pids()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	in := make(map[int]bool)
	parent := make(map[int]int)
	var pending []int // environment read empty: none, or in execve
	for _, pid := range all {
		if pid == self {
			continue
		}
		st, ok := procfs.ReadStat(pid)
		if !ok || st.Dead() || st.Kernel() || st.Start < since {
			continue
		}
		parent[pid] = st.PPid
		switch {
		case leader > 1 && st.Pgrp == leader && (reaped == 0 || st.Start < reaped):
			in[pid] = true
		case marker:
			if markByEnv(pid, runID, in) {
				pending = append(pending, pid)
			}
		}
	}
	if len(pending) > 0 {
		awaitEnvs(pending, runID, in)
	}
	if marker {
		// The parent chain: children of members are members, even if they
		// dropped the marker from their environment.
		for grew := true; grew; {
			grew = false
			for pid, ppid := range parent {
				if !in[pid] && in[ppid] {
					in[pid], grew = true, true
				}
			}
		}
	}
	pids := make([]int, 0, len(in))
	for pid := range in {
		pids = append(pids, pid)
	}
	return pids, nil
}

// cgroupTreeProcs reads the cgroup.procs of a cgroup and of every cgroup
// below it: a command may make cgroups of its own and move into them.
func cgroupTreeProcs(dir string) ([]int, error) {
	pids, err := cgroupProcs(dir)
	if err != nil {
		return nil, err
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			more, err := cgroupTreeProcs(filepath.Join(dir, e.Name()))
			if err == nil {
				pids = append(pids, more...)
			}
		}
	}
	return pids, nil
}

// cgroupProcs reads a cgroup's cgroup.procs.
func cgroupProcs(dir string) ([]int, error) {
	var buf [512]byte
	data, err := procfs.ReadFile(filepath.Join(dir, "cgroup.procs"), buf[:])
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// ownCgroup finds this process's cgroup v2 directory: the cgroup2 mount
// (which need not be /sys/fs/cgroup: hybrid machines mount it at
// /sys/fs/cgroup/unified beside the v1 controllers) joined with the path
// of the "0::" line of /proc/self/cgroup.
func ownCgroup() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "", errors.New("no cgroup v2 in /proc/self/cgroup")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 1 || tail[0] != "cgroup2" {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok {
			continue // this mount does not show our cgroup
		}
		return filepath.Join(mnt, rel), nil
	}
	return "", errors.New("no cgroup2 file system mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupPrefix starts the name of an executor's cgroup:
// "dsh-<pidns>-<pid>-<start>-<random>", so a sweep can tell whose it was.
const cgroupPrefix = "dsh-"

// makeCgroupBase makes this executor's cgroup under parent and checks that
// a process can be started inside a child of it (clone into a cgroup needs
// Linux 5.7 and a cgroup we may write).
func makeCgroupBase(parent string) (base string, hasKill bool, err error) {
	rnd := make([]byte, 4)
	_, _ = rand.Read(rnd)
	base = filepath.Join(parent, cgroupPrefix+owner()+"-"+hex.EncodeToString(rnd))
	if err := os.Mkdir(base, 0o755); err != nil {
		return "", false, fmt.Errorf("cannot make a cgroup in %s: %w", parent, err)
	}
	probe := filepath.Join(base, "probe")
	fail := func(err error) (string, bool, error) {
		_ = os.Remove(probe)
		_ = os.Remove(base)
		return "", false, err
	}
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fail(fmt.Errorf("cannot make a cgroup in %s: %w", base, err))
	}
	_, err = os.Stat(filepath.Join(probe, "cgroup.kill"))
	hasKill = err == nil
	fd, err := unix.Open(probe, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(fd)
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		if sh, err = exec.LookPath("bash"); err != nil {
			return fail(fmt.Errorf("no shell to probe the cgroup with: %w", err))
		}
	}
	cmd := exec.Command(sh, "-c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Run(); err != nil {
		return fail(fmt.Errorf("cannot start a process in a cgroup of %s: %w", base, err))
	}
	if err := os.Remove(probe); err != nil {
		return fail(err)
	}
	return base, hasKill, nil
}

// Leftovers is what a start-up sweep killed and removed: processes and
// cgroups of dsh processes that no longer run.
type Leftovers struct {
	Pids    []int
	Cgroups []string
}

// sweep kills what dsh processes that died left behind: processes carrying
// a run id (in the variable runIDEnv; RunIDEnv but in tests) whose dsh no
// longer runs (whatever containment that dsh used), and, next to this
// executor's cgroup, the cgroups of dsh processes gone. They get SIGKILL
// at once: their owner is gone, nobody waits for them. Several dsh
// processes may sweep at once: what another removes first is skipped.
func sweep(cgroupParent, runIDEnv string) (Leftovers, error) {
	var left Leftovers
	var errs []error
	pids, err := procfs.Pids()
	if err != nil {
		return left, err
	}
	self := os.Getpid()
	for _, pid := range pids {
		if pid == self {
			continue
		}
		if st, ok := procfs.ReadStat(pid); !ok || st.Dead() || st.Kernel() {
			continue // (a kernel thread's environment reads empty, and Getenv waits on that)
		}
		id, ok := procfs.Getenv(pid, runIDEnv)
		if ok && deadOwner(id) && syscall.Kill(pid, syscall.SIGKILL) == nil {
			left.Pids = append(left.Pids, pid)
		}
	}
	if cgroupParent != "" {
		entries, err := os.ReadDir(cgroupParent)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			name, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
			if !ok || !e.IsDir() || !deadOwner(name) {
				continue
			}
			dir := filepath.Join(cgroupParent, e.Name())
			if err := removeCgroupTree(dir); err != nil {
				// Gone meanwhile: another dsh starting up swept it, or
				// its exiting owner removed it. Neither is ours to report.
				if !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			left.Cgroups = append(left.Cgroups, dir)
		}
	}
	return left, errors.Join(errs...)
}

// owner names this dsh process in run ids and cgroup names:
// "<pidns>-<pid>-<start>".
func owner() string {
	self := os.Getpid()
	return fmt.Sprintf("%d-%d-%d", procfs.PidNamespace(), self, procfs.Start(self))
}

// runIDOwner reads the dsh pid namespace, pid and start time at the head
// of a run id or a cgroup name ("<pidns>-<pid>-<start>-…").
func runIDOwner(id string) (ns uint64, pid int, start uint64, ok bool) {
	f := strings.SplitN(id, "-", 4)
	if len(f) < 4 {
		return 0, 0, 0, false
	}
	ns, err0 := strconv.ParseUint(f[0], 10, 64)
	pid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[2], 10, 64)
	return ns, pid, start, err0 == nil && err1 == nil && err2 == nil && pid > 0
}

// deadOwner reports whether a run id or cgroup name names a dsh of this
// pid namespace that no longer runs. One of another namespace (a
// container's dsh seen from the host, or the host's seen from inside one)
// is never judged: its pid means nothing here.
func deadOwner(id string) bool {
	ns, pid, start, ok := runIDOwner(id)
	if !ok || ns == 0 || ns != procfs.PidNamespace() {
		return false
	}
	return !procfs.Alive(pid, start)
}

// removeCgroupTree kills everything in a dead dsh's cgroup and removes it
// and its children. When the cgroup vanishes under it (removed by another
// sweeper, or by its owner finishing its exit) the error is
// os.ErrNotExist. (A cgroup being removed loses its files before its
// directory: cgroup.procs gone is the sign.)
func removeCgroupTree(dir string) error {
	err := killCgroupTree(dir)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "cgroup.procs")); errors.Is(statErr, os.ErrNotExist) {
			return fmt.Errorf("%s: %s: %w", Name, dir, os.ErrNotExist)
		}
	}
	return err
}

// killCgroupTree is removeCgroupTree without the vanish check at its own
// level; children that vanish are skipped.
func killCgroupTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			err := removeCgroupTree(filepath.Join(dir, e.Name()))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	cc := &commandContainer{cg: dir, cgFD: -1}
	_, err = os.Stat(filepath.Join(dir, "cgroup.kill"))
	cc.hasKill = err == nil
	cc.signal(syscall.SIGKILL)
	if !cc.await(time.Now().Add(2 * time.Second)) {
		return fmt.Errorf("%s: processes of %s did not die", Name, dir)
	}
	cc.release()
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s: cannot remove %s", Name, dir)
	}
	return nil
}
