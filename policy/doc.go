// Package policy decides, before anything runs, whether a bash command is
// allowed, needs the user's approval (ask) or is denied, by allow, ask and
// deny rules matched on the parsed command (docs/spec.md §9).
//
// A model can write one command in many ways: quoting (`"r"m`, `$'\x72m'`),
// brace expansion, absolute paths, wrappers (`sudo`, `timeout`, `xargs`,
// `find -exec`), nested shells and `eval`, substitutions in any word.
// Matching rules against the command's text would be fooled by all of
// them, so the policy parses the command as bash (mvdan.cc/sh/v3/syntax)
// and decides every part the shell would run, one by one: each simple
// command, with its words as bash would pass them, wherever it is. What it
// cannot see before the command runs (a dynamic command name, a script read
// from stdin, `eval "$x"`) is opaque, and asks when rules exist. Rules are
// advice, not a boundary: a program can do anything with its arguments and
// files; the sandbox is the boundary.
//
//	deny, _ := policy.ParseRule(policy.KindDeny, "Bash(rm -rf *)", "dsh config")
//	p := policy.New(policy.Config{Default: policy.Ask, ReadOnly: true}, []policy.Rule{deny})
//	r := p.Check(`sudo bash -c "rm -rf /"`)
//	r.Decision   // deny
//	r.DenyText() // denied by policy: `rm -rf /` matches deny rule "rm -rf *"
//
// Of dsh's packages it imports only internal/lazyre, so that config can
// validate rules with ParseRule when it loads a file. A Policy is immutable and safe
// for concurrent use; With makes a new one with the rules a user remembered.
//
// # How a command is read
//
// [Policy.Check] parses the command and walks it: lists, pipelines,
// subshells, groups, loops, conditionals, function bodies, command and
// process substitutions in every word, heredoc bodies. Each simple command
// is unwrapped: a wrapper's options are skipped by their documented arity
// and what it runs is checked too (transparent wrappers only pass it
// through; sudo, xargs and the like need an allow rule of their own); a
// shell's -c script, eval's arguments, trap and alias strings are parsed
// and checked the same way, up to 8 levels deep. Static text that bash may
// run later (an array subscript, `$((x))`) is read for the code it holds,
// and a place where bash evaluates a value as code (arithmetic, `${!x}`,
// `${x@P}`, `[[ -v ]]`) is opaque unless every assignment the command makes
// to what it reads is a decimal literal or an arithmetic result
// (values.go, decided once the whole command is read). Brace expansion
// follows bash's own algorithm (braces.go); deny and ask rules also see
// git, docker, kubectl, npm, cargo and go without their global options
// (globals.go). Each part is decided by the rules (deny, then ask, then
// allow) and the built-in read-only list; then the whole command
// (docs/spec.md §9.4).
//
// What the package claims is tested against bash itself: every case of
// its tables and a fuzzer's compositions run under real bash in a
// bubblewrap jail with every execve recorded, and each program bash
// executes must be one the policy saw (parity_test.go).
//
// # Decisions
//
// Where docs/spec.md is silent, the package decides as follows.
//
// Rules:
//   - The zero Kind is no list: ParseRule refuses it. Surrounding blanks of
//     the text and of the pattern inside Bash(…) are ignored.
//   - Another tool is `Name(…)` with a capitalised name or an mcp__ name,
//     a bare mcp__ name, or a bare Claude Code tool name (Read, WebFetch, …):
//     a bare capitalised word such as `R` stays a command pattern.
//   - In a pattern `$'…'` is decoded like in a command; any other `$` is
//     text. A pattern whose brace expansion exceeds 256 words is invalid.
//   - A Rule not made by ParseRule is parsed by New from its Pattern; when
//     that fails, a deny or ask rule matches every command (failing
//     closed) and an allow rule matches none.
//   - An allow rule whose first word has a `/` compares the command name as
//     a cleaned path (`./x` and `x/../x` are the same), and only with names
//     that have a `/`: a bare `x` is looked up in PATH.
//   - A ~ is the user's home only when Config.Home is set; otherwise it
//     stays a literal ~, in rules and commands alike.
//
// Matching:
//   - In one part, a deny rule that matches beats one that may match, which
//     beats an ask rule that matches, which beats one that may match; among
//     equals, the outermost wrapper level and then the first rule win.
//   - A deny or ask rule with a `*` inside a word is matched on the joined
//     arguments as an automaton; with dynamic words the question "may it
//     match" is an intersection of two automata (bounded: beyond 4M pairs of
//     states the answer is yes).
//   - Rules match the words of declarations and `let`. A bare assignment,
//     [[ ]], (( )) and a statement of redirections alone have no words a
//     rule could name: only a rule for every command (`Bash`, `*`) decides
//     them, and it also decides a command that does not parse.
//
// Parts in which no program runs (a bare assignment, a declaration, let,
// [[ ]], (( )), redirections alone) are allowed, marked Internal, unless
// they assign a loader-list name or a redirection writes a file (`x=1 >
// f` creates f); then no rule allows them.
//
// Wrappers, shells and builtins:
//   - Builtins (eval, command, builtin, exec, trap, alias, source, …) are
//     recognised only by their bare name; programs (sudo, timeout, bash, …)
//     by basename, so `/usr/bin/sudo rm` is seen through. A wrapper or
//     shell written with a `/` is never transparent: the file may be
//     anything, so it needs an allow rule of its own.
//   - A dynamic word where a wrapper's option or operand is, which may be
//     an option taking the next word or the command itself, makes the part
//     opaque ("dynamic command name"); so does an option the wrapper does
//     not document ("option not understood"). GNU long options may be
//     abbreviated (`timeout --sig KILL`), as getopt_long allows. A shell's
//     option bash does not know is not understood either: shells differ
//     there, and a script taken for an option must not go unread.
//   - find: a word of its expression that may stand for several words (an
//     unquoted `$X`) may hide an -exec: the part is opaque. A word holding
//     `{}` is dynamic, not only `{}` itself, as GNU find replaces both.
//   - busybox and toybox applets are seen through, like a wrapper that
//     needs an allow rule of its own.
//   - xargs' input, the trailing word the policy adds, is not shown in Words.
//   - env -S is opaque when its string holds `$` or any backslash: env's own
//     escapes (`\_` is a space) split differently from bash.
//   - su -s with a shell other than the bash-like ones, and a shell run by
//     `exec -l` or `exec -a -NAME` (a login shell), are opaque.
//   - A redirection that writes a file, on a command that runs a script (a
//     shell, eval, flock -c, trap, …), applies to every command of the
//     script: `bash -c ls > f` writes f like `{ ls; } > f`.
//   - A script run by sh, dash, zsh or any bash-like shell but bash and
//     rbash (and by busybox's shells, flock -c, su -c, script -c, sudo -s,
//     watch, whose shell may be any) expands aliases, as dash and bash run
//     as sh do: an alias defined there is opaque, since the commands after
//     it may be that alias with words of their own. eval, trap and mapfile
//     -C scripts run in the shell they are in.
//   - mapfile -C CALLBACK (readarray too): CALLBACK is checked as a script
//     followed by two dynamic words of one word each, since bash runs
//     `CALLBACK INDEX 'LINE'`; mapfile itself still needs a rule. fc is
//     opaque with any options, -l included (it runs commands from the
//     history, and its -e editor); history is opaque with -s, -r, -n or a
//     dynamic word (they put commands there for fc).
//   - time -o FILE (GNU time's report) and flock FILE with a command (flock
//     creates FILE, a numeric one too) write FILE unless it is /dev/null:
//     the part writes, as with a redirection, so it is not read-only; an
//     allow rule for the wrapped command still allows it.
//   - A shell given no script operand whose own last input redirection is a
//     here-document or here-string without expansions (`bash <<'EOF'`)
//     runs that text: it is checked like `bash -c`.
//   - fish, csh, pwsh and the other non-bash shells are opaque with any
//     option but --version or --help, and with no script file.
//
// Quoted code is read as bash reads it where it runs: as a here-document
// body, so `$(…)` and backquotes are found even inside single quotes of the
// text, and as a script when it holds `<(` or `>(`. A here-document's own
// body is not quoted code: it is read where bash runs it (its expansions,
// a shell's script on stdin) and is data otherwise. Text that ends inside
// such a construct is ignored (bash cannot run it either); text that fails
// to parse otherwise is opaque. Parts found there are listed only when they
// ask or are opaque, a deny rule's match included, as "may match".
//
// The loader list also covers names starting BASH_FUNC_ (functions given to
// a child bash through env), and an assignment is also one made by read,
// mapfile, printf -v, getopts, wait -p (an unquoted $x there may hold -p
// NAME; a quoted word is taken for a job), coproc NAME (the array of its
// descriptors), a for loop, arithmetic (`(( PATH=1 ))`), the
// target of declare -n, or to a name the policy cannot know (`declare
// "$x"`). Substitutions run in a subshell: their assignments do not count.
// The name read, mapfile, printf -v and getopts assign is taken without
// its subscript (`printf -v 'PATH[0]'` assigns PATH).
//
// BASH_CMDS and BASH_ALIASES are on the loader list: they are bash's
// command hash table and alias table, and an element assigned is `hash -p`
// or `alias` by another name (`BASH_CMDS[ls]=/bin/rm; ls -rf x` runs rm).
// So is POSIXLY_CORRECT, which puts bash in POSIX mode, where aliases
// expand; for the same reason `set -o posix`, `shopt -so posix` and a shell
// started with -O expand_aliases, -o posix or --posix are opaque like
// `shopt -s expand_aliases`, and so is set with a dynamic word where an
// option may be. So is set -k (-o keyword, also as a shell's option, and
// shopt -so keyword): afterwards `ls PATH=/tmp/x` looks ls up in /tmp/x
// and `ls LD_PRELOAD=x.so` loads x.so, while the words look like
// arguments of a read-only command.
//
// The read-only list accepts `git -C DIR`, `--no-pager` and
// `--no-optional-locks` before the subcommand; options refused there are
// also refused abbreviated (`sort --out=f`) and inside a cluster of short
// options (`sort -no f`, `date -us`, `rg -uz`, `file -bC`). `command -v`
// is not on the list.
//
// Results:
//   - CMD is one line: a line break becomes a space. A part that no rule
//     may allow because of its assignments shows them in its Words.
//   - DenyText is "" unless the decision is deny, Reason "" unless it is ask.
//   - Remember has one suggestion per wrapper level that lacks an allow
//     rule (`sudo npm test` suggests `sudo npm *` and `npm test *`), without
//     repeats, and is nil when an asking part could not be allowed by any
//     rule (an assignment outside the safe list, a write in a part where no
//     program runs, a name that cannot be quoted).
//   - Check contains a panic of its own: the command is one opaque part,
//     "analysis failed".
//   - In a script sh, dash, zsh or $SHELL may run, what dash reads
//     otherwise is read both ways: a word braces would change, or with
//     $'…' or $"…", is dynamic; (( )) is opaque (dash's nested subshell);
//     time is the program.
//   - A word whose brace expansion exceeds 256 words, a word longer than
//     4 KiB that has braces, and the words of a command past the 4096th,
//     are dynamic.
//
// Values, globals, runners and bounds (issue 25):
//   - The variables bash sets from what commands do ($_, REPLY, OPTARG,
//     BASH_REMATCH, PWD, the positional parameters, $0, $-, …) may hold
//     anything; $#, $?, $$ and $! are integers; a variable the command does
//     not assign is read as the environment gives it. An assignment anywhere
//     in the command counts, in a subshell or a nested shell too, before or
//     after the place: the cautious reading of loops and functions.
//   - A nameref's values are names it may point to and values of those
//     names alike; one nobody can know makes it opaque.
//   - `${x:=v}` in a command's words takes the command's allow rules away,
//     as read's assignment does.
//   - A global option a tool does not list makes two readings (it takes the
//     next word, or not); a rule matching one of them may match.
//   - Runners whose options the package does not list are opaque with any
//     option; bwrap with any option at all.
//   - Bounds (bounds.go): over 1 MiB, brackets nested deeper than 256, more
//     than 20000 words and operators: one opaque part, nothing parsed.
package policy
