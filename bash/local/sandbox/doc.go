// Package sandbox confines the local executor's commands on Linux
// (docs/spec.md §11): read-only or workspace-write, with credentials
// hidden, dsh's own processes out of sight, host sockets and the network
// cut off, by one of two backends.
//
//   - bwrap: each command is started under bubblewrap, with a read-only
//     root, fresh /dev and /proc, empty /run, the writable roots bound
//     read-write, their protect entries read-only, hide entries covered by
//     empty ones, a user and pid namespace, no capabilities and a seccomp
//     filter. A starter of dsh's own (starter.go) is the sandbox's pid 1
//     and reports the shell's real wait status on a pipe. What a command
//     is shown and what is hidden from it is worked out at each start
//     (view.go) and made into mounts here, rules there.
//   - landlock: each shell is started from an OS thread that cleared its
//     capabilities, set no_new_privs and applied a Landlock ruleset and a
//     seccomp filter to itself alone (landlock.go), or through a helper
//     program that does the same to itself (helper.go).
//
// [New] probes once which backend works here (auto: bwrap, else
// landlock) and fails with an error wrapping [ErrUnavailable] when none
// can enforce the config. A [Scope] is what one session's commands share:
// its /tmp, its spill directory and, with bwrap and network: false, its
// network namespace (netns.go). The executor ([github.com/dsh-go/dsh/bash/local])
// makes a scope at a session's first sandboxed command and closes it when
// the session ends, and calls [Sandbox.Start] in place of its own spawn.
//
// A command under a terminal ([Command].TTY, docs/spec.md §2.7) gets it
// as the controlling terminal of a session of its own: landlock's shell
// from its spawn, bwrap's through util-linux's `setsid --ctty` inside the
// sandbox, so that bwrap's session never holds the terminal (a typed C-c
// would end the sandbox). The seccomp filter refuses TIOCSTI for every
// command.
//
// Decisions where docs/spec.md is silent:
//
//   - A missing protect entry is mounted as an empty read-only directory
//     only when it is a directory by name (.git, .claude, .codex, .dsh,
//     .vscode, .idea) or written with a trailing "/": a missing file entry
//     would need a file made in the workspace as its mount point. The mount
//     point of a missing directory stays in the workspace as an empty
//     directory.
//   - Hide entries are looked up at each command, so a credential file
//     made after dsh started is hidden too; one that is neither a file nor
//     a directory (a socket) is covered by an empty file.
//   - The workdir of a command outside every writable root is shown
//     read-only where it is, even under /tmp or /run, which the sandbox
//     otherwise replaces.
//   - The spill base (the parent of Options.Private) is hidden whole: an
//     empty tmpfs (bwrap) or unreadable (Landlock), the command's own
//     spill directory shown again in it, read-only. So are other
//     sessions' spill files, other dsh processes' and dsh run's
//     (dsh-run-<uid>) whatever spillDir is; with the default base /tmp,
//     Landlock's /tmp becomes unreadable, as bwrap's is empty. Where
//     hiding it whole would hide what commands need (it is a writable
//     root, the root directory, or holds the home directory) each
//     private spill directory in it is hidden instead, as found at the
//     command's start: one a dsh makes later is not. A writable root or
//     workdir inside the base is shown on top of it, but not one inside
//     a private spill directory: the model picks the workdir, and must
//     not pick its way in there. A workdir that is the base reads as
//     empty but for the command's spill directory.
//   - Nothing of dsh's own is in reach (issue 27). Options.Hide names
//     dsh's files (dsh serve's token file and Unix socket, the audit log):
//     hidden like hide entries, by name, whatever else finds them. dsh
//     has no log file (its logs go to stderr), so none is hidden.
//   - dsh's config file's directory (Options.Config) may hold secrets
//     besides the config (an env file a hook reads, the token file): it
//     is hidden (an empty tmpfs, or unreadable), the config file itself
//     shown read-only in it. Not when it is too broad to be dsh's own
//     (/, a directory right under it such as /etc, the home directory or
//     above), nor when it is or holds the workspace or a writable root: a
//     project's own directory stays visible. A config directory inside
//     the workspace (.dsh/) is hidden. A workdir inside the config
//     directory does not keep it visible: the model picks the workdir.
//   - Host Unix sockets (sockets.go): with bwrap, every socket bound in
//     dsh's network namespace (/proc/net/unix) outside allowSockets that a
//     command would see (not under the emptied /run, /var/run,
//     $XDG_RUNTIME_DIR, /tmp or spill base) is covered by an empty file at
//     each command's start: a read-only mount does not stop connect(2).
//     Not covered: a socket bound after the command started, one bound in
//     another network namespace (a container's; /proc/net/unix lists
//     only dsh's own namespace's) and, with network: true, a socket a
//     session's own background command bound in the workspace is covered
//     for its later commands too (list it in allowSockets). A socket the
//     command could not connect to anyway (another user's, in a
//     directory it cannot search) gets no cover: bwrap could not make its
//     mount point there either. A socket removed between the scan and
//     bwrap's mounts fails that command, as a hide entry removed then
//     does; the start-up probe covers none, so it cannot fail dsh's start.
//     Landlock needs none of this: seccomp refuses socket(AF_UNIX).
//   - /run, /var/run and $XDG_RUNTIME_DIR: empty with bwrap; unreadable
//     with Landlock, which cannot make a directory read as empty (ls
//     fails with EACCES, and lists nothing). Where /etc/resolv.conf leads
//     in there (systemd-resolved's stub-resolv.conf), its target is shown
//     again, read-only, so names resolve with network: true.
//   - Mount order (bwrap): the workdir is bound before the writable
//     roots, so a root inside it stays writable; the allowed sockets after
//     /tmp and the spill base, so one under /tmp is reachable.
//   - With bwrap, what a command leaves running in its pid namespace dies
//     when its shell exits, so local.keepDetached keeps nothing sandboxed.
//   - The kill sequence's SIGTERM spares bwrap ([Started.Spare]): killed,
//     it would end the whole sandbox at once, before the grace.
//   - Landlock needs ABI 3 (truncation is controlled from there on); it
//     refuses allowSockets (below ABI 9 it cannot tell Unix sockets
//     apart, so none can be made).
//   - A network map with Landlock (ABI 4, its first with network rules;
//     refused below): no namespace to capture connections in, so each
//     session's gateway listens on the host's loopback and commands get
//     the proxy variables; their ruleset allows TCP connect to that port
//     alone, and seccomp refuses every other IP socket (UDP, raw,
//     MPTCP), which Landlock does not cover. A program that ignores the
//     proxy variables fails closed. Landlock's rules name a port, not an
//     address: the gateway's port number on another host is not stopped.
//   - seccomp matches socket's arguments on their low 32 bits, as the
//     kernel reads them: bits set above must not slip a family past.
//   - local.sandbox.helper's protocol: `HELPER SHELL ARGV…` with
//     HelperEnv=1, the ruleset on fd 4 and the seccomp program on fd 6;
//     [HelperMain] is its other end, and dsh's main calls it, so the dsh
//     binary is a helper.
//   - Without root, a session's network namespace is held by a holder
//     process (bwrap with a user and a network namespace, which brings lo
//     up) and joined with nsenter; where that fails too, each command has
//     a namespace of its own and doctor says so.
//   - Probes whose answer cannot change while dsh runs (may this process
//     make network namespaces) are made once per process. The bwrap probe,
//     once passed, is remembered across processes under a key of what it
//     rests on (probecache.go), so a start of dsh does not pay ~5 ms for
//     the same answer again.
package sandbox
