package local

// Containment: an executor's choice between a cgroup per command
// (cgroup.go), the marker and the group (marker.go), and the container of
// one command, which the kill sequence acts on. What a dsh that died left is
// swept at start-up (sweep.go).

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
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
// one cgroup v2 per command where it can make one, else the marker (on
// macOS the group, platform_darwin.go); or the group alone, as the config
// asks.
type containment struct {
	base string // cgroup mode: this executor's cgroup, parent of one per command
	// assumed: cgroup mode and a cgroup namespace were taken as given,
	// without a probe (makeCgroupBase); confirm probes after a spawn
	// failed, and may change the fields stateMu guards.
	assumed   atomic.Bool
	cloned    atomic.Bool   // a command was cloned into its cgroup
	gen       atomic.Uint64 // the probes confirm ran
	confirmMu sync.Mutex
	stateMu   sync.RWMutex
	mode      string // config.ContainCgroup, ContainMarker or ContainGroup
	reason    string // why the marker or the group is used
	hasKill   bool   // cgroup.kill exists (Linux 5.14)
	// cgroupNS: unsandboxed commands start in a cgroup namespace of their
	// own. escapable: a command may move itself out of its cgroup (no
	// nsdelegate, or no namespace), so the kill sequence also looks for
	// its processes outside it.
	cgroupNS  bool
	userNS    bool // the cgroup namespace needs a user namespace (not root)
	escapable bool
	prefix    string // run ids: "<pidns>-<pid>-<start>-<executor>-"
	seq       atomic.Uint64
	liveMu    sync.Mutex
	liveCg    map[string]bool // cgroups of the commands not released yet
}

// newContainment sets up containment as cfg asks ("auto" when empty). A
// mode this platform cannot do is an error.
func newContainment(want string) (*containment, error) {
	if err := unavailable(want); err != nil {
		return nil, fmt.Errorf("%s: containment: %s: %w", Name, want, err)
	}
	rnd := make([]byte, 4)
	_, _ = rand.Read(rnd)
	c := &containment{
		mode:   autoFallback,
		prefix: fmt.Sprintf("%s-%s-", procfs.Owner(), hex.EncodeToString(rnd)),
	}
	if want == config.ContainMarker || want == config.ContainGroup {
		c.mode, c.reason = want, "chosen by the config"
		return c, nil
	}
	if errNoCgroups != nil {
		c.reason = errNoCgroups.Error()
		return c, nil
	}
	parent, err := ownCgroup()
	var cb cgroupBase
	assume := want != config.ContainCgroup && os.Geteuid() == 0
	if err == nil {
		cb, err = makeCgroupBase(parent, assume)
	}
	if err != nil {
		if want == config.ContainCgroup {
			return nil, fmt.Errorf("%s: containment: cgroup: %w", Name, err)
		}
		c.reason = err.Error()
		return c, nil
	}
	c.mode = config.ContainCgroup
	c.base, c.hasKill, c.cgroupNS, c.userNS = cb.dir, cb.hasKill, cb.ns, cb.userns
	c.escapable = escapable(c.cgroupNS, c.base)
	c.assumed.Store(assume)
	return c, nil
}

// escapable reports whether a command may move itself out of a cgroup
// below base: with nsdelegate the kernel refuses a move out of the
// namespace; without rights to move, there is none to make.
func escapable(cgroupNS bool, base string) bool {
	return !(cgroupNS && nsDelegate()) && canLeave(base)
}

// confirm probes the executor's cgroup after a spawn into a cgroup
// failed while cgroup containment was only assumed, once. A probe that
// fails turns the containment to the marker (as newContainment would
// have), unless a command was cloned into its cgroup before: then cloning
// works, and the failure says nothing of it (nor does one of the
// system's limits: out of descriptors, processes or memory, which leaves
// all as it was). A probe that passes sets what it found. marker, when
// the containment turns to the marker, runs before any command can see
// it (the limits that go with it). confirm reports whether a spawn that
// failed under generation seen should be tried again: the probe ran, now
// or since.
func (c *containment) confirm(seen uint64, marker func()) bool {
	c.confirmMu.Lock()
	defer c.confirmMu.Unlock()
	if c.gen.Load() != seen {
		return true // probed since that spawn began
	}
	if !c.assumed.Load() {
		return false
	}
	cb := cgroupBase{dir: c.base}
	err := probeCgroupBase(&cb)
	if err != nil && (c.cloned.Load() || systemLimit(err)) {
		return false
	}
	c.stateMu.Lock()
	if err != nil {
		c.mode, c.reason = autoFallback, err.Error()
		marker()
	} else {
		c.hasKill, c.cgroupNS, c.userNS = cb.hasKill, cb.ns, cb.userns
		c.escapable = escapable(c.cgroupNS, c.base)
	}
	c.assumed.Store(false)
	c.gen.Add(1)
	c.stateMu.Unlock()
	return true
}

// systemLimit reports whether err is one of the system's limits, which
// passes: no descriptors, processes or memory left.
func systemLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOMEM)
}

// generation counts the probes run after start: a spawn notes it before
// it begins.
func (c *containment) generation() uint64 { return c.gen.Load() }

// spawned records what a spawn into a cgroup showed: cloning into one
// works, and with ns, that a cgroup namespace does too. Once both are
// seen, nothing is assumed any more.
func (c *containment) spawned(ns bool) {
	c.cloned.Store(true)
	if ns {
		c.assumed.Store(false)
	}
}

// cgroupMode reports whether commands get a cgroup each.
func (c *containment) cgroupMode() bool {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	return c.mode == config.ContainCgroup
}

// strays lists the processes in the executor's cgroup itself and in any
// cgroup below it that is no live command's: only a command that moved
// there puts one in it, so each is a command's escapee, whichever. The
// live ones are read after the listing: a command's cgroup is known
// before it is made, so one listed is never taken for a stray.
func (c *containment) strays() []int {
	pids, _ := cgroupProcs(c.base)
	entries, _ := os.ReadDir(c.base)
	c.liveMu.Lock()
	live := maps.Clone(c.liveCg)
	c.liveMu.Unlock()
	for _, e := range entries {
		if dir := filepath.Join(c.base, e.Name()); e.IsDir() && !live[dir] {
			more, _ := cgroupTreeProcs(dir)
			pids = append(pids, more...)
		}
	}
	return pids
}

// released forgets the cgroup of a command that is gone.
func (c *containment) released(dir string) {
	c.liveMu.Lock()
	delete(c.liveCg, dir)
	c.liveMu.Unlock()
}

// describe says what containment is in use, for dsh doctor.
func (c *containment) describe() string {
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	switch c.mode {
	case config.ContainCgroup:
		d := "cgroup v2, one cgroup per command"
		switch {
		case !c.escapable && c.userNS:
			d += " (in a user and cgroup namespace; no process of this user can leave its cgroup)"
		case !c.escapable && c.cgroupNS:
			d += " (in a cgroup namespace; no process of this user can leave its cgroup)"
		case !c.escapable:
			d += " (no process of this user can leave its cgroup)"
		case c.userNS:
			d += " (in a user and cgroup namespace; who leaves the cgroup is found by its user namespace)"
		case c.cgroupNS:
			d += " (in a cgroup namespace; who leaves the cgroup is found by namespace and run id)"
		default:
			d += " (who leaves the cgroup is found by run id or in a cgroup of dsh's; one that also clears its environment, leaves the parent chain and moves elsewhere is not)"
		}
		return d + " under " + filepath.Dir(c.base)
	case config.ContainGroup:
		return "group: the process group and its descendants by the parent chain (" + c.reason + ")"
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
	c.stateMu.RLock()
	defer c.stateMu.RUnlock()
	n := strconv.FormatUint(c.seq.Add(1), 10)
	cc := &commandContainer{
		runID:  c.prefix + n,
		cgFD:   -1,
		nsFD:   -1,
		unsFD:  -1,
		marker: c.mode == config.ContainMarker,
		chain:  c.mode == config.ContainMarker || c.mode == config.ContainGroup,
		freeze: c.mode == config.ContainGroup,
	}
	if cc.chain {
		cc.known = make(map[int]uint64)
	}
	if c.mode == config.ContainCgroup {
		// Known as a command's before it exists: strays reads the
		// cgroups it lists against the ones known after it listed them.
		c.liveMu.Lock()
		if c.liveCg == nil {
			c.liveCg = make(map[string]bool)
		}
		c.liveCg[filepath.Join(c.base, n)] = true
		c.liveMu.Unlock()
		dir, fd, err := makeCommandCgroup(c.base, n)
		if err != nil {
			c.released(filepath.Join(c.base, n))
			return nil, err
		}
		cc.cg, cc.cgFD, cc.hasKill = dir, fd, c.hasKill
		cc.cgroupNS, cc.userNS, cc.escapable = c.cgroupNS, c.userNS, c.escapable
		cc.owner = c
	}
	if cc.chain || cc.escapable {
		cc.mark = procfs.NewMark() // before the fork: see procfs.TableAfter
	}
	return cc, nil
}

// container is what the kill sequence acts on: a command's processes
// (see commandContainer).
type container interface {
	// signal sends sig to every member. It never fails loudly: a gone
	// member, EPERM or a missing pid are no-ops.
	signal(sig syscall.Signal)
	// live reports whether a member other than a zombie remains.
	live() bool
	// await waits until no live member remains or deadline passes, and
	// reports whether none remains.
	await(deadline time.Time) bool
	// release frees what the container holds (a cgroup) once it is empty.
	release()
	// lateMembers reports whether members may appear after a signal that
	// missed them: a sandbox's, started by bwrap after the signal was
	// sent, and that signal sparing bwrap; resignal then sends it to the
	// members not reached yet.
	lateMembers() bool
	resignal()
}

// commandContainer is a command's processes: its process group, and its
// cgroup, or (marker mode) every process carrying its run id, or (group
// mode) nothing more; and, but in cgroup mode, the descendants of those by
// the parent chain. It implements container.
type commandContainer struct {
	runID  string
	leader int    // pid of the shell; set once it runs
	since  uint64 // the shell's start time: no member started before it
	// mark, taken before the shell was forked, lets a scan of the process
	// table read only the processes forked after the shell (their pids
	// follow its pid): the others cannot be members.
	mark   procfs.Mark
	marker bool // find members by the marker
	chain  bool // and by the parent chain
	freeze bool // stop every member before a signal (group mode)
	// known holds the members found so far, pid → start time (marker
	// and group modes; nil else): one is still found after its parent
	// died, or once its exit took its environment with its memory, a
	// moment before it is a zombie.
	known   map[int]uint64
	knownMu sync.Mutex
	cg      string
	cgFD    int
	hasKill bool
	// cgroupNS: the shell is to start in a cgroup namespace of its own
	// (cleared for a sandboxed command). ns is that namespace's inode,
	// held by nsFD so that no other namespace gets it; 0 when unknown.
	// escapable: members may have moved out of the cgroup, so they are
	// also looked for by the marker and the namespace.
	// userNS: it starts in a user namespace of its own too (uns, held
	// by unsFD): a process of the command is in it or in one below it.
	owner     *containment // of a command's cgroup: its strays are looked for too
	cgroupNS  bool
	ns        uint64
	nsFD      int
	userNS    bool
	uns       uint64
	unsFD     int
	escapable bool
	// reaped is when the shell was reaped (clock ticks since boot, +1),
	// 0 before: its pid, and so its pgid, may then be reused, so the
	// group counts only processes started before.
	reaped atomic.Uint64

	// spare is a member the SIGTERM spares: a sandbox's bwrap, whose
	// death would end the whole sandbox before the command's grace.
	spare int

	// The signal sent last, and to whom: await sends it to members that
	// appeared since (a command that forks while it is being killed).
	sent      syscall.Signal
	signalled map[int]bool
}

// leaderStarted records the shell's pid once it runs and, for a scan of
// the process table (marker and group modes, or members looked for
// outside the cgroup), its start time: no member started before it; and
// the cgroup namespace it started in.
func (cc *commandContainer) leaderStarted(pid int) {
	cc.leader = pid
	if cc.chain || cc.escapable {
		cc.since = procfs.Start(pid)
	}
	switch {
	case cc.cgroupNS && cc.userNS:
		cc.awaitNamespaces(pid)
	case cc.cgroupNS:
		cc.ns, cc.nsFD = holdNamespace(pid, "cgroup")
	}
}

// awaitNamespaces holds the shell's user and cgroup namespaces once
// unshare made them (at once, a moment after the spawn: userNSCommand),
// or gives up when the shell is gone or after a second.
func (cc *commandContainer) awaitNamespaces(pid int) {
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if cc.uns, cc.unsFD = holdNamespace(pid, "user"); cc.uns != 0 {
			cc.ns, cc.nsFD = holdNamespace(pid, "cgroup")
			return
		}
		if st, ok := procfs.ReadStat(pid); !ok || st.Dead() {
			return
		}
	}
}

// holdNamespace opens the shell's namespace of the kind (cgroup, user),
// so that its inode names it alone while the command's processes are
// looked for. A shell already gone, or a namespace that is this process's
// own (it would make every process a member), leaves it unknown (0, -1).
func holdNamespace(pid int, kind string) (ino uint64, fd int) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/"+kind, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, -1
	}
	var st, own unix.Stat_t
	if unix.Fstat(fd, &st) != nil || unix.Stat("/proc/self/ns/"+kind, &own) != nil || st.Ino == own.Ino {
		_ = unix.Close(fd)
		return 0, -1
	}
	return st.Ino, fd
}

// leaderReaped records that the shell was reaped.
func (cc *commandContainer) leaderReaped() { cc.reaped.Store(procfs.Ticks() + 1) }

// env is the marker entry for the command's environment.
func (cc *commandContainer) env() string { return RunIDEnv + "=" + cc.runID }

func (cc *commandContainer) signal(sig syscall.Signal) {
	cc.sent, cc.signalled = sig, make(map[int]bool)
	if cc.freeze {
		// Group mode finds what left the group by the parent chain
		// alone: a member that dies before its new children are found
		// orphans them out of reach (a fork storm). Stopped, no member
		// forks or dies until every one has the signal.
		defer resume(cc.stopAll())
	}
	// The group at once (atomic for its members), but only without a
	// cgroup and while the shell is not reaped: a cgroup lists every
	// member, and a reaped shell's pgid may be reused; and not a SIGTERM
	// that must spare a member.
	if cc.cg == "" && cc.leader > 1 && cc.reaped.Load() == 0 && !cc.spares(sig) {
		_ = syscall.Kill(-cc.leader, sig)
	}
	if cc.cg != "" && sig == syscall.SIGKILL && cc.hasKill {
		// Atomic, for the cgroup and the cgroups below it: nothing in
		// them gets to fork a new member. Those that left it get it
		// one by one.
		if os.WriteFile(filepath.Join(cc.cg, "cgroup.kill"), []byte("1"), 0) == nil && !cc.escapable {
			return
		}
	}
	cc.signalNew()
}

// stopAll sends SIGSTOP to the group and to every member, looking again
// until a look finds no member it has not stopped and every one is
// stopped (or dead), or freezeRounds looks were made; it returns what it
// stopped, by pid and start time, for resume.
func (cc *commandContainer) stopAll() map[int]procRef {
	if cc.leader > 1 && cc.reaped.Load() == 0 {
		_ = syscall.Kill(-cc.leader, syscall.SIGSTOP)
	}
	stopped := make(map[int]procRef)
	for range freezeRounds {
		pids, err := cc.members()
		if err != nil {
			break
		}
		settled := true
		for _, pid := range pids {
			start := cc.startOf(pid)
			if old, ok := stopped[pid]; !ok || old.start != start {
				// New, or a new process under a member's pid.
				settled = false
				if ok {
					old.close()
					delete(stopped, pid)
				}
				if ref, ok := openRef(pid, start); ok {
					stopped[pid] = ref
					ref.signal(syscall.SIGSTOP)
				}
			} else if st, ok := procfs.ReadStat(pid); ok && st.State != 'T' && st.State != 't' && !st.Dead() {
				settled = false // the SIGSTOP is not delivered yet: it may still fork
			}
		}
		if settled {
			break
		}
	}
	return stopped
}

// startOf is the start time of member pid as the last look found it.
func (cc *commandContainer) startOf(pid int) uint64 {
	cc.knownMu.Lock()
	defer cc.knownMu.Unlock()
	return cc.known[pid]
}

// freezeRounds bounds stopAll's looks: a member that cannot stop at once
// (in uninterruptible sleep) does not hold the kill forever.
const freezeRounds = 100

// resume sends SIGCONT to what stopAll stopped, so a SIGTERM is handled:
// to each process itself, never to one that took over the pid of a
// member that died meanwhile.
func resume(stopped map[int]procRef) {
	for _, ref := range stopped {
		ref.signal(syscall.SIGCONT)
		ref.close()
	}
}

// signalNew sends the last signal to the members it has not reached yet.
func (cc *commandContainer) signalNew() {
	pids, _ := cc.members()
	for _, pid := range pids {
		if pid == cc.spare && cc.spares(cc.sent) {
			continue
		}
		if !cc.signalled[pid] {
			cc.signalled[pid] = true
			_ = syscall.Kill(pid, cc.sent)
		}
	}
}

func (cc *commandContainer) lateMembers() bool { return cc.spares(cc.sent) }

func (cc *commandContainer) resignal() {
	if cc.sent != 0 {
		cc.signalNew()
	}
}

// spares reports whether sig spares a member: only SIGTERM does; the
// SIGKILL ends everything.
func (cc *commandContainer) spares(sig syscall.Signal) bool {
	return cc.spare > 0 && sig == syscall.SIGTERM
}

func (cc *commandContainer) live() bool {
	if cc.cg != "" {
		if populated, err := cgroupPopulated(cc.cg); err == nil && !populated {
			if !cc.escapable {
				return false
			}
			out, err := cc.escapees()
			return err != nil || len(out) > 0
		}
	}
	pids, err := cc.members()
	return err != nil || len(pids) > 0
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
	if cc.ns != 0 { // nsFD is held: a zero container (the sweep's) has none
		_ = unix.Close(cc.nsFD)
		cc.nsFD, cc.ns = -1, 0
	}
	if cc.uns != 0 {
		_ = unix.Close(cc.unsFD)
		cc.unsFD, cc.uns = -1, 0
	}
	if cc.cg != "" {
		removeTree(cc.cg)
		if cc.owner != nil {
			cc.owner.released(cc.cg)
		}
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
		in := make(map[int]bool, len(pids))
		for _, pid := range pids {
			if st, ok := procfs.ReadStat(pid); ok && !st.Dead() {
				live = append(live, pid)
				in[pid] = true
			}
		}
		if cc.escapable {
			out, err := cc.escapees()
			if err != nil {
				return nil, err
			}
			for _, pid := range out {
				if !in[pid] {
					live = append(live, pid)
				}
			}
		}
		return live, nil
	}
	cc.knownMu.Lock()
	defer cc.knownMu.Unlock()
	return scanMembers(cc.leader, cc.since, cc.reaped.Load(), cc.marker, cc.chain, cc.runID, cc.known, namespaces{}, window{cc.leader, cc.mark})
}

// escapees lists the command's processes wherever their cgroup: those in
// its cgroup or user namespace, those carrying its run id, and their
// descendants (docs/spec.md §8); and the strays of its executor's cgroup.
// A process that moved out of the cgroup is among them.
func (cc *commandContainer) escapees() ([]int, error) {
	out, err := scanMembers(0, cc.since, cc.reaped.Load(), true, true, cc.runID, nil, namespaces{cc.ns, cc.uns}, window{cc.leader, cc.mark})
	if err != nil || cc.owner == nil {
		return out, err
	}
	for _, pid := range cc.owner.strays() {
		if st, ok := procfs.ReadStat(pid); ok && !st.Dead() && !slices.Contains(out, pid) {
			out = append(out, pid)
		}
	}
	return out, nil
}
