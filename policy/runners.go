package policy

import (
	"slices"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/internal/lazyre"
)

// Programs whose documented job is to run another, beyond the wrappers
// of wrappers.go (docs/spec.md §9.3 "Wrappers"). Each reads its options by
// its manual's arity; an option it does not document, or a dynamic word
// where one may be, makes the part opaque, so that a program the policy
// misreads is asked about, never allowed.

// archNames run a program under another personality (setarch's links:
// the architecture is in the name, not an operand).
var archNames = []string{"linux32", "linux64", "i386", "x86_64", "uname26"}

// registerRunners adds the runners to the handlers (from wrappers.go's
// loadHandlers, which makes the maps).
func registerRunners() {
	builtins["jobs"] = jobsStep
	builtins["compgen"] = compgenStep
	programs["setarch"] = setarchStep(true)
	for _, n := range archNames {
		programs[n] = setarchStep(false)
	}
	for name, r := range runnerSpecs() {
		programs[name] = wrapper(&r.spec, r.transparent)
	}
	programs["runuser"] = runuserStep
	programs["sg"] = sgStep
	programs["newgrp"] = func(*checker, *unit, []arg) step { return step{opaque: reasonNoScript} }
	programs["systemd-run"] = systemdRunStep
	programs["parallel"] = parallelStep(false)
	programs["sem"] = parallelStep(true)
	programs["capsh"] = capshStep
	programs["fakeroot"] = shellWrapper(&fakerootOpts)
	programs["pkexec"] = shellWrapper(&pkexecOpts)
	programs["envdir"] = envdirStep
	programs["git"] = gitStep
	programs["strace"] = straceStep
	programs["ltrace"] = writerStep(&ltraceOpts, "o", "output")
	programs["choom"] = noCommandWith(&choomOpts, "p", "pid")
	programs["ld.so"] = ldsoStep
	programs["valgrind"] = longOptionsStep
	programs["perf"] = perfStep
	for _, n := range opaqueRunners {
		programs[n] = func(*checker, *unit, []arg) step { return step{opaque: reasonRunsItsOwn} }
	}
}

// opaqueRunners run commands their own way, from options, files or a
// language of their own (firejail's profiles, gdb's -ex, tmux's and
// screen's commands): opaque.
var opaqueRunners = []string{"firejail", "gdb", "lldb", "tmux", "screen"}

// reasonRunsItsOwn: a program that runs commands its own way.
const reasonRunsItsOwn = "runs commands of its own language"

// runnerSpec is a runner read like timeout: options, operands, command.
type runnerSpec struct {
	spec        optSpec
	transparent bool // allowed when what it runs is (docs/spec.md §9.3)
}

// runnerSpecs are the runners that need nothing but their options read.
// Transparent: they change how the command runs, not who runs it or where.
var runnerSpecs = sync.OnceValue(func() map[string]runnerSpec {
	return map[string]runnerSpec{
		"prlimit": {optSpec{optArgs: "cdefilmnqrstuvxy", args: "po", flags: "hV", long: map[string]int{
			"pid": reqArg, "output": reqArg, "noheadings": noArg, "raw": noArg, "verbose": noArg, "help": noArg,
			"version": noArg, "core": optArg, "data": optArg, "nice": optArg, "fsize": optArg, "sigpending": optArg,
			"memlock": optArg, "rss": optArg, "nofile": optArg, "msgqueue": optArg, "rtprio": optArg,
			"stack": optArg, "cpu": optArg, "nproc": optArg, "as": optArg, "locks": optArg, "rttime": optArg}}, true},
		"unbuffer":  {optSpec{flags: "p"}, true},
		"eatmydata": {optSpec{long: map[string]int{"help": noArg, "version": noArg}}, true},
		"catchsegv": {optSpec{}, true},
		"nocache":   {optSpec{args: "nD"}, true},
		"xvfb-run": {optSpec{flags: "ahl", args: "nsefpw", long: map[string]int{
			"auto-servernum": noArg, "help": noArg, "listen-tcp": noArg, "server-num": reqArg, "server-args": reqArg,
			"error-file": reqArg, "auth-file": reqArg, "xauth-protocol": reqArg, "wait": reqArg, "auto-display": noArg}}, true},
		"dbus-run-session": {optSpec{long: map[string]int{"config-file": reqArg, "dbus-daemon": reqArg, "help": noArg, "version": noArg}}, true},
		"ssh-agent":        {optSpec{flags: "cdDks", args: "aEOPt"}, true},
		"trickle":          {optSpec{flags: "hVvs", args: "duwtln"}, true},
		"torsocks":         {optSpec{flags: "qdhi", args: "uapP", long: map[string]int{"user": reqArg, "pass": reqArg, "address": reqArg, "port": reqArg, "quiet": noArg, "debug": noArg, "help": noArg, "isolate": noArg, "version": noArg}}, true},
		"proxychains":      {optSpec{flags: "q", args: "f"}, true},
		"proxychains4":     {optSpec{flags: "q", args: "f"}, true},
		"softlimit":        {optSpec{args: "madslfcoptr"}, true},
		"cgexec":           {optSpec{flags: "h", args: "g", long: map[string]int{"sticky": noArg}}, true},
		"numactl": {optSpec{flags: "alHsS", args: "mNpCPi", long: map[string]int{
			"all": noArg, "interleave": reqArg, "preferred": reqArg, "preferred-many": reqArg, "membind": reqArg,
			"cpunodebind": reqArg, "physcpubind": reqArg, "localalloc": noArg, "balancing": noArg,
			"hardware": noArg, "show": noArg, "weighted-interleave": reqArg}}, true},
		// Not transparent: they run the command as someone else, or with
		// other credentials.
		"setpriv": {optSpec{flags: "dhV", long: map[string]int{
			"dump": noArg, "nnp": noArg, "no-new-privs": noArg, "inh-caps": reqArg, "ambient-caps": reqArg,
			"bounding-set": reqArg, "ruid": reqArg, "euid": reqArg, "rgid": reqArg, "egid": reqArg, "reuid": reqArg,
			"regid": reqArg, "clear-groups": noArg, "keep-groups": noArg, "init-groups": noArg, "groups": reqArg,
			"securebits": reqArg, "pdeathsig": reqArg, "selinux-label": reqArg, "apparmor-profile": reqArg,
			"landlock-access": reqArg, "landlock-rule": reqArg, "reset-env": noArg, "help": noArg, "version": noArg}}, false},
		"sshpass":   {optSpec{flags: "ehvV", args: "fdpP"}, false},
		"setuidgid": {optSpec{operands: 1}, false},
		"bwrap":     {optSpec{}, false}, // any option: opaque (bwrap's options take up to three words)
	}
})

var (
	jobsOpts    = optSpec{flags: "lnprsx"}
	compgenOpts = optSpec{flags: "abcdefgjksuvI", args: "oAGWFCXPSV"}
	setarchOpts = optSpec{flags: "3BFILRSTXZvhV", long: map[string]int{
		"4gb": noArg, "uname-2.6": noArg, "addr-compat-layout": noArg, "addr-no-randomize": noArg,
		"fdpic-funcptrs": noArg, "mmap-page-zero": noArg, "read-implies-exec": noArg, "32bit": noArg,
		"short-inode": noArg, "whole-seconds": noArg, "sticky-timeouts": noArg, "3gb": noArg,
		"verbose": noArg, "list": noArg, "help": noArg, "version": noArg, "show": optArg}}
	runuserOpts = optSpec{flags: "flmpPhV", args: "cgGswu", long: map[string]int{
		"fast": noArg, "login": noArg, "preserve-environment": noArg, "pty": noArg, "help": noArg,
		"version": noArg, "command": reqArg, "session-command": reqArg, "group": reqArg,
		"supp-group": reqArg, "shell": reqArg, "whitelist-environment": reqArg, "user": reqArg}}
	systemdRunOpts = optSpec{flags: "tPqdGrhS", args: "pEuHM", long: map[string]int{
		"user": noArg, "system": noArg, "scope": noArg, "unit": reqArg, "property": reqArg,
		"description": reqArg, "slice": reqArg, "slice-inherit": noArg, "expand-environment": optArg,
		"remain-after-exit": noArg, "send-sighup": noArg, "service-type": reqArg, "uid": reqArg,
		"gid": reqArg, "nice": reqArg, "working-directory": reqArg, "same-dir": noArg, "setenv": reqArg,
		"pty": noArg, "pipe": noArg, "quiet": noArg, "on-active": reqArg, "on-boot": reqArg,
		"on-startup": reqArg, "on-unit-active": reqArg, "on-unit-inactive": reqArg, "on-calendar": reqArg,
		"on-timezone-change": noArg, "on-clock-change": noArg, "timer-property": reqArg,
		"path-property": reqArg, "socket-property": reqArg, "no-block": noArg, "wait": noArg,
		"collect": noArg, "no-ask-password": noArg, "machine": reqArg, "host": reqArg, "shell": noArg,
		"json": reqArg, "job-mode": reqArg, "background": reqArg, "help": noArg, "version": noArg}}
	parallelOpts = optSpec{flags: "kqvXm0ur", args: "jnNdaPIES", long: map[string]int{
		"jobs": reqArg, "keep-order": noArg, "max-args": reqArg, "quote": noArg, "verbose": noArg,
		"xargs": noArg, "null": noArg, "delimiter": reqArg, "arg-file": reqArg, "colsep": reqArg,
		"timeout": reqArg, "retries": reqArg, "joblog": reqArg, "halt": reqArg, "dry-run": noArg,
		"will-cite": noArg, "bar": noArg, "eta": noArg, "progress": noArg, "tag": noArg,
		"line-buffer": noArg, "lb": noArg, "ungroup": noArg, "group": noArg, "nice": reqArg,
		"tmpdir": reqArg, "shuf": noArg, "no-run-if-empty": noArg, "max-procs": reqArg,
		"sshlogin": reqArg, "sshloginfile": reqArg, "slf": reqArg, "id": reqArg, "fg": noArg,
		"wait": noArg, "semaphore": noArg, "semaphoretimeout": reqArg, "st": reqArg, "help": noArg,
		"version": noArg}}
	fakerootOpts = optSpec{flags: "uhv", args: "lisb", long: map[string]int{
		"lib": reqArg, "faked": reqArg, "unknown-is-real": noArg, "help": noArg, "version": noArg}}
	pkexecOpts = optSpec{long: map[string]int{
		"user": reqArg, "keep-cwd": noArg, "disable-internal-agent": noArg, "help": noArg, "version": noArg}}
	straceOpts = optSpec{flags: "DdfFhiqrtTvVxyzZkcCwn", args: "aEeoOpPsSbIXUu", long: map[string]int{
		"output": reqArg, "trace": reqArg, "signal": reqArg, "status": reqArg, "summary-only": noArg,
		"follow-forks": noArg, "output-separately": noArg, "string-limit": reqArg, "env": reqArg,
		"user": reqArg, "attach": reqArg, "seccomp-bpf": noArg, "quiet": optArg, "help": noArg, "version": noArg}}
	choomOpts = optSpec{flags: "hV", args: "pn", long: map[string]int{"pid": reqArg, "adjust": reqArg, "help": noArg, "version": noArg}}
	ldsoOpts  = optSpec{long: map[string]int{"list": noArg, "verify": noArg, "library-path": reqArg, "inhibit-rpath": reqArg,
		"audit": reqArg, "preload": reqArg, "argv0": reqArg, "glibc-hwcaps-prefix": reqArg, "glibc-hwcaps-mask": reqArg,
		"inhibit-cache": noArg, "list-tunables": noArg, "list-diagnostics": noArg, "help": noArg, "version": noArg}}
	ltraceOpts = optSpec{flags: "bcCfhiLrStTV", args: "aADeFlnopsuwx", long: map[string]int{
		"output": reqArg, "help": noArg, "version": noArg, "demangle": noArg, "library": reqArg, "indent": reqArg}}
)

// writerStep reads a transparent runner whose option keys name a file it
// writes (strace -o): a write of the part, like a redirection.
func writerStep(sp *optSpec, keys ...string) handler {
	return func(c *checker, u *unit, args []arg) step {
		if o, _, bad := scan(args, sp, 1); bad == "" {
			if f, ok := o.get(keys...); ok && writesTo(f) {
				u.writes = true
			}
		}
		return wrapper(sp, true)(c, u, args)
	}
}

// straceStep reads strace: -o |CMD (or !CMD) pipes the trace into a
// shell command, -E NAME=VALUE sets the traced command's environment, -o
// FILE writes FILE.
func straceStep(c *checker, u *unit, args []arg) step {
	o, _, bad := scan(args, &straceOpts, 1)
	if bad != "" {
		return step{opaque: bad}
	}
	if f, ok := o.get("o", "output"); ok && (f.dyn || strings.HasPrefix(f.text, "|") || strings.HasPrefix(f.text, "!")) {
		return step{opaque: reasonDynamicScript}
	}
	st := writerStep(&straceOpts, "o", "output")(c, u, args)
	for i, a := range args {
		if i > 0 && !args[i-1].dyn && (args[i-1].text == "-E" || args[i-1].text == "--env") {
			st.assigns = append(st.assigns, envName(a))
		} else if v, ok := strings.CutPrefix(a.text, "-E"); ok && v != "" && !a.dyn {
			st.assigns = append(st.assigns, envName(static(v)))
		} else if v, ok := strings.CutPrefix(a.text, "--env="); ok && !a.dyn {
			st.assigns = append(st.assigns, envName(static(v)))
		}
	}
	return st
}

// envName is the name NAME=VALUE (or NAME, unset) sets.
func envName(a arg) string {
	if a.dyn {
		return dynName
	}
	name, _, _ := strings.Cut(a.text, "=")
	return name
}

// ldsoStep reads the dynamic loader run as a program (ld.so, ld-linux…):
// [options] PROGRAM ARGS; --preload, --audit and --library-path load code
// into it.
func ldsoStep(_ *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &ldsoOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case o.has("preload", "audit", "library-path"):
		return step{opaque: reasonOption}
	case i >= len(args):
		return step{}
	}
	return step{inners: [][]arg{args[i:]}}
}

// longOptionsStep reads a runner whose options are all one word (--name,
// --name=value, valgrind's -q and -v): the command follows them.
func longOptionsStep(_ *checker, _ *unit, args []arg) step {
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return step{opaque: reasonDynamicName}
		}
		if a.text == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a.text, "-") {
			break
		}
		if !strings.HasPrefix(a.text, "--") && a.text != "-q" && a.text != "-v" && a.text != "-h" {
			return step{opaque: reasonOption}
		}
	}
	if i >= len(args) {
		return step{}
	}
	return step{inners: [][]arg{args[i:]}, transparent: true}
}

// perfStep: perf stat, record, trace and their kin run a command after
// options perf's manual lists per subcommand, not read here: opaque;
// perf's other subcommands read data.
func perfStep(_ *checker, _ *unit, args []arg) step {
	if len(args) > 1 && (args[1].dyn || slices.Contains(perfRunners, args[1].text)) {
		return step{opaque: reasonRunsItsOwn}
	}
	return step{}
}

// perfRunners are perf's subcommands that run a command or a script.
var perfRunners = []string{"stat", "record", "trace", "ftrace", "mem", "c2c", "lock", "sched", "kvm",
	"timechart", "script", "top", "kwork", "daemon", "test", "bench", "probe"}

// jobsStep: jobs -x COMMAND ARGS runs COMMAND, its job specs replaced.
func jobsStep(_ *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &jobsOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case !o.has("x") || i >= len(args):
		return step{}
	}
	return step{inners: [][]arg{args[i:]}, transparent: true}
}

// compgenStep: compgen -C COMMAND runs COMMAND as a script with the word
// and the previous word appended, -F FUNCTION calls the function the same
// way, and -W expands each word of its list (a dynamic list may hold a
// command substitution; a static one is read as quoted code).
func compgenStep(c *checker, _ *unit, args []arg) step {
	o, _, bad := scan(args, &compgenOpts, 1)
	if bad != "" {
		return step{opaque: bad}
	}
	if w, ok := o.get("W"); ok && w.dyn {
		return step{opaque: reasonDynamicScript}
	}
	var st step
	for _, key := range []string{"C", "F"} {
		if s, ok := o.get(key); ok {
			c.skipWord(s)
			if s.dyn {
				return step{opaque: reasonDynamicScript}
			}
			st.scripts = append(st.scripts, s.text+` "$1" "$2" "$3"`)
		}
	}
	return st
}

// setarchStep reads setarch [ARCH] [options] [PROGRAM…] (and its links,
// with no ARCH): with no program it starts a shell nobody can check.
func setarchStep(archOperand bool) handler {
	return func(_ *checker, _ *unit, args []arg) step {
		from := 1
		if archOperand && len(args) > 1 && (args[1].dyn || !strings.HasPrefix(args[1].text, "-")) {
			if args[1].multi {
				return step{opaque: reasonDynamicName}
			}
			from = 2
		}
		o, i, bad := scan(args, &setarchOpts, from)
		switch {
		case bad != "":
			return step{opaque: bad}
		case i < len(args):
			return step{inners: [][]arg{args[i:]}, transparent: true}
		case o.has("list", "help", "version", "h", "V", "show") || (archOperand && from == 1):
			return step{}
		}
		return step{opaque: reasonNoScript}
	}
}

// runuserStep reads runuser: with -u USER the command follows the
// options; without it runuser is su, whose options may follow the user.
func runuserStep(c *checker, u *unit, args []arg) step {
	o, i, bad := scan(args, &runuserOpts, 1)
	if bad == "" && o.has("u", "user") {
		switch {
		case o.has("l", "login"):
			return step{opaque: reasonLogin}
		case i < len(args):
			return step{inners: [][]arg{args[i:]}}
		}
		return step{opaque: reasonNoScript}
	}
	return suStep(c, u, args)
}

// sgStep reads sg [-] GROUP [-c] COMMAND: COMMAND is a script for
// /bin/sh; with none sg starts a shell.
func sgStep(c *checker, _ *unit, args []arg) step {
	i := 1
	if i < len(args) && !args[i].dyn && args[i].text == "-" {
		return step{opaque: reasonLogin}
	}
	if i < len(args) && args[i].multi {
		return step{opaque: reasonDynamicName}
	}
	i++ // the group
	if i < len(args) && !args[i].dyn && args[i].text == "-c" {
		i++
	}
	if i >= len(args) {
		return step{opaque: reasonNoScript}
	}
	st := scriptValue(c, args[i], false)
	st.shell = aliasShell
	return st
}

// systemdRunStep reads systemd-run [options] COMMAND…, which the service
// manager runs, not this shell; --shell starts a shell.
func systemdRunStep(_ *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &systemdRunOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case o.has("S", "shell"):
		return step{opaque: reasonNoScript}
	case i >= len(args):
		return step{}
	}
	return step{inners: [][]arg{args[i:]}}
}

// parallelArg stands for the arguments GNU parallel puts in its command:
// a dynamic word that may be several.
const parallelArg = `$PARALLEL_ARGS`

// parallelToken matches a word holding one of parallel's replacement
// strings: {}, {.}, {/}, {//}, {/.}, {#}, {%}, {N} and its kin, {=perl=}.
var parallelToken = lazyre.New(`\{[0-9]*(\.|/|//|/\.|#|%)?\}|\{=.*=\}`)

// reasonOtherHost: the command runs on another machine.
const reasonOtherHost = "runs on another machine"

// parallelStep reads GNU parallel [options] COMMAND… (:::|::::
// ARGS…)…, and sem [options] COMMAND…: the command's words, joined, are a
// script for the shell, in which each replacement string (or, with none,
// a word appended) is the arguments. With -q they are one command instead.
// With no command, the commands come from the input; with --sshlogin they
// run on another machine: opaque.
func parallelStep(sem bool) handler {
	return func(c *checker, _ *unit, args []arg) step {
		o, i, bad := scan(args, &parallelOpts, 1)
		switch {
		case bad != "":
			return step{opaque: bad}
		case o.has("S", "sshlogin", "sshloginfile", "slf"):
			return step{opaque: reasonOtherHost}
		case o.has("help", "version"):
			return step{}
		}
		repl := "{}"
		if r, ok := o.get("I"); ok {
			if r.dyn {
				return step{opaque: reasonDynamicName}
			}
			repl = r.text
		}
		end := i
		for end < len(args) && (sem || args[end].dyn || !strings.HasPrefix(args[end].text, ":::")) {
			end++
		}
		if end == i {
			return step{opaque: reasonNoScript}
		}
		cmd := parallelCommand(args[i:end], repl, sem)
		if o.has("q", "quote") {
			return step{inners: [][]arg{cmd}}
		}
		texts := make([]string, len(cmd))
		for k, a := range cmd {
			c.skipWord(a)
			if a.dyn && a.text != parallelArg {
				return step{opaque: reasonDynamicScript}
			}
			texts[k] = a.text
		}
		return step{scripts: []string{strings.Join(texts, " ")}, shell: aliasShell} // $SHELL
	}
}

// parallelCommand puts the arguments into a command: replacement strings
// become a dynamic word, and with none the arguments are appended.
func parallelCommand(words []arg, repl string, sem bool) []arg {
	out := make([]arg, 0, len(words)+1)
	found := false
	for _, a := range words {
		if !a.dyn && (strings.Contains(a.text, repl) || parallelToken().MatchString(a.text)) {
			found = true
			a = arg{text: parallelArg, dyn: true, multi: true, word: a.word}
		}
		out = append(out, a)
	}
	if !found && !sem {
		out = append(out, arg{text: parallelArg, dyn: true, multi: true})
	}
	return out
}

// capshStep reads capsh [--option=value]… [-- ARGS…]: ARGS are given to
// bash; `==` runs capsh again, with options nobody read.
func capshStep(c *checker, u *unit, args []arg) step {
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a.dyn:
			return step{opaque: reasonDynamicName}
		case a.text == "--":
			return shellStep(c, u, append([]arg{static("bash")}, args[i+1:]...))
		case a.text == "==" || strings.HasPrefix(a.text, "--shell"):
			return step{opaque: reasonOption}
		case !strings.HasPrefix(a.text, "--"):
			return step{opaque: reasonOption}
		}
	}
	return step{}
}

// envdirStep reads envdir DIR COMMAND…: the files of DIR, which nobody
// read, set the command's environment, PATH and LD_PRELOAD among it.
func envdirStep(_ *checker, _ *unit, args []arg) step {
	if len(args) < 3 {
		return step{}
	}
	return step{inners: [][]arg{args[2:]}, assigns: []string{dynName}}
}

// reasonGitAlias: git given an alias on its command line, which may name
// any subcommand or a shell command (`-c alias.p='!rm -f v'`).
const reasonGitAlias = "git alias defined on the command line"

// gitStep reads git: `-c alias.NAME=…` (or --config-env) before the
// subcommand may make the subcommand anything.
func gitStep(_ *checker, _ *unit, args []arg) step {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			continue
		}
		value := ""
		switch {
		case (a.text == "-c" || a.text == "--config-env") && i+1 < len(args):
			i++
			if args[i].dyn {
				return step{opaque: reasonGitAlias}
			}
			value = args[i].text
		case strings.HasPrefix(a.text, "--config-env="):
			value = strings.TrimPrefix(a.text, "--config-env=")
		case !strings.HasPrefix(a.text, "-"):
			return step{}
		}
		if strings.HasPrefix(strings.ToLower(value), "alias.") {
			return step{opaque: reasonGitAlias}
		}
	}
	return step{}
}
