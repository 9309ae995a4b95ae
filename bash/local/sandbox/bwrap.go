//go:build linux

package sandbox

// The bwrap backend: each command is `bwrap … -- starter SHELL -c CMD`,
// with the mounts of docs/spec.md §11.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/config"
)

// bwrapBackend is bubblewrap found and probed on this machine.
type bwrapBackend struct {
	path string
	// version is `bwrap --version`'s, asked when first needed (dsh
	// doctor, an error): a spawn no command needs.
	version       func() string
	nsenter       string   // for netHolder; "" when not found
	setsid        string   // for a terminal (Command.TTY); "" when not found
	starter       *os.File // the sealed memfd the sandbox executes
	seccomp       []byte
	disableUserns bool // this bwrap has --disable-userns
}

// newBwrap finds bwrap, loads the starter and the seccomp filter, and
// probes that a command runs sandboxed here and reports its status.
func newBwrap(s *Sandbox) (*bwrapBackend, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("bubblewrap not found (apt install bubblewrap)")
	}
	b := &bwrapBackend{path: path, disableUserns: true, version: sync.OnceValue(func() string {
		out, _ := exec.Command(path, "--version").Output()
		return strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap ")
	})}
	b.nsenter, _ = exec.LookPath("nsenter")
	b.setsid = hostSetsid()
	if b.seccomp, err = (filterSpec{}).bytes(); err != nil {
		return nil, err
	}
	if b.starter, err = memfdStarter(); err != nil {
		return nil, err
	}
	key := probeKey(path, s.shell, b.probeArgs(s))
	if probePassed(key) {
		return b, nil // with every flag: see probecache.go
	}
	if err := b.probe(s); err != nil {
		// bwrap before 0.8 has no --disable-userns: try without it.
		b.disableUserns = false
		if b.probe(s) != nil {
			b.close()
			return nil, fmt.Errorf("bubblewrap %s cannot run a sandbox here: %w", b.version(), err)
		}
		return b, nil
	}
	rememberProbe(key)
	return b, nil
}

func (b *bwrapBackend) close() {
	if b.starter != nil {
		_ = b.starter.Close()
	}
}

// memfdStarter puts the starter in a sealed memfd: nothing, inside the
// sandbox or out, can change what later commands execute.
func memfdStarter() (*os.File, error) {
	elf := starterELF()
	if elf == nil {
		return nil, errors.New("no starter for this architecture (amd64 only)")
	}
	const mfdExec = 0x10 // MFD_EXEC: Linux 6.3+ wants it said where memfd_noexec is set
	fd, err := unix.MemfdCreate("dsh-starter", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|mfdExec)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate("dsh-starter", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("starter: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "dsh-starter")
	if _, err := f.Write(elf); err != nil {
		f.Close()
		return nil, fmt.Errorf("starter: %w", err)
	}
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("starter: seal: %w", err)
	}
	return f, nil
}

// probeCommand is the probe's command: `exit 7` in the configured shell.
func (s *Sandbox) probeCommand(stderr *os.File) Command {
	return Command{Shell: s.shell, Args: []string{"bash", "-c", "exit 7"}, Dir: "/", Env: s.env,
		Stderr: stderr, CgroupFD: -1, workspace: s.dir, probe: true}
}

// probeArgs are bwrap's arguments for the probe, this process's own
// directory named by a placeholder: what the probe tried, for its key
// (probecache.go). A config whose mounts changed is probed again.
func (b *bwrapBackend) probeArgs(s *Sandbox) string {
	c := s.probeCommand(nil)
	argv := strings.Join(b.args(s, c, c.workspace, !s.network), "\x00")
	if s.private != "" {
		argv = strings.ReplaceAll(argv, s.private, "\x00PRIVATE")
	}
	return strings.ReplaceAll(argv, s.dir, "\x00DIR")
}

// probe runs `exit 7` sandboxed as a command would run, and checks that
// the starter reported it.
func (b *bwrapBackend) probe(s *Sandbox) error {
	var stderr bytes.Buffer
	errR, errW, err := os.Pipe()
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _, _ = stderr.ReadFrom(errR); close(done) }()
	st, err := b.start(s, s.probeCommand(errW))
	errW.Close()
	if err != nil {
		errR.Close()
		<-done
		return err
	}
	_ = st.Cmd.Wait()
	<-done
	errR.Close()
	ws, ok := st.Status()
	st.Reaped()
	if !ok || !ws.Exited() || ws.ExitStatus() != 7 {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "the probe reported no status (" + st.Cmd.ProcessState.String() + ")"
		}
		return errors.New(msg)
	}
	return nil
}

// netMode decides how network: false is done with bwrap: a namespace per
// session entered with setns where dsh may make one (root), else held by
// a process and joined with nsenter, else one per command.
func (b *bwrapBackend) netMode(s *Sandbox) netMode {
	if s.network {
		return netHost
	}
	err := canMakeNetns()
	if err == nil {
		return netSetns
	}
	why := "cannot make a network namespace (" + err.Error() + ")"
	if b.nsenter == "" {
		s.notes = append(s.notes, "network namespace per command: "+why+" and nsenter (util-linux) is not installed")
		return netPerCommand
	}
	if err := b.probeHolder(s); err != nil {
		s.notes = append(s.notes, "network namespace per command: "+why+", and a holder process failed: "+err.Error())
		return netPerCommand
	}
	return netHolder
}

// canMakeNetns probes, once per process, whether dsh may make network
// namespaces: the answer does not change while it runs, and making one
// can take the kernel a good part of a second.
var canMakeNetns = sync.OnceValue(func() error {
	fd, err := newNetns()
	if err == nil {
		_ = unix.Close(fd)
	}
	return err
})

// probeHolder starts a holder and runs a command in its namespace.
func (b *bwrapBackend) probeHolder(s *Sandbox) error {
	n, err := b.newHolder(s, false)
	if err != nil {
		return err
	}
	defer n.close()
	cmd := exec.Command(b.nsenter, append(n.nsenterArgs(b.nsenter)[1:], b.path, "--ro-bind", "/", "/", "--", "/bin/sh", "-c", "exit 0")...)
	cmd.Env = s.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// start starts c under bwrap: the arguments, the files at the fds the
// starter knows, and, with a session's namespace, nsenter in front or
// setns around the start.
func (b *bwrapBackend) start(s *Sandbox, c Command) (*Started, error) {
	if c.TTY && b.setsid == "" {
		return nil, errNoSetsid
	}
	ws, err := s.workspaceOf(c)
	if err != nil {
		return nil, err
	}
	var net *sessionNet
	if c.Scope != nil {
		net = c.Scope.net
	}
	argv := append([]string{b.path}, b.args(s, c, ws, net == nil && !s.network)...)
	if net != nil && net.holder != nil {
		argv = append(net.nsenterArgs(b.nsenter), argv...)
	}
	secR, statusR, statusW, err := b.pipes()
	if err != nil {
		return nil, err
	}
	env := s.commandEnv(c.Env, "/tmp")
	if c.Scope != nil {
		env = append(env, c.Scope.gw.proxyEnv()...)
	}
	cmd := c.cmd(argv[0], argv, env, "/", extraFiles(c.Script, b.starter, statusW, secR))
	if net != nil && net.fd >= 0 {
		err = inNetns(net.fd, cmd.Start)
	} else {
		err = cmd.Start()
	}
	secR.Close()
	statusW.Close()
	if err != nil {
		statusR.Close()
		return nil, err
	}
	return &Started{Cmd: cmd, Spare: cmd.Process.Pid, status: statusR, unreported: forgetProbe}, nil
}

// errNoSetsid fails a command under a terminal where bwrap has no way to
// give it one.
var errNoSetsid = errors.New("sandbox: a terminal needs util-linux's setsid (apt install util-linux), which is not on PATH")

// hostSetsid is util-linux's setsid by absolute path, which the sandbox
// sees where the host does (/ is bound read-only); "" without one. A
// command under a terminal runs as `setsid --ctty SHELL …`, so that the
// shell leads a session of its own in the sandbox, with the slave (its
// fd 0) as controlling terminal: bwrap's session never gets the terminal,
// and a typed C-c cannot end the sandbox. setsid forks only when it leads
// its process group, which the starter's child never does (it is in
// bwrap's group): it executes the shell in place, so the starter still
// reports the shell's own wait status.
func hostSetsid() string {
	path, err := exec.LookPath("setsid")
	if err != nil || !filepath.IsAbs(path) {
		return ""
	}
	return path
}

// extraFiles places the files at the fds the starter and bwrap know: the
// script on 3 (where the shell reads a long command), then the starter,
// its status pipe and the seccomp program.
func extraFiles(script, starter, status, seccomp *os.File) []*os.File {
	files := make([]*os.File, seccompFD-2)
	files[0] = script
	files[starterFD-3], files[statusFD-3], files[seccompFD-3] = starter, status, seccomp
	return files
}

// pipes makes the seccomp pipe, filled (bwrap reads the program from it),
// and the status pipe.
func (b *bwrapBackend) pipes() (secR, statusR, statusW *os.File, err error) {
	secR, secW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	_, err = secW.Write(b.seccomp) // far below a pipe's buffer
	secW.Close()
	if err != nil {
		secR.Close()
		return nil, nil, nil, err
	}
	statusR, statusW, err = os.Pipe()
	if err != nil {
		secR.Close()
		return nil, nil, nil, err
	}
	return secR, statusR, statusW, nil
}

// args are bwrap's arguments for c, whose workspace is ws. Mounts are
// made in order, so the later ones cover the earlier: the read-only root,
// fresh /dev and /proc, empty /run (the resolver's config shown again),
// /tmp, then what the command is shown and what is hidden from it
// (viewMounts).
func (b *bwrapBackend) args(s *Sandbox, c Command, ws string, unshareNet bool) []string {
	a := []string{"--die-with-parent", "--unshare-user", "--unshare-pid", "--as-pid-1", "--unshare-ipc"}
	if b.disableUserns {
		a = append(a, "--disable-userns")
	}
	if unshareNet {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	a = s.runMounts(a)
	if c.Scope != nil {
		a = c.Scope.gw.resolvMount(a)
	}
	switch {
	case s.mode == config.SandboxWorkspaceWrite && c.Scope != nil:
		a = append(a, "--bind", c.Scope.TmpDir(), "/tmp")
	default:
		a = append(a, "--tmpfs", "/tmp")
	}
	a = s.viewMounts(a, c, s.newView(c, ws, s.replaced()))
	a = append(a, "--seccomp", strconv.Itoa(seccompFD))
	if c.Dir != "" {
		a = append(a, "--chdir", c.Dir)
	}
	a = append(a, "--", "/proc/self/fd/"+strconv.Itoa(starterFD))
	if c.TTY {
		a = append(a, b.setsid, "--ctty")
	}
	a = append(a, c.Shell)
	if len(c.Args) > 1 {
		a = append(a, c.Args[1:]...)
	}
	return a
}

// replaced are the directories bwrap replaces whole: the run directories
// and /tmp.
func (s *Sandbox) replaced() []string {
	return append(slices.Clone(s.runDirs), "/tmp")
}

// runMounts puts empty tmpfs over the run directories (/run, /var/run
// and $XDG_RUNTIME_DIR), and shows the resolver's config again when it
// leads in there.
func (s *Sandbox) runMounts(a []string) []string {
	for _, d := range s.runDirs {
		a = append(a, "--tmpfs", d)
	}
	if r := resolvTarget(s.runDirs); r != "" {
		a = append(a, "--ro-bind", r, r)
	}
	return a
}

// viewMounts makes v: the workdir (read-only) and the writable roots, an
// empty tmpfs over the spill base put between those that hold it and
// those inside it, the roots' protect entries, the allowed sockets, the
// other host sockets covered, then what is hidden (hideMounts).
func (s *Sandbox) viewMounts(a []string, c Command, v view) []string {
	inBase := func(d string) bool { return v.spill.base != "" && within(d, v.spill.base) }
	a = v.showMounts(a, func(d string) bool { return !inBase(d) })
	if v.spill.base != "" {
		a = append(a, "--tmpfs", v.spill.base)
	}
	a = v.showMounts(a, inBase)
	a = s.protectMounts(a, v.roots)
	for _, sock := range s.sockets {
		if _, err := os.Lstat(sock); err == nil {
			a = append(a, "--bind", sock, sock)
		}
	}
	out := s.replaced()
	if v.spill.base != "" {
		out = append(out, v.spill.base)
	}
	if !c.probe {
		for _, sock := range s.coveredSockets(v, out) {
			a = append(a, "--ro-bind", s.emptyFile(), sock)
		}
	}
	return s.hideMounts(a, c, v)
}

// showMounts binds, of the workdir and the writable roots, those keep
// takes: the workdir first, read-only (a root inside it stays writable).
func (v view) showMounts(a []string, keep func(string) bool) []string {
	if v.workdir != "" && keep(v.workdir) {
		a = append(a, "--ro-bind", v.workdir, v.workdir)
	}
	for _, r := range v.roots {
		if keep(r) {
			a = append(a, "--bind", r, r)
		}
	}
	return a
}

// hideMounts covers the hidden entries (an empty file or directory), the
// config file's directory (an empty tmpfs, the config file shown in it),
// the private spill directories one by one when the base is not hidden
// whole (the executor's own as an empty tmpfs), shows the command's spill
// directory again, and makes the tmpfs read-only.
func (s *Sandbox) hideMounts(a []string, c Command, v view) []string {
	for _, h := range v.hidden {
		src := s.emptyFile()
		if h.dir {
			src = s.emptyDir()
		}
		a = append(a, "--ro-bind", src, h.path)
	}
	var tmpfs []string
	if v.configDir != "" {
		a = append(a, "--tmpfs", v.configDir)
		if _, err := os.Stat(s.config); err == nil {
			a = append(a, "--ro-bind", s.config, v.config)
		}
		tmpfs = append(tmpfs, v.configDir)
	}
	for _, o := range v.spill.others {
		a = append(a, "--ro-bind", s.emptyDir(), o)
	}
	if v.spill.own != "" {
		a = append(a, "--tmpfs", v.spill.own)
		tmpfs = append(tmpfs, v.spill.own)
	}
	if c.SpillDir != "" {
		a = append(a, "--ro-bind", c.SpillDir, c.SpillDir)
	}
	if v.spill.base != "" {
		tmpfs = append(tmpfs, v.spill.base)
	}
	for _, d := range tmpfs {
		a = append(a, "--remount-ro", d)
	}
	return a
}

// knownDirs are default protect entries that are directories: missing, an
// empty read-only directory takes their place, so that nothing can be
// made there (.claude/settings.local.json).
var knownDirs = []string{".git", ".claude", ".codex", ".dsh", ".vscode", ".idea"}

// protectMounts binds each protect entry of each root read-only: the
// entry itself when it exists; an empty directory when a directory entry
// is missing. A missing file entry stays creatable: a mount point for it
// would have to be made in the workspace.
func (s *Sandbox) protectMounts(a []string, roots []string) []string {
	for _, r := range roots {
		// On a read-only filesystem nothing can be made, protected or
		// not, and bwrap could not make the mount point of a missing
		// entry: it would fail the command.
		readOnly := unix.Access(r, unix.W_OK) == unix.EROFS
		for _, p := range s.protect {
			name := strings.TrimSuffix(p, "/")
			path := filepath.Join(r, name)
			if _, err := os.Lstat(path); err == nil {
				a = append(a, "--ro-bind", path, path)
			} else if !readOnly && (strings.HasSuffix(p, "/") || isKnownDir(name)) {
				a = append(a, "--ro-bind", s.emptyDir(), path)
			}
		}
	}
	return a
}

func isKnownDir(name string) bool {
	for _, d := range knownDirs {
		if d == name {
			return true
		}
	}
	return false
}

// FloorCommand is the bwrap command line this sandbox runs for `bash -c
// true` in workspace, for a command of its own (a network namespace of
// its own when network is off), with bash in place of the starter: the
// floor a benchmark compares a sandboxed command with, mounts and
// namespaces alike. Nil with the landlock backend.
func (s *Sandbox) FloorCommand(workspace string) []string {
	if s.bwrap == nil {
		return nil
	}
	a := s.bwrap.args(s, Command{Shell: "/bin/bash", Args: []string{"bash", "-c", "true"}, Dir: workspace}, workspace, !s.network)
	for i, arg := range a {
		if arg == "--seccomp" {
			a = append(a[:i:i], a[i+2:]...) // no fd 6 to read it from
			break
		}
	}
	n := len(a)
	a = append(a[:n-4:n-4], "bash", "-c", "true")
	return append([]string{s.bwrap.path}, a...)
}
