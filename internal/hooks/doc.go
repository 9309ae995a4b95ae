// Package hooks runs Claude Code compatible hook commands around tool
// calls, in any MCP client (docs/spec.md §10): the scripts teams keep as
// guard rails (`.claude/hooks/*.sh` that read the call as JSON on stdin
// and block with exit 2) work unchanged with dsh.
//
//	h, err := hooks.New(cfg, localExecutor, hooks.Options{})
//	reg.UsePre(h.Pre(reg)) // before the command policy: hooks advise it
//	reg.UsePost(h.Post())
//
// (host.Standard does this when the config has hooks.) PreToolUse hooks run
// after validation and before the policy; PostToolUse hooks after the tool
// ran. The matching hooks of an event run in parallel, each through the
// executor seam of a local executor (bash -c in the call's working
// directory, the credential scrub, containment, the hook's timeout), with
// the payload JSON on stdin and CLAUDE_PROJECT_DIR and DSH_SESSION_ID in
// the environment; the call waits for all of them.
//
// A PreToolUse hook blocks (exit 2, or JSON deny, block, continue false),
// rewrites the input (updatedInput), allows or asks. Blocks win; the first
// block's reason is the model's `Error: blocked by hook: REASON`. The
// updatedInput of the hook listed last wins (dsh's config, then managed,
// user, project, local settings files, each in its own order) — where
// Claude Code takes whichever finished last — and is validated again.
// allow and ask reach the command policy as the call's advice
// (tool.Call.Advice, set on the call the hooks pass on): a hook's allow
// only settles a "no rule allows" ask of `default: ask`, and a hook's ask
// asks the user with REASON `hook: REASON`. A PostToolUse hook's block
// reason or additional context becomes a note `[hook] TEXT` after the
// result; the result stays as it is.
//
// A hook that fails (another exit code, a timeout, invalid JSON, more than
// 1 MiB of output, a spawn failure) does not block, and is logged at WARN
// every time with its command, why and the first line of its stderr;
// failClosed makes it block with `hook failed: COMMAND: WHY`.
//
// Decisions where docs/spec.md is silent:
//   - dsh's config refuses a handler dsh cannot run (another type, args,
//     async) and a bad matcher or `if`; in Claude Code's files they are
//     skipped with a warning.
//   - Claude Code's files are read once per session, at its first call,
//     as the permission rules are; PROJECT is CLAUDE_PROJECT_DIR, else the
//     session's cwd.
//   - `if` applies to the bash tool only (a rule names bash commands); a
//     command the rule may match (a dynamic word, an opaque part) runs the
//     hook, as Claude Code does.
//   - A hook's additionalContext of PreToolUse is a note on the result, as
//     PostToolUse's is.
//   - tool_use_id is dsh-SESSION-N, N the registry's number of the call;
//     PreToolUse and PostToolUse of one call share it.
//   - A PostToolUse hook runs for a call its caller aborted (interrupted:
//     true), without the caller's cancellation, for at most its timeout.
//   - Hook commands run on dsh's machine also with executor ssh, through a
//     local executor of their own.
package hooks
