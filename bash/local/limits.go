package local

// Limits: no command exhausts the processes (or the memory) that dsh
// itself needs (docs/spec.md §2.6). A fork storm in one command once
// crashed dsh ("pthread_create failed": every session and task lost)
// wherever dsh and its commands shared a process limit, RLIMIT_NPROC
// (ulimit -u) or a pids cgroup. So, where the cgroup v2 controllers can
// be enabled for the executor's cgroup, each command's cgroup gets
// pids.max (local.limits.pids) and memory.max (local.limits.memoryBytes),
// and the executor's cgroup, holding all the commands, a pids.max below a
// pids limit dsh shares; where they cannot, the shell is given an
// RLIMIT_NPROC below the one dsh shares, so that the commands' forks fail
// while dsh still has room for its threads.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/config"
)

// limits are an executor's resource limits for its commands.
type limits struct {
	pids, memory     uint64 // per command; memory 0: none asked for
	cgPids, cgMemory bool   // the controller is enabled for the command cgroups
	why              string // why a controller is not, for doctor
	// rlimit is dsh's own RLIMIT_NPROC (0: unlimited); cgroup the
	// smallest pids.max of dsh's cgroups, v2 or v1 (0: none), and
	// cgroupDir the cgroup it is of.
	rlimit, cgroup uint64
	cgroupDir      string
	// basePids is the executor's cgroup's pids.max (0: none set); nproc
	// the RLIMIT_NPROC commands get (0: none).
	basePids, nproc uint64
}

// newLimits works out the limits of cfg for an executor in containment
// mode whose cgroup is base ("" but in cgroup mode), enabling the
// controllers there if it can.
func newLimits(cfg config.Limits, mode, base string) *limits {
	l := &limits{pids: orDefault(cfg.Pids, config.DefaultPids), memory: orDefault(cfg.MemoryBytes, 0)}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		l.rlimit = rl.Cur
	}
	l.cgroup, l.cgroupDir = ownPidsMax()
	l.why = "containment is the " + mode
	if base != "" {
		l.cgPids, l.why = enableController(base, "pids")
		if l.memory > 0 {
			l.cgMemory, _ = enableController(base, "memory")
		}
	}
	if l.cgroup > 0 && l.cgPids {
		l.basePids = below(l.cgroup)
		if writeLimit(base, "pids.max", l.basePids) != nil {
			l.basePids = 0
		}
	}
	if l.rlimit > 0 {
		l.nproc = below(l.rlimit)
	}
	if l.cgroup > 0 && l.basePids == 0 {
		// RLIMIT_NPROC counts all of this user's processes, not the
		// cgroup's: below the cgroup's limit it can only end them earlier.
		l.nproc = min(nonZero(l.nproc), below(l.cgroup))
	}
	return l
}

// orDefault is v, or def for 0 (Validate refused a negative v).
func orDefault(v int64, def uint64) uint64 {
	if v <= 0 {
		return def
	}
	return uint64(v)
}

func nonZero(v uint64) uint64 {
	if v == 0 {
		return math.MaxUint64
	}
	return v
}

// below is what commands may use of a process limit dsh shares: the limit
// less a reserve for dsh's own threads (an eighth, at least 64, at most
// 1024), at least 1.
func below(limit uint64) uint64 {
	reserve := min(max(limit/8, 64), 1024)
	if limit <= reserve {
		return 1
	}
	return limit - reserve
}

// enableController enables ctrl for the children of base: in base's
// cgroup.subtree_control, after trying its parent's when base lacks it
// (possible where the parent is the root cgroup, or holds no process).
// It says why not when it cannot.
func enableController(base, ctrl string) (bool, string) {
	if !hasWord(filepath.Join(base, "cgroup.controllers"), ctrl) {
		_ = os.WriteFile(filepath.Join(filepath.Dir(base), "cgroup.subtree_control"), []byte("+"+ctrl), 0)
	}
	if !hasWord(filepath.Join(base, "cgroup.controllers"), ctrl) {
		return false, "no " + ctrl + " controller in " + filepath.Dir(base)
	}
	if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+"+ctrl), 0); err != nil {
		return false, fmt.Sprintf("cannot enable %s in %s: %v", ctrl, base, err)
	}
	return true, ""
}

// hasWord reports whether file holds word among its space-separated words.
func hasWord(file, word string) bool {
	data, err := os.ReadFile(file)
	return err == nil && strings.Contains(" "+strings.TrimSpace(string(data))+" ", " "+word+" ")
}

// writeLimit writes n to a cgroup's limit file.
func writeLimit(dir, file string, n uint64) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatUint(n, 10)), 0)
}

// apply sets a command's cgroup limits.
func (l *limits) apply(dir string) error {
	if l.cgPids {
		if err := writeLimit(dir, "pids.max", l.pids); err != nil {
			return fmt.Errorf("%s: cgroup: %w", Name, err)
		}
	}
	if l.cgMemory {
		if err := writeLimit(dir, "memory.max", l.memory); err != nil {
			return fmt.Errorf("%s: cgroup: %w", Name, err)
		}
	}
	return nil
}

// ownPidsMax is the smallest pids.max of this process's cgroups and
// their ancestors, in the v2 hierarchy and in a v1 pids hierarchy (0:
// none), and the cgroup that sets it.
func ownPidsMax() (uint64, string) {
	var dirs []string
	if dir, err := ownCgroup(); err == nil {
		dirs = append(dirs, dir)
	}
	if dir := ownV1Cgroup("pids"); dir != "" {
		dirs = append(dirs, dir)
	}
	var least uint64
	from := ""
	for _, dir := range dirs {
		for d := dir; ; d = filepath.Dir(d) {
			data, err := os.ReadFile(filepath.Join(d, "pids.max"))
			if err != nil {
				break // above the hierarchy's root, or no pids there
			}
			n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
			if err == nil && (least == 0 || n < least) {
				least, from = n, d
			}
		}
	}
	return least, from
}

// ownV1Cgroup is this process's cgroup in the v1 hierarchy of ctrl, ""
// when there is none.
func ownV1Cgroup(ctrl string) string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	rel := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && f[0] != "0" && hasCtrl(f[1], ctrl) {
			rel = f[2]
		}
	}
	if rel == "" {
		return ""
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(mi), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" || !hasCtrl(tail[2], ctrl) {
			continue
		}
		root, mnt := unescapeMount(fields[3]), unescapeMount(fields[4])
		if r, ok := strings.CutPrefix(rel, root); ok {
			return filepath.Join(mnt, r)
		}
	}
	return ""
}

// hasCtrl reports whether a comma-separated list names ctrl.
func hasCtrl(list, ctrl string) bool {
	return strings.Contains(","+list+",", ","+ctrl+",")
}

// shellPrefix is what goes before a bash command to give it nproc: bash's
// own ulimit, run before the command can fork (a prlimit after the spawn
// would race a fork storm's first forks). -u sets the hard limit too, so
// the command cannot raise it again; an error (a limit dsh could not
// raise) is silent, the lower limit stays.
func (l *limits) shellPrefix(shell string) string {
	if l.nproc == 0 || filepath.Base(shell) != "bash" {
		return ""
	}
	return "ulimit -u " + strconv.FormatUint(l.nproc, 10) + " 2>/dev/null; "
}

// describe says which limits are in force, for dsh doctor.
func (l *limits) describe() string {
	var parts []string
	if l.cgPids {
		parts = append(parts, fmt.Sprintf("pids.max %d per command", l.pids))
	} else {
		parts = append(parts, fmt.Sprintf("pids %d per command not in force (%s)", l.pids, l.why))
	}
	if l.memory > 0 && l.cgMemory {
		parts = append(parts, fmt.Sprintf("memory.max %d per command", l.memory))
	} else if l.memory > 0 {
		parts = append(parts, fmt.Sprintf("memory %d per command not in force (no memory controller)", l.memory))
	}
	if l.basePids > 0 {
		parts = append(parts, fmt.Sprintf("pids.max %d for all commands, below dsh's %d (%s)", l.basePids, l.cgroup, l.cgroupDir))
	}
	if l.nproc > 0 {
		s := fmt.Sprintf("RLIMIT_NPROC %d for commands, below dsh's", l.nproc)
		if l.rlimit > 0 {
			s += fmt.Sprintf(" RLIMIT_NPROC %d", l.rlimit)
		}
		if l.cgroup > 0 && l.basePids == 0 {
			s += fmt.Sprintf(" pids.max %d (%s)", l.cgroup, l.cgroupDir)
		}
		if os.Geteuid() == 0 {
			s += ", not in force: root ignores it"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
