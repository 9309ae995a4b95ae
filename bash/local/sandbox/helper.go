//go:build linux

package sandbox

// The landlock helper (local.sandbox.helper): for programs that prefer to
// restrict a process of their own rather than a thread of theirs, the
// shell is started through a helper program that restricts itself and
// executes it. The helper is any program whose main calls HelperMain
// first; dsh's own binary is one.

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// HelperEnv marks the environment of a helper process; HelperMain removes
// it before it executes the shell.
const HelperEnv = "DSH_SANDBOX_HELPER"

// The helper's fds: the Landlock ruleset on 4, the seccomp program on 6
// (as the bwrap starter's), the command's script, when there is one, on 3.
const rulesetFD = starterFD

// HelperMain makes the calling program a landlock helper: when dsh
// started it as one (HelperEnv in its environment), it confines itself
// (no capabilities, no_new_privs, the Landlock ruleset on fd 4, the seccomp
// program on fd 6) and executes its arguments, `SHELL ARGV…` (ARGV from
// $0: `/usr/bin/bash bash -c CMD`); it returns
// only when the program was not started as a helper. A program that is to
// serve as local.sandbox.helper calls it first thing in main. On failure it
// writes why to stderr and exits 126, as a shell does for a command it
// cannot execute.
func HelperMain() {
	if os.Getenv(netSetupEnv) != "" {
		netSetupMain() // never returns
	}
	if os.Getenv(HelperEnv) == "" {
		selfHelper.Store(true)
		return
	}
	runtime.LockOSThread() // the restrictions bind this thread, which executes the shell
	if err := helperExec(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "dsh sandbox helper: %v\n", err)
		os.Exit(126)
	}
}

func helperExec(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("no command to execute: want SHELL ARGV…")
	}
	prog, err := readProgram(os.NewFile(seccompFD, "seccomp"))
	if err != nil {
		return err
	}
	if err := restrictThread(rulesetFD, prog); err != nil {
		return err
	}
	_ = unix.Close(rulesetFD)
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, HelperEnv+"=") {
			env = append(env, kv)
		}
	}
	return syscall.Exec(args[0], args[1:], env)
}

// selfHelper records that this program calls HelperMain, so that the
// sandbox may start it as a helper (a holder's network set-up).
var selfHelper atomic.Bool

// readProgram reads a seccomp program as bwrap's --seccomp does: struct
// sock_filter entries in host order, to EOF.
func readProgram(f *os.File) ([]bpf.RawInstruction, error) {
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil || len(data) == 0 || len(data)%8 != 0 {
		// %v: err is nil for a program of a wrong size, which %w would
		// print as %!w(<nil>).
		return nil, fmt.Errorf("seccomp program on fd %d: %d bytes, %v", seccompFD, len(data), err)
	}
	prog := make([]bpf.RawInstruction, len(data)/8)
	ne := binary.NativeEndian
	for i := range prog {
		b := data[i*8:]
		prog[i] = bpf.RawInstruction{Op: ne.Uint16(b), Jt: b[2], Jf: b[3], K: ne.Uint32(b[4:])}
	}
	return prog, nil
}
