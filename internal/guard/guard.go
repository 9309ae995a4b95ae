// Package guard keeps a program's own secrets from the commands it runs
// (docs/spec.md §2.4, issue 15).
//
// The local executor scrubs credentials from every command's environment,
// but a command runs as the same user as the program that started it, and
// the kernel lets a process of that user read /proc/PID/environ, mem and
// fd/* of its parent and take its descriptors with pidfd_getfd: the API
// keys the scrub removed, dsh serve's token, the session ids in memory, and
// dsh's own stdout, where a command could forge a tool result. [Main],
// called first in main, closes all of these to commands that are not root:
//
//   - It makes the process not dumpable (PR_SET_DUMPABLE 0). The kernel
//     then refuses ptrace access to it to every process without
//     CAP_SYS_PTRACE, which is what environ, mem, fd/*, pidfd_getfd and
//     ptrace itself require; its /proc directory belongs to root.
//   - When the environment holds credentials, it executes itself again
//     (/proc/self/exe, same arguments) with them removed, so that they are
//     not in the process image either (root can read that). The removed
//     variables reach the new process on a sealed memfd, which it reads
//     and closes before anything else, and stay in its memory only:
//     [LookupEnv] and [Environ] give them back to the code that needs them
//     (dsh serve's token, the scrub's passthrough).
//
// What is a credential is the caller's to say (the local executor's scrub,
// local.Secret), so the two never disagree.
//
// Root is not protected: CAP_SYS_PTRACE reads any process's memory, so a
// command dsh runs as root can read the token and the held credentials
// unless the sandbox keeps dsh out of its sight; dsh doctor and the
// start-up log say so.
//
// Decisions:
//
//   - The held variables are those the scrub removes by name or value;
//     what env.scrub adds to it stays in the process image, since the
//     config is read after Main. Not being dumpable keeps them from
//     non-root commands all the same.
//   - [Environ] is the process environment followed by the held
//     variables it does not set, so a passed-through credential comes
//     after the others.
//   - When the re-execution fails (no /proc), the process goes on as it
//     is, not dumpable, and [Current] says why.
//   - Not being dumpable also means no core dumps and no debugger attached
//     by the same user; that is the point.
package guard

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// fdEnv names, in the re-executed process, the memfd holding the
// variables the first one removed.
const fdEnv = "DSH_GUARD_FD"

// Status is what [Main] did.
type Status struct {
	// Ran: Main was called in this process.
	Ran bool
	// Undumpable: the process is not dumpable.
	Undumpable bool
	// Held is how many variables are held in memory only.
	Held int
	// Err is what failed, if anything.
	Err error
}

var (
	mu     sync.Mutex
	status Status
	held   []string // "K=V", in the order of the original environment
)

// Current is what Main did in this process.
func Current() Status {
	mu.Lock()
	defer mu.Unlock()
	return status
}

// Main hardens the process, as the package documentation says; secret
// reports whether a variable is a credential. It returns in the process
// that is to go on: the first one executes itself again and never
// returns, unless that fails.
func Main(secret func(name, value string) bool) {
	st := Status{Ran: true}
	err := setUndumpable()
	st.Undumpable = err == nil
	if s := os.Getenv(fdEnv); s != "" {
		_ = os.Unsetenv(fdEnv)
		vars, rerr := readHeld(s)
		set(st, vars, errors.Join(err, rerr))
		return
	}
	keep, remove := split(os.Environ(), secret)
	if len(remove) == 0 {
		set(st, nil, err)
		return
	}
	rerr := reexec(keep, remove)
	// Still here: the process goes on with its environment as it is.
	set(st, nil, errors.Join(err, fmt.Errorf("executing itself without its credentials: %w", rerr)))
}

func set(st Status, vars []string, err error) {
	mu.Lock()
	defer mu.Unlock()
	st.Held, st.Err = len(vars), err
	status, held = st, vars
}

// split divides an environment into the variables kept and those secret
// removes.
func split(environ []string, secret func(name, value string) bool) (keep, remove []string) {
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && name != fdEnv && secret(name, value) {
			remove = append(remove, kv)
		} else if name != fdEnv {
			keep = append(keep, kv)
		}
	}
	return keep, remove
}

// LookupEnv is os.LookupEnv, falling back to the variables held in
// memory.
func LookupEnv(name string) (string, bool) {
	if v, ok := os.LookupEnv(name); ok {
		return v, true
	}
	mu.Lock()
	defer mu.Unlock()
	for _, kv := range held {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v, true
		}
	}
	return "", false
}

// Getenv is LookupEnv's value, "" when unset.
func Getenv(name string) string {
	v, _ := LookupEnv(name)
	return v
}

// Environ is the environment the process started with: os.Environ(),
// then the held variables it does not set.
func Environ() []string {
	env := os.Environ()
	mu.Lock()
	defer mu.Unlock()
	if len(held) == 0 {
		return env
	}
	set := make(map[string]bool, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	for _, kv := range held {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			env = append(env, kv)
		}
	}
	return env
}
