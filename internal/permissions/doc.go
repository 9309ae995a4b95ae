// Package permissions applies the command policy (package policy,
// docs/spec.md §9) to bash calls as a pre-execute middleware of the tool
// registry ([Gate.Middleware]): it reads each session's rules (dsh's
// config, Claude Code's settings files), decides every bash call,
// foreground or background, and asks the user through the call's
// [tool.Asker] when the policy says ask. It also decides the calls that
// ask to run outside the sandbox (docs/spec.md §11), since that is where
// asking happens.
//
// host.Standard always installs a gate: one made by [New] when the config
// has a permissions section, and one made by [NewWithoutSection] when it
// has none. That gate takes the section's defaults: it reads the Bash
// rules of the Claude Code settings files (claudeSettings: true,
// trustProjectAllow: false) under a default of allow (docs/spec.md §9.1).
//
// Decisions where the spec is silent:
//   - Without a section, a session whose files hold no Bash rule (and no
//     malformed managed file) has no policy for its whole life: no
//     command is parsed, and a call that neither leaves a sandbox nor
//     carries a hook's ask goes on unchecked, its arguments not even
//     decoded when no sandbox is on, and with no ruling of the gate's (as
//     without a gate). Under a default of allow no command could be
//     decided otherwise, and nothing is remembered without a policy.
//     [Gate.Check] still parses, with no rules, to show the parts.
//   - Without a section the settings files' sources are listed alone:
//     there is no "dsh config" source.
//   - Leaving the sandbox: a call whose dangerouslyDisableSandbox is the
//     boolean true while a sandbox is on. With allowUnsandboxed: false it
//     is denied before the policy is consulted (and before a malformed
//     managed settings file is reported). Otherwise the policy decides
//     first: a deny denies, unasked; an allow or an ask becomes one
//     question whose REASON is `runs outside the sandbox` alone, even
//     when the policy had a reason of its own, since one answer approves
//     the command and where it runs. No remember is offered, so a
//     remember in the answer is ignored; askFallback does not apply.
//   - The user's yes to leaving the sandbox reaches the bash tool as a
//     consent on the waterfall's decision ([bashtool.ConsentUnsandboxed],
//     [tool.Decision.Consents]), added only when the rest of the
//     waterfall allows the call. The tool runs nothing outside the
//     sandbox without it, so a stack without this gate, or a middleware
//     before it that allows the call unasked, cannot take a command out of
//     the sandbox.
//   - Without a permissions section, askTimeoutMs and askFallback are
//     their defaults (5 minutes, deny), for the settings files' ask rules
//     as for the questions about leaving the sandbox.
//   - Error codes: a denial DENIED; declined DECLINED; dismissed
//     DISMISSED; nobody to ask APPROVAL_UNAVAILABLE; aborted during an ask
//     TOOL_FAILED, as any aborted call.
//   - An asker that fails (a broken connection) dismisses the question; a
//     cancelled call is `command aborted` whatever the asker returns.
//   - task_input (docs/spec.md §4.2a, typed.go) is decided here too,
//     while the session has a policy or a hook asks. What reads the input
//     is the terminal's foreground process group, every member of which
//     must be a system shell run interactively for it to count as a shell.
//     Lines typed into a shell are checked by the policy (a deny refuses
//     them); outside the sandbox the input is then always asked about,
//     since an interactive shell's own state (bindings, stty, history)
//     defeats any finer rule; in the sandbox the finer rules apply and the
//     sandbox bounds what gets past. Input to another program is asked
//     about unless the task is sandboxed. The line under way is followed
//     from what the terminal took (its last 64 KiB), never from what a call
//     asked to type. No remember is offered for input.
//   - Files are read at a session's first bash call; a session without an
//     id (a Go caller with no session) shares one state. The rules a
//     session remembered end with the session.
package permissions
