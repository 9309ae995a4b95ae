//go:build linux

package sandbox

// The landlock backend, for machines without user namespaces (a
// container): the shell is started from an OS thread that restricted
// itself, without re-executing dsh (docs/spec.md §11).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/config"
)

// minLandlockABI is the least ABI that can enforce the modes: ABI 3 is the
// first to control truncation, without which any file the user may write
// could be emptied with truncate(2) from inside.
const minLandlockABI = 3

// landlockABI reads the kernel's Landlock ABI; a test fakes an older one,
// which this kernel cannot be made to offer.
var landlockABI = llsys.LandlockGetABIVersion

// landlockBackend is Landlock at the ABI this kernel offers.
type landlockBackend struct {
	abi     int
	handled uint64 // every filesystem right the ABI knows
	scoped  uint64 // signals and abstract sockets, ABI 6+
	filter  []bpf.RawInstruction
	// helper, when set, is the program that restricts itself and
	// executes the shell (HelperMain), instead of a thread of dsh;
	// filterBytes is the filter as it reads it.
	helper      string
	filterBytes []byte
}

// newLandlock checks that the kernel's Landlock can enforce what cfg
// asks: never a best effort that silently enforces less.
func newLandlock(s *Sandbox, helper string) (*landlockBackend, error) {
	abi, err := landlockABI()
	if err != nil {
		abi = 0
	}
	if abi < minLandlockABI {
		//lint:ignore ST1005 Landlock is a name, and the message follows "bubblewrap not found … and"
		return nil, fmt.Errorf("Landlock is not available: kernel ABI %d (needs %d, Linux 6.2)", abi, minLandlockABI)
	}
	if len(s.sockets) > 0 {
		return nil, errors.New("landlock cannot keep only the allowSockets reachable (it cannot tell Unix sockets apart below ABI 9): use bwrap, or leave allowSockets empty")
	}
	l := &landlockBackend{abi: abi, handled: fsRights(abi)}
	if abi >= 6 {
		l.scoped = llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket
	}
	// A map stays only where Landlock has network rules (checkNetMap);
	// the map a config implied becomes network: false below.
	mapped := s.netMap != nil && l.netMapWhy() == ""
	spec := filterSpec{denyIP: !s.network && !mapped, tcpOnly: mapped, denyUnix: true}
	if l.filter, err = spec.program(); err != nil {
		return nil, err
	}
	if helper != "" {
		if l.filterBytes, err = spec.bytes(); err != nil {
			return nil, err
		}
		l.helper = helper
		if err := l.probeHelper(s); err != nil {
			return nil, fmt.Errorf("landlock: helper %s: %w", helper, err)
		}
	}
	return l, nil
}

// fsRights are the filesystem rights Landlock ABI abi knows.
func fsRights(abi int) uint64 {
	r := uint64(llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile |
		llsys.AccessFSReadDir | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg |
		llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym)
	if abi >= 2 {
		r |= llsys.AccessFSRefer
	}
	if abi >= 3 {
		r |= llsys.AccessFSTruncate
	}
	if abi >= 5 {
		r |= llsys.AccessFSIoctlDev
	}
	return r
}

// The rights a rule grants: reading (and executing) a tree, and writing
// one. A rule on a file takes only the rights that apply to files.
const (
	readRights  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	fileRights  = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile | llsys.AccessFSTruncate | llsys.AccessFSIoctlDev
	writeRights = ^uint64(0)
)

func (l *landlockBackend) helperNote() string {
	if l.helper == "" {
		return ""
	}
	return ", through the helper " + l.helper
}

// limits says what landlock does differently, for dsh doctor.
func (l *landlockBackend) limits(s *Sandbox) []string {
	tmp := "/tmp: the host's, read-only"
	switch {
	case s.base == "/tmp":
		tmp = "/tmp: unreadable (the spill base)"
	case within(s.base, "/tmp"):
		tmp += ", but for the spill base " + s.base + ", unreadable"
	}
	out := []string{
		"hide: hidden paths are unreadable (EACCES), not empty; the directories above them cannot be listed",
		"protect: nothing new can be made directly in a writable root; its existing entries are writable unless protected",
		tmp + "; TMPDIR is a private directory",
		"Unix sockets: none can be made (seccomp); no pid namespace: commands see other processes",
	}
	if s.netMap != nil {
		out = append(out,
			"network map: only proxy clients reach anything: no TCP connection but to the session's gateway port, loopback servers included; no UDP, raw or MPTCP socket (seccomp), so no DNS",
			"network map: Landlock's rules name a port, not an address: a connection to the gateway's port number on another host is not stopped")
	}
	if l.abi < 6 {
		out = append(out, "Landlock ABI "+strconv.Itoa(l.abi)+" cannot stop commands signalling processes outside the sandbox (needs 6)")
	}
	return out
}

// start starts c confined: from a thread restricted for it, or through
// the helper.
func (l *landlockBackend) start(s *Sandbox, c Command) (*Started, error) {
	ws, err := s.workspaceOf(c)
	if err != nil {
		return nil, err
	}
	tmp, removeTmp, err := l.tmpDir(s, c)
	if err != nil {
		return nil, err
	}
	ruleset, err := l.ruleset(s, c, ws, tmp)
	if err != nil {
		removeTmp()
		return nil, err
	}
	var extra []*os.File
	if c.Script != nil {
		extra = []*os.File{c.Script}
	}
	env := s.commandEnv(c.Env, tmp)
	if c.Scope != nil {
		env = append(env, c.Scope.gw.proxyEnv()...)
	}
	cmd := c.cmd(c.Shell, c.Args, env, c.Dir, extra)
	if c.TTY {
		// The shell (or the helper, which executes it) leads its
		// session already: the slave, its fd 0, becomes the session's
		// controlling terminal before anything is confined further.
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
	}
	release := func() {}
	if l.helper != "" {
		err = l.startHelper(cmd, ruleset)
	} else {
		release, err = l.startOnThread(cmd, ruleset)
	}
	_ = unix.Close(ruleset)
	if err != nil {
		removeTmp()
		return nil, err
	}
	return &Started{Cmd: cmd, reaped: func() { release(); removeTmp() }}, nil
}

// startOnThread starts cmd from a thread restricted for it. The thread's
// goroutine keeps it locked until release is called, once the shell was
// reaped (the shell's parent-death signal is tied to the thread that
// started it), then ends without unlocking, so the runtime discards the
// restricted thread.
func (l *landlockBackend) startOnThread(cmd *exec.Cmd, ruleset int) (release func(), err error) {
	reaped := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := restrictThread(ruleset, l.filter)
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err == nil {
			<-reaped
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return func() { close(reaped) }, nil
}

// startHelper starts cmd through the helper: `HELPER SHELL ARGV…`, with
// the ruleset on fd 4 and the seccomp program on fd 6 (HelperMain).
func (l *landlockBackend) startHelper(cmd *exec.Cmd, ruleset int) error {
	secR, secW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer secR.Close()
	_, err = secW.Write(l.filterBytes)
	secW.Close()
	if err != nil {
		return err
	}
	// A copy of its own: an *os.File closes its fd when collected, and
	// the caller closes ruleset.
	dup, err := unix.FcntlInt(uintptr(ruleset), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	rs := os.NewFile(uintptr(dup), "landlock-ruleset")
	defer rs.Close()
	var script *os.File
	if len(cmd.ExtraFiles) > 0 {
		script = cmd.ExtraFiles[0]
	}
	cmd.ExtraFiles = extraFiles(script, rs, nil, secR)
	// HELPER SHELL ARGV…: HelperMain executes SHELL with ARGV (from $0).
	cmd.Args = append([]string{l.helper, cmd.Path}, cmd.Args...)
	cmd.Path = l.helper
	cmd.Env = append(cmd.Env, HelperEnv+"=1")
	return cmd.Start()
}

// probeHelper runs `exit 7` through the helper, unconfined otherwise.
func (l *landlockBackend) probeHelper(s *Sandbox) error {
	ruleset, err := llsys.LandlockCreateRuleset(&llsys.RulesetAttr{HandledAccessFS: l.handled}, 0)
	if err != nil {
		return err
	}
	defer unix.Close(ruleset)
	if err := l.grant(ruleset, "/", writeRights); err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: s.shell, Args: []string{"sh", "-c", "exit 7"}, Env: s.env}
	out := &strings.Builder{}
	cmd.Stderr = out
	if err := l.startHelper(cmd, ruleset); err != nil {
		return err
	}
	err = cmd.Wait()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 {
		// %v: err is nil when the probe exited 0 (not 7).
		return fmt.Errorf("the probe did not run through it (%v): %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// tmpDir is c's TMPDIR: its session's in workspace-write mode, else a
// directory of its own, removed once it was reaped.
func (l *landlockBackend) tmpDir(s *Sandbox, c Command) (string, func(), error) {
	if s.mode == config.SandboxWorkspaceWrite && c.Scope != nil {
		return c.Scope.TmpDir(), func() {}, nil
	}
	dir := filepath.Join(s.dir, "c-"+strconv.FormatUint(s.seq.Add(1), 10))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("sandbox: %w", err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// ruleset builds c's ruleset from its view (landlockGrants) and, with a
// network map, its session's gateway port: TCP connect is handled, bind
// is not (a dev server may listen).
func (l *landlockBackend) ruleset(s *Sandbox, c Command, ws, tmp string) (int, error) {
	attr := llsys.RulesetAttr{HandledAccessFS: l.handled, Scoped: l.scoped}
	if s.netMap != nil {
		attr.HandledAccessNet = llsys.AccessNetConnectTCP
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock: %w", err)
	}
	if err := l.addNetRules(fd, c); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	for p, rights := range s.landlockGrants(c, s.newView(c, ws, s.runDirs), tmp) {
		if err := l.grant(fd, p, rights); err != nil {
			_ = unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// landlockGrants are the rules of c's ruleset, by path. Read: everything
// but what is hidden (the hide entries, the config file's directory) and
// what is out of sight (the run directories, other spill files). Write:
// the writable roots but their protect entries, and what is hidden or out
// of sight in them. The workdir is readable, as bwrap shows it, even in a
// directory out of sight, but not in a hidden one. Then c's TMPDIR, its
// own spill directory, the config file, the resolver's config and the
// harmless devices. Never the terminals (/dev/pts).
func (s *Sandbox) landlockGrants(c Command, v view, tmp string) map[string]uint64 {
	var hidden []string
	for _, h := range v.hidden {
		hidden = append(hidden, h.path)
	}
	hidden = append(hidden, s.hide...) // also as written: a link is not followed by cover
	if v.configDir != "" {
		hidden = append(hidden, v.configDir)
	}
	// The terminals are out of sight: a read of another program's
	// /dev/pts/N takes the keys typed into it (bwrap's /dev has a devpts
	// of its own). A command's own terminal comes as an open fd.
	out := append(slices.Clone(s.runDirs), v.spill.others...)
	out = append(out, "/dev/pts", "/dev/ptmx")
	for _, d := range []string{v.spill.base, v.spill.own, resolved(s.dir)} {
		if d != "" {
			out = append(out, d)
		}
	}
	grants := map[string]uint64{}
	for _, p := range cover("/", append(slices.Clone(hidden), out...)) {
		grants[p] |= readRights
	}
	for _, r := range v.roots {
		for _, p := range cover(r, append(excluding(r, hidden, out), s.protectedIn(r)...)) {
			grants[p] |= writeRights
		}
	}
	if v.workdir != "" {
		for _, p := range cover(v.workdir, excluding(v.workdir, hidden, out)) {
			grants[p] |= readRights
		}
	}
	for _, p := range []string{tmp, c.SpillDir, v.config, resolvTarget(s.runDirs)} {
		if p != "" {
			grants[p] |= readRights
		}
	}
	grants[tmp] |= writeRights
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"} {
		grants[dev] |= fileRights
	}
	return grants
}

// excluding is what a shown directory d leaves out: every hidden path, and
// the paths out of sight that d does not lie in (a workspace under /run,
// or in the spill base, is shown).
func excluding(d string, hidden, out []string) []string {
	ex := slices.Clone(hidden)
	for _, o := range out {
		if !within(d, o) {
			ex = append(ex, o)
		}
	}
	return ex
}

// protectedIn lists root's protected entries.
func (s *Sandbox) protectedIn(root string) []string {
	out := make([]string, 0, len(s.protect))
	for _, p := range s.protect {
		out = append(out, filepath.Join(root, filepath.Clean(p)))
	}
	return out
}

// grant adds a rule giving rights on path (those that apply to a file when
// it is one) to the ruleset; a path that went away is skipped.
func (l *landlockBackend) grant(ruleset int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	attr := llsys.PathBeneathAttr{AllowedAccess: rights & l.handled, ParentFd: fd}
	if err := llsys.LandlockAddPathBeneathRule(ruleset, &attr, 0); err != nil {
		return fmt.Errorf("landlock: rule for %s: %w", path, err)
	}
	return nil
}

// restrictThread confines the calling OS thread, for good: no capability
// left (nor any to regain by executing as root), no_new_privs, the
// Landlock ruleset, the seccomp filter.
func restrictThread(ruleset int, filter []bpf.RawInstruction) error {
	if err := dropCaps(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if err := llsys.LandlockRestrictSelf(ruleset, 0); err != nil {
		return fmt.Errorf("landlock: restrict: %w", err)
	}
	return loadThread(filter)
}

// dropCaps clears the calling thread's capabilities: the bounding and
// ambient sets, and, locked in with securebits, root's right to regain
// them on execve; then the effective, permitted and inheritable sets. A
// thread without CAP_SETPCAP (not root) has none to drop there.
func dropCaps() error {
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("landlock: capget: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		const secure = 0x2f // NOROOT, NOROOT_LOCKED, NO_SETUID_FIXUP(_LOCKED), KEEP_CAPS_LOCKED
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0); err != nil {
			return fmt.Errorf("landlock: securebits: %w", err)
		}
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
				return fmt.Errorf("landlock: bounding set: %w", err)
			}
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("landlock: capset: %w", err)
	}
	return nil
}
