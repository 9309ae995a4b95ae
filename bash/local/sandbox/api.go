package sandbox

// What the executor sees of the sandbox on every platform: its options,
// the command it starts and what it returns, and the error of a sandbox
// that cannot be enforced. The backends are Linux's (sandbox.go and the
// files it uses); elsewhere New refuses (unsupported.go).

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"

	"golang.org/x/sys/unix"
)

// Options is what a sandbox needs from its executor.
type Options struct {
	// Cwd is the workspace of commands whose owner has no cwd.
	Cwd string
	// Dir is a private directory (mode 0700) of the executor, which
	// removes it when it closes: the sandbox keeps its files and the
	// sessions' directories there. It must not be inside a writable root.
	Dir string
	// Private is the executor's private directory, which holds Dir and
	// the spill files of every session: commands see only their own.
	Private string
	// Hide adds dsh's own files, hidden like the config's hide entries
	// and named as dsh's by Describe: dsh serve's token file and Unix
	// socket, the audit log.
	Hide []string
	// Config is dsh's config file. Its directory is hidden, and the file
	// shown read-only in it, unless the directory is too broad to be
	// dsh's own (/, a directory right under it such as /etc, the home
	// directory or above) or is or holds the workspace or a writable
	// root (see the package doc).
	Config string
	// EnvSet names the variables the config sets (env.set): the sandbox
	// does not point those at its /tmp.
	EnvSet []string
	// Shell is the shell's absolute path, for the probe and the network
	// holder; Env the environment they run with.
	Shell string
	Env   []string
	Log   *slog.Logger
	// With a network map: AskTimeout dismisses an unanswered question
	// about a host, AskFallback ("allow" or "deny") decides when nobody
	// can be asked (permissions.askTimeoutMs and askFallback), and
	// NetAudit, when set, sees each connection as it ends, with the id of
	// the scope's owner.
	AskTimeout  time.Duration
	AskFallback string
	NetAudit    func(owner string, r gateway.Record)
}

// ErrUnavailable wraps the error of New when no backend can enforce the
// configured sandbox: dsh then refuses to start (exit 2).
var ErrUnavailable = errors.New("sandbox")

// ErrNoBackend is wrapped too when what is missing is a backend that can
// enforce the sandbox here (not a config value such as a writable root that
// does not exist): mode auto then runs commands unsandboxed, and says so.
var ErrNoBackend = errors.New("no sandbox backend")

// noBackend marks err as ErrNoBackend and ErrUnavailable without changing
// its text, which names what is missing.
type noBackend struct{ err error }

func (e noBackend) Error() string { return e.err.Error() }
func (e noBackend) Unwrap() []error {
	return []error{e.err, ErrNoBackend, ErrUnavailable}
}

// Command is one command to start in the sandbox: the shell and its
// arguments, where, with what, and its files (the child's ends).
type Command struct {
	Scope    *Scope // nil: on its own
	Shell    string // absolute path
	Args     []string
	Dir      string
	Env      []string
	Stdin    *os.File // nil: /dev/null
	Stdout   *os.File
	Stderr   *os.File
	Script   *os.File // fd 3 when set
	CgroupFD int      // the cgroup to start in, when not negative
	// SpillDir is the directory of the command's spill files, shown
	// read-only at its path; a scope's own when it has one.
	SpillDir string
	// TTY: Stdin, Stdout and Stderr are a terminal's slave, which
	// becomes the controlling terminal of the shell's own session (a
	// typed C-c is SIGINT to its foreground process group). With bwrap
	// the shell is started through util-linux's setsid --ctty inside the
	// sandbox: bwrap's session must not get it, or a C-c would end the
	// sandbox.
	TTY bool

	workspace string // the probe's, instead of the scope's
	// probe marks the start-up probe, which covers no host socket: one
	// removed between the scan and bwrap's mounts fails the command
	// that would cover it, and a failed probe fails dsh's start.
	probe bool
}

// Started is a command the sandbox started.
type Started struct {
	Cmd *exec.Cmd
	// Spare is a pid that the kill sequence's SIGTERM must spare: bwrap,
	// which, killed, takes the whole sandbox with it at once, before the
	// command's grace; 0 for none.
	Spare  int
	status *os.File // the starter's report, bwrap only
	reaped func()
	// unreported runs when the starter reported nothing: bwrap may no
	// longer work here, so its remembered probe is forgotten.
	unreported func()
}

// Status is the shell's wait status, as the starter reported it; false
// when it reported none (the sandbox was killed, or did not start the
// shell): the caller then has bwrap's own. Call it after Cmd.Wait.
func (st *Started) Status() (syscall.WaitStatus, bool) {
	if st.status == nil {
		return 0, false
	}
	ws, ok := readStatus(st.status)
	if !ok && st.unreported != nil {
		st.unreported()
	}
	return ws, ok
}

// Reaped releases what the start held until the shell was reaped: the
// status pipe, the landlock thread, a per-command directory.
func (st *Started) Reaped() {
	if st.status != nil {
		_ = st.status.Close()
	}
	if st.reaped != nil {
		st.reaped()
	}
}

// readStatus reads the starter's report: 4 bytes, written before the
// sandbox exited, so it is read without waiting (a process of the
// sandbox still dying may hold the pipe open).
func readStatus(f *os.File) (syscall.WaitStatus, bool) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var b [4]byte
	n := 0
	_ = raw.Read(func(fd uintptr) bool {
		n, _ = unix.Read(int(fd), b[:])
		return true // never wait
	})
	if n != 4 {
		return 0, false
	}
	return syscall.WaitStatus(binary.NativeEndian.Uint32(b[:])), true
}
