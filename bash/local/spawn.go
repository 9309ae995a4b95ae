package local

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/dsh-go/dsh/bash/local/sandbox"
)

// launcher is the spawn step. The sandbox has its own (sandbox.go), a
// remote executor would replace it; everything around it (pipes,
// collection, the kill sequence) stays as it is.
type launcher interface {
	launch(l launchSpec) (*launched, error)
}

// launched is a spawned shell, as the run needs it.
type launched struct {
	cmd *exec.Cmd
	// spare is a pid the kill sequence's SIGTERM spares (a sandbox's
	// bwrap), 0 for none.
	spare int
	// status, when set, gives the shell's real wait status once cmd was
	// reaped (false: use cmd's own).
	status func() (syscall.WaitStatus, bool)
	// reaped, when set, is called once cmd was reaped.
	reaped func()
}

// launchSpec is everything the spawn step needs. The files are the child's
// ends; the caller closes its copies after launch.
type launchSpec struct {
	shell   string // absolute path of the shell
	command string
	dir     string
	env     []string
	stdin   *os.File // nil means /dev/null
	stdout  *os.File
	stderr  *os.File
	script  *os.File // when set, the command comes on fd 3 instead of argv
	// tty: stdin is a terminal's slave, to be the shell's controlling
	// terminal (terminal.go).
	tty bool
	// cgroupFD, when not negative, is the cgroup the shell starts in
	// (clone3 CLONE_INTO_CGROUP: it is inside before it runs anything);
	// with cgroupNS, in a cgroup namespace whose root is that cgroup.
	cgroupFD int
	cgroupNS bool
	userNS   bool // and a user namespace, for the right to make it
	// prefix goes before the command in the shell's script: the limits
	// the shell sets itself (limits.shellPrefix).
	prefix string
	// sandboxed: the command runs in the executor's sandbox, in scope
	// (nil: on its own), showing its spill files in spillDir.
	sandboxed bool
	scope     *sandbox.Scope
	spillDir  string
}

// maxArgCommand is the longest command passed as an argument. Linux refuses
// a single argument of 128 KiB or more (MAX_ARG_STRLEN) with E2BIG; longer
// commands, typically a heredoc writing a file, are handed to bash through a
// pipe instead. The margin keeps clear of that limit whatever the page size.
const maxArgCommand = 64 << 10

// pipeScript reads the command from fd 3 and evaluates it. Words are
// expanded before redirections, so the command substitution reads fd 3 and
// `3<&-` then closes it for everything the command starts. `$(< file)` is
// bash's own read, so it needs no cat on the command's PATH. eval runs the
// text as -c would: $0 stays the shell's name, exit ends the shell, and
// commands before a syntax error still run.
const pipeScript = `eval "$(< /dev/fd/3)" 3<&-`

// shellArgs is the shell's argv: `bash -c command`, or the script that
// reads a long command from fd 3.
func shellArgs(l launchSpec) []string {
	script := l.command
	if l.script != nil {
		script = pipeScript
	}
	return []string{filepath.Base(l.shell), "-c", l.prefix + script}
}

// lookShell finds the shell in PATH.
func lookShell(shell string) (string, error) {
	path, err := exec.LookPath(shell)
	if err != nil {
		return "", fmt.Errorf("%s: shell %q not found: %w", Name, shell, err)
	}
	return path, nil
}

// shellLauncher starts `bash -c command` as the leader of a new session and
// process group, with no controlling terminal (but the one of a command
// under a terminal), in its cgroup when it has one, and (on Linux) asks
// the kernel to SIGKILL it if this process dies: see procAttr.
type shellLauncher struct{}

func (shellLauncher) launch(l launchSpec) (*launched, error) {
	var extra []*os.File
	if l.script != nil {
		extra = []*os.File{l.script}
	}
	cmd := &exec.Cmd{
		Path:        l.shell,
		Args:        shellArgs(l),
		Dir:         l.dir,
		Env:         l.env,
		Stdout:      l.stdout,
		Stderr:      l.stderr,
		ExtraFiles:  extra,
		SysProcAttr: procAttr(l.cgroupFD),
	}
	if l.stdin != nil {
		cmd.Stdin = l.stdin
	}
	if l.tty {
		// The slave, the child's fd 0 by then, becomes the controlling
		// terminal of the shell's new session (TIOCSCTTY after setsid).
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
	}
	switch {
	case l.cgroupNS && l.userNS:
		cmd.Path, cmd.Args, _ = userNSCommand(cmd.Path, cmd.Args) // unshared inside its cgroup already
	case l.cgroupNS:
		newCgroupNS(cmd.SysProcAttr) // unshared by the child, inside its cgroup already
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &launched{cmd: cmd}, nil
}
