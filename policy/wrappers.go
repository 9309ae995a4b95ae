package policy

import (
	"strings"
	"sync"

	"github.com/dsh-go/dsh/internal/lazyre"
	"mvdan.cc/sh/v3/syntax"
)

// builtins are recognised only by their bare name: `./command x` runs a
// file, not the builtin. programs are recognised by basename, so that
// `/usr/bin/sudo rm` is seen through; a wrapper written with a `/` is never
// transparent, though, since the file may be anything. They are made on
// first use (loadHandlers), not at every start of dsh.
var builtins, programs map[string]handler

// loadHandlers makes builtins and programs.
var loadHandlers = sync.OnceFunc(func() {
	builtins = map[string]handler{
		"eval": evalStep, "command": commandStep, "builtin": builtinStep, "exec": execStep,
		"trap": trapStep, "alias": aliasStep, "unalias": stateStep("unalias"), "hash": hashStep,
		"enable": stateStep("enable"), "shopt": shoptStep, "set": setStep,
		"fc": fcStep, "history": historyStep, "source": sourceStep, ".": sourceStep,
		"declare": declStep, "typeset": declStep, "local": declStep, "export": declStep,
		"readonly": declStep, "nameref": declStep, "read": readStep, "mapfile": mapfileStep,
		"readarray": mapfileStep, "printf": printfStep, "getopts": getoptsStep, "let": letStep,
		"wait": waitStep, "test": testStep, "[": testStep, "unset": unsetStep,
	}
	programs = map[string]handler{
		"timeout": wrapper(&timeoutOpts, true), "nohup": wrapper(&nohupOpts, true),
		"stdbuf": wrapper(&stdbufOpts, true), "time": timeStep,
		"setsid": wrapper(&setsidOpts, true), "nice": niceStep, "env": envStep,
		"ionice":  noCommandWith(&ioniceOpts, "p", "P", "u", "pid", "pgid", "uid"),
		"taskset": noCommandWith(&tasksetOpts, "p", "pid"),
		"chrt":    noCommandWith(&chrtOpts, "p", "pid", "m", "max"),
		"flock":   flockStep, "sudo": sudoStep, "doas": doasStep, "su": suStep,
		"chroot": shellWrapper(&chrootOpts), "unshare": shellWrapper(&unshareOpts),
		"nsenter": shellWrapper(&nsenterOpts), "script": scriptStep, "watch": watchStep,
		"xargs": xargsStep, "find": findStep, "busybox": boxStep("sh", "ash", "bash", "hush"),
		"toybox": boxStep("sh"),
	}
	for _, s := range bashLike {
		programs[s] = shellStep
	}
	for _, s := range otherShells {
		programs[s] = otherShellStep
	}
	registerRunners()
})

// handlerFor returns what reads a command named name, or nil for an
// ordinary command.
func handlerFor(name string) handler {
	loadHandlers()
	if !strings.Contains(name, "/") {
		if h := builtins[name]; h != nil {
			return h
		}
	}
	b := base(name)
	if strings.HasPrefix(b, "ld-") && strings.Contains(b, ".so") { // ld-linux-x86-64.so.2
		return ldsoStep
	}
	return programs[b]
}

// Option arities.
const (
	noArg = iota
	reqArg
	optArg // only as --name=value
)

// optSpec is a command's options, as its manual documents them
// (docs/spec.md §9.3: options are skipped by their documented arity).
type optSpec struct {
	flags    string         // short options without an argument
	args     string         // short options with an argument, attached or the next word
	optArgs  string         // short options whose argument can only be attached (-m/path)
	long     map[string]int // long options and their arity
	operands int            // positional operands before the command
}

// opts are the options a scan found: a short letter or a long name → its
// value (empty for a flag).
type opts map[string]arg

func (o opts) has(keys ...string) bool {
	_, ok := o.get(keys...)
	return ok
}

func (o opts) get(keys ...string) (arg, bool) {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			return v, true
		}
	}
	return arg{}, false
}

// scan reads options from args[from] on, then the positional operands; it
// returns the options, the index after them, and why the command cannot
// be found when it cannot: a dynamic word where an option may be (it may
// be an option taking the next word, or the command), a dynamic word that
// may be several where an operand is, an option not documented.
func scan(args []arg, sp *optSpec, from int) (opts, int, string) {
	o := opts{}
	i := from
	for i < len(args) {
		a := args[i]
		if a.dyn {
			return o, i, reasonDynamicName
		}
		t := a.text
		if t == "--" {
			i++
			break
		}
		if len(t) < 2 || t[0] != '-' {
			break
		}
		var n int
		var bad string
		if strings.HasPrefix(t, "--") {
			n, bad = sp.longOpt(args, i, o)
		} else {
			n, bad = sp.shortOpts(args, i, o)
		}
		if bad != "" {
			return o, i, bad
		}
		i += n
	}
	for k := 0; k < sp.operands && i < len(args); k++ {
		if args[i].multi {
			return o, i, reasonDynamicName
		}
		i++
	}
	return o, i, ""
}

// longOpt reads --name[=value] at args[i], abbreviated as getopt_long
// allows; it returns how many words it used.
func (sp *optSpec) longOpt(args []arg, i int, o opts) (int, string) {
	name, val, hasVal := strings.Cut(args[i].text[2:], "=")
	full, ok := sp.longName(name)
	if !ok {
		return 0, reasonOption
	}
	switch sp.long[full] {
	case noArg:
		if hasVal {
			return 0, reasonOption
		}
		o[full] = static("")
	case optArg:
		o[full] = arg{text: val, word: args[i].word}
	default:
		if hasVal {
			o[full] = arg{text: val, word: args[i].word}
			return 1, ""
		}
		return optionValue(args, i, full, o)
	}
	return 1, ""
}

// longName finds a long option by its name or a unique prefix of it.
func (sp *optSpec) longName(name string) (string, bool) {
	if _, ok := sp.long[name]; ok {
		return name, true
	}
	found := ""
	for full := range sp.long {
		if strings.HasPrefix(full, name) {
			if found != "" {
				return "", false
			}
			found = full
		}
	}
	return found, found != "" && name != ""
}

// shortOpts reads a cluster of short options at args[i].
func (sp *optSpec) shortOpts(args []arg, i int, o opts) (int, string) {
	t := args[i].text
	for j := 1; j < len(t); j++ {
		ch := t[j : j+1]
		switch {
		case strings.Contains(sp.flags, ch):
			o[ch] = static("")
		case strings.Contains(sp.args, ch) && j+1 < len(t):
			o[ch] = arg{text: t[j+1:], word: args[i].word}
			return 1, ""
		case strings.Contains(sp.args, ch):
			return optionValue(args, i, ch, o)
		case strings.Contains(sp.optArgs, ch):
			o[ch] = arg{text: t[j+1:], word: args[i].word}
			return 1, ""
		default:
			return 0, reasonOption
		}
	}
	return 1, ""
}

// optionValue takes the word after args[i] as the value of option key.
func optionValue(args []arg, i int, key string, o opts) (int, string) {
	if i+1 == len(args) {
		o[key] = static("")
		return 1, ""
	}
	if args[i+1].multi {
		return 0, reasonDynamicName
	}
	o[key] = args[i+1]
	return 2, ""
}

// The wrappers' options (coreutils, util-linux, sudo, doas, procps, findutils).
var (
	timeoutOpts = optSpec{flags: "v", args: "ks", operands: 1, long: map[string]int{
		"foreground": noArg, "preserve-status": noArg, "verbose": noArg, "help": noArg, "version": noArg,
		"kill-after": reqArg, "signal": reqArg}}
	nohupOpts  = optSpec{long: map[string]int{"help": noArg, "version": noArg}}
	stdbufOpts = optSpec{args: "ioe", long: map[string]int{
		"input": reqArg, "output": reqArg, "error": reqArg, "help": noArg, "version": noArg}}
	timeOpts = optSpec{flags: "apvqV", args: "fo", long: map[string]int{
		"append": noArg, "portability": noArg, "verbose": noArg, "quiet": noArg, "help": noArg,
		"version": noArg, "format": reqArg, "output": reqArg}}
	setsidOpts = optSpec{flags: "cfw", long: map[string]int{
		"ctty": noArg, "fork": noArg, "wait": noArg, "help": noArg, "version": noArg}}
	niceOpts = optSpec{args: "n", long: map[string]int{"adjustment": reqArg, "help": noArg, "version": noArg}}
	envOpts  = optSpec{flags: "i0v", args: "uCS", long: map[string]int{
		"ignore-environment": noArg, "null": noArg, "debug": noArg, "list-signal-handling": noArg,
		"help": noArg, "version": noArg, "unset": reqArg, "chdir": reqArg, "split-string": reqArg,
		"block-signal": optArg, "default-signal": optArg, "ignore-signal": optArg}}
	ioniceOpts = optSpec{flags: "t", args: "cnpPu", long: map[string]int{
		"class": reqArg, "classdata": reqArg, "pid": reqArg, "pgid": reqArg, "uid": reqArg,
		"ignore": noArg, "help": noArg, "version": noArg}}
	tasksetOpts = optSpec{flags: "acp", operands: 1, long: map[string]int{
		"all-tasks": noArg, "cpu-list": noArg, "pid": noArg, "help": noArg, "version": noArg}}
	chrtOpts = optSpec{flags: "abdefiorRmpvhV", args: "TPD", operands: 1, long: map[string]int{
		"all-tasks": noArg, "batch": noArg, "deadline": noArg, "ext": noArg, "fifo": noArg, "idle": noArg,
		"other": noArg, "rr": noArg, "reset-on-fork": noArg, "max": noArg, "pid": noArg, "verbose": noArg,
		"help": noArg, "version": noArg, "sched-runtime": reqArg, "sched-period": reqArg, "sched-deadline": reqArg}}
	flockOpts = optSpec{flags: "sexnoFuhV", args: "wE", operands: 1, long: map[string]int{
		"shared": noArg, "exclusive": noArg, "unlock": noArg, "nonblock": noArg, "nb": noArg,
		"close": noArg, "no-fork": noArg, "verbose": noArg, "help": noArg, "version": noArg,
		"wait": reqArg, "timeout": reqArg, "conflict-exit-code": reqArg}}
	sudoOpts = optSpec{flags: "AbEeHiKklnPSsVvh", args: "CDgprtTUuR", long: map[string]int{
		"askpass": noArg, "background": noArg, "edit": noArg, "help": noArg, "set-home": noArg,
		"login": noArg, "remove-timestamp": noArg, "reset-timestamp": noArg, "list": noArg,
		"non-interactive": noArg, "preserve-groups": noArg, "stdin": noArg, "shell": noArg,
		"version": noArg, "validate": noArg, "bell": noArg, "preserve-env": optArg,
		"close-from": reqArg, "chdir": reqArg, "group": reqArg, "host": reqArg, "prompt": reqArg,
		"chroot": reqArg, "role": reqArg, "type": reqArg, "command-timeout": reqArg,
		"other-user": reqArg, "user": reqArg}}
	doasOpts = optSpec{flags: "nSs", args: "Cu"}
	suOpts   = optSpec{flags: "flmpPhV", args: "cgGsw", long: map[string]int{
		"fast": noArg, "login": noArg, "preserve-environment": noArg, "pty": noArg, "help": noArg,
		"version": noArg, "command": reqArg, "session-command": reqArg, "group": reqArg,
		"supp-group": reqArg, "shell": reqArg, "whitelist-environment": reqArg}}
	chrootOpts = optSpec{operands: 1, long: map[string]int{
		"userspec": reqArg, "groups": reqArg, "skip-chdir": noArg, "help": noArg, "version": noArg}}
	unshareOpts = optSpec{flags: "frchV", optArgs: "muinpUCT", args: "RwSGl", long: map[string]int{
		"fork": noArg, "map-root-user": noArg, "map-current-user": noArg, "map-auto": noArg,
		"keep-caps": noArg, "help": noArg, "version": noArg, "kill-child": optArg, "mount-proc": optArg,
		"mount": optArg, "uts": optArg, "ipc": optArg, "net": optArg, "pid": optArg, "user": optArg,
		"cgroup": optArg, "time": optArg, "root": reqArg, "wd": reqArg, "setuid": reqArg,
		"setgid": reqArg, "load-interp": reqArg, "map-user": reqArg, "map-group": reqArg,
		"map-users": reqArg, "map-groups": reqArg, "propagation": reqArg, "setgroups": reqArg,
		"monotonic": reqArg, "boottime": reqArg}}
	nsenterOpts = optSpec{flags: "aeFZchV", optArgs: "muinpUCTrw", args: "tGSWN", long: map[string]int{
		"all": noArg, "env": noArg, "no-fork": noArg, "follow-context": noArg, "join-cgroup": noArg,
		"preserve-credentials": noArg, "keep-caps": noArg, "user-parent": noArg, "help": noArg,
		"version": noArg, "mount": optArg, "uts": optArg, "ipc": optArg, "net": optArg, "pid": optArg,
		"user": optArg, "cgroup": optArg, "time": optArg, "root": optArg, "wd": optArg,
		"target": reqArg, "setgid": reqArg, "setuid": reqArg, "wdns": reqArg, "net-socket": reqArg}}
	scriptOpts = optSpec{flags: "aefqhV", args: "cEBIOTmo", optArgs: "t", long: map[string]int{
		"append": noArg, "return": noArg, "flush": noArg, "force": noArg, "quiet": noArg,
		"help": noArg, "version": noArg, "command": reqArg, "echo": reqArg, "log-io": reqArg,
		"log-in": reqArg, "log-out": reqArg, "log-timing": reqArg, "logging-format": reqArg,
		"output-limit": reqArg, "timing": optArg}}
	watchOpts = optSpec{flags: "bcCefgprtwxhv", optArgs: "d", args: "nqs", long: map[string]int{
		"beep": noArg, "color": noArg, "no-color": noArg, "errexit": noArg, "follow": noArg,
		"chgexit": noArg, "precise": noArg, "no-rerun": noArg, "no-title": noArg, "no-wrap": noArg,
		"exec": noArg, "help": noArg, "version": noArg, "differences": optArg, "interval": reqArg,
		"equexit": reqArg, "shotsdir": reqArg}}
	xargsOpts = optSpec{flags: "0oprtx", optArgs: "eil", args: "adEILnPs", long: map[string]int{
		"null": noArg, "open-tty": noArg, "interactive": noArg, "no-run-if-empty": noArg,
		"verbose": noArg, "exit": noArg, "show-limits": noArg, "help": noArg, "version": noArg,
		"eof": optArg, "replace": optArg, "max-lines": optArg, "arg-file": reqArg, "delimiter": reqArg,
		"max-args": reqArg, "max-procs": reqArg, "max-chars": reqArg, "process-slot-var": reqArg}}
	commandOpts = optSpec{flags: "pvV"}
	execOpts    = optSpec{flags: "cl", args: "a"}
)

// wrapper reads a wrapper that runs the command after its options and
// operands; with none, it is an ordinary command.
func wrapper(sp *optSpec, transparent bool) handler {
	return func(_ *checker, _ *unit, args []arg) step {
		_, i, bad := scan(args, sp, 1)
		switch {
		case bad != "":
			return step{opaque: bad}
		case i >= len(args):
			return step{}
		}
		return step{inners: [][]arg{args[i:]}, transparent: transparent}
	}
}

// noCommandWith reads a transparent wrapper whose options keys make it
// act on a process instead of running a command (ionice -p, chrt -p).
func noCommandWith(sp *optSpec, keys ...string) handler {
	return func(_ *checker, _ *unit, args []arg) step {
		o, i, bad := scan(args, sp, 1)
		switch {
		case bad != "":
			return step{opaque: bad}
		case o.has(keys...) || i >= len(args):
			return step{}
		}
		return step{inners: [][]arg{args[i:]}, transparent: true}
	}
}

// shellWrapper reads a wrapper that starts a shell when given no command
// (chroot, unshare, nsenter): that shell reads a script nobody can check.
func shellWrapper(sp *optSpec) handler {
	return func(_ *checker, _ *unit, args []arg) step {
		o, i, bad := scan(args, sp, 1)
		switch {
		case bad != "":
			return step{opaque: bad}
		case i < len(args):
			return step{inners: [][]arg{args[i:]}}
		case o.has("h", "V", "help", "version"):
			return step{}
		}
		return step{opaque: reasonNoScript}
	}
}

// niceAdjustment is nice's legacy -N form.
var niceAdjustment = lazyre.New(`^-[-+]?[0-9]+$`)

func niceStep(c *checker, u *unit, args []arg) step {
	if len(args) > 1 && !args[1].dyn && niceAdjustment().MatchString(args[1].text) {
		rest := append([]arg{args[0]}, args[2:]...)
		return wrapper(&niceOpts, true)(c, u, rest)
	}
	return wrapper(&niceOpts, true)(c, u, args)
}

// envStep reads env [OPTION]… [-] [NAME=VALUE]… [COMMAND [ARG]…]. Its
// assignments are set aside like leading ones; -S STRING is checked like
// bash -c, unless it holds what env itself expands ($, backslash escapes).
func envStep(c *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &envOpts, 1)
	if bad != "" {
		return step{opaque: bad}
	}
	for i < len(args) && !args[i].dyn && args[i].text == "-" {
		i++
	}
	var names []string
	for ; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return step{opaque: reasonDynamicName}
		}
		name, _, ok := strings.Cut(a.text, "=")
		if !ok || name == "" {
			break
		}
		names = append(names, name)
	}
	if s, ok := o.get("S", "split-string"); ok {
		c.skipWord(s)
		if s.dyn || strings.ContainsAny(s.text, `$\`) {
			return step{opaque: reasonEnvString, assigns: names}
		}
		return step{scripts: []string{s.text + quoteArgs(args[i:])}, assigns: names, transparent: true, shell: bashShell}
	}
	if i >= len(args) {
		return step{assigns: names}
	}
	return step{inners: [][]arg{args[i:]}, assigns: names, transparent: true}
}

// quoteArgs appends words to a script: static ones quoted, dynamic ones as
// written.
func quoteArgs(args []arg) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteByte(' ')
		if q, ok := quote(a.text); ok && !a.dyn {
			b.WriteString(q)
		} else {
			b.WriteString(a.text)
		}
	}
	return b.String()
}

// timeStep reads GNU time [opts] COMMAND…: -o FILE writes its report to
// FILE (appended with -a), a write of the part like a redirection.
func timeStep(c *checker, u *unit, args []arg) step {
	if o, _, bad := scan(args, &timeOpts, 1); bad == "" {
		if f, ok := o.get("o", "output"); ok && writesTo(f) {
			u.writes = true
		}
	}
	return wrapper(&timeOpts, true)(c, u, args)
}

// writesTo reports whether writing to the file a names writes a file:
// anything but /dev/null.
func writesTo(a arg) bool { return a.dyn || a.text != "/dev/null" }

// flockStep reads flock [opts] FILE (COMMAND… | -c SCRIPT), or FD alone.
// With a command FILE is a file, even when it is a number, which flock
// creates: a write of the part.
func flockStep(c *checker, u *unit, args []arg) step {
	_, i, bad := scan(args, &flockOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case i >= len(args):
		return step{}
	}
	if writesTo(args[i-1]) {
		u.writes = true
	}
	if !args[i].dyn && (args[i].text == "-c" || args[i].text == "--command") {
		st := scriptArg(c, args, i+1, true)
		st.shell = aliasShell // $SHELL, else /bin/sh
		return st
	}
	return step{inners: [][]arg{args[i:]}, transparent: true}
}

// scriptArg is the step of a wrapper whose script is args[i].
func scriptArg(c *checker, args []arg, i int, transparent bool) step {
	if i >= len(args) {
		return step{}
	}
	return scriptValue(c, args[i], transparent)
}

// scriptValue is the step of a wrapper running the script s.
func scriptValue(c *checker, s arg, transparent bool) step {
	c.skipWord(s)
	if s.dyn {
		return step{opaque: reasonDynamicScript}
	}
	return step{scripts: []string{s.text}, transparent: transparent}
}

// sudoStep reads sudo [opts] [NAME=VALUE]… [COMMAND…]; -s and -i run
// their arguments joined, in a shell.
func sudoStep(c *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &sudoOpts, 1)
	if bad != "" {
		return step{opaque: bad}
	}
	var names []string
	for ; i < len(args) && !args[i].dyn; i++ {
		m := nameAssign().FindStringSubmatch(args[i].text)
		if m == nil {
			break
		}
		names = append(names, m[1])
	}
	rest := args[i:]
	switch {
	case o.has("s", "shell", "i", "login"):
		if len(rest) == 0 {
			return step{opaque: reasonNoScript, assigns: names}
		}
		st := joinedScript(c, rest, reasonDynamicScript)
		st.assigns, st.shell = names, aliasShell // the user's shell
		if o.has("i", "login") && st.opaque == "" {
			st.opaque = reasonLogin // a login shell reads the target user's profile
		}
		return st
	case len(rest) == 0 || o.has("e", "edit", "l", "list", "v", "validate", "V", "version", "h", "help"):
		return step{assigns: names}
	}
	return step{inners: [][]arg{rest}, assigns: names}
}

// joinedScript is the step of a command that joins its arguments with
// spaces and runs them as a script (eval, watch, sudo -s); a dynamic one
// makes it opaque for reason.
func joinedScript(c *checker, args []arg, reason string) step {
	texts := make([]string, len(args))
	for i, a := range args {
		c.skipWord(a)
		if a.dyn {
			return step{opaque: reason}
		}
		texts[i] = a.text
	}
	return step{scripts: []string{strings.Join(texts, " ")}}
}

// doasStep reads doas [-nSs] [-C config] [-u user] command.
func doasStep(_ *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &doasOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case o.has("s") && i >= len(args):
		return step{opaque: reasonNoScript}
	case o.has("C") || i >= len(args):
		return step{}
	}
	return step{inners: [][]arg{args[i:]}}
}

// suStep reads su, whose options may follow the user: -c SCRIPT runs in
// the user's shell; without it su starts that shell.
func suStep(c *checker, _ *unit, args []arg) step {
	o := opts{}
	login := false
	for i := 1; i < len(args); {
		a := args[i]
		if a.dyn {
			return step{opaque: reasonDynamicName}
		}
		login = login || a.text == "-"
		if a.text == "-" || a.text == "--" || len(a.text) < 2 || a.text[0] != '-' {
			i++
			continue
		}
		n, bad := suOpts.shortOpts(args, i, o)
		if strings.HasPrefix(a.text, "--") {
			n, bad = suOpts.longOpt(args, i, o)
		}
		if bad != "" {
			return step{opaque: bad}
		}
		i += n
	}
	if sh, ok := o.get("s", "shell"); ok && (sh.dyn || !isBashLike(base(sh.text))) {
		return step{opaque: reasonOtherShell}
	}
	st := scriptOrShell(c, o, "c", "command", "session-command")
	if (login || o.has("l", "login")) && st.opaque == "" {
		st.opaque = reasonLogin // a login shell reads the user's profile
	}
	return st
}

// scriptOrShell is the step of a wrapper (su, script) that runs the
// script of one of the options keys, or else starts a shell nobody can
// check, unless it only prints help or its version.
func scriptOrShell(c *checker, o opts, keys ...string) step {
	if s, ok := o.get(keys...); ok {
		st := scriptValue(c, s, false)
		st.shell = aliasShell // the user's shell, or $SHELL
		return st
	}
	if o.has("h", "V", "help", "version") {
		return step{}
	}
	return step{opaque: reasonNoScript}
}

// scriptStep reads script [opts] [file]: -c runs a script; without it,
// script starts a shell.
func scriptStep(c *checker, _ *unit, args []arg) step {
	o, _, bad := scan(args, &scriptOpts, 1)
	if bad != "" {
		return step{opaque: bad}
	}
	return scriptOrShell(c, o, "c", "command")
}

// watchStep reads watch [opts] COMMAND…: with -x it runs the command,
// otherwise its words joined by spaces as a script.
func watchStep(c *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &watchOpts, 1)
	switch {
	case bad != "":
		return step{opaque: bad}
	case i >= len(args):
		return step{}
	case o.has("x", "exec"):
		return step{inners: [][]arg{args[i:]}}
	}
	st := joinedScript(c, args[i:], reasonDynamicScript)
	st.shell = aliasShell // sh -c
	return st
}

// xargsStep reads xargs [opts] [COMMAND…]. The command gets the input:
// one trailing word that may be any number of words, or, with -I R, any
// word holding R (docs/spec.md §9.3 "Wrappers").
func xargsStep(_ *checker, _ *unit, args []arg) step {
	o, i, bad := scan(args, &xargsOpts, 1)
	if bad != "" {
		return step{opaque: bad}
	}
	cmd := append([]arg(nil), args[i:]...)
	if len(cmd) == 0 {
		cmd = []arg{static("echo")}
	}
	r, ok := o.get("I", "replace", "i")
	if !ok {
		return step{inners: [][]arg{append(cmd, arg{text: "…", dyn: true, multi: true})}}
	}
	if r.dyn {
		return step{opaque: reasonDynamicName}
	}
	if r.text == "" {
		r.text = "{}"
	}
	for k := range cmd {
		if !cmd[k].dyn && strings.Contains(cmd[k].text, r.text) {
			cmd[k].dyn = true
		}
	}
	return step{inners: [][]arg{cmd}}
}

// findStep reads find: each -exec, -execdir, -ok, -okdir runs a command,
// in which {} is dynamic. A word of the expression that may be several
// words may hide an -exec, so find cannot be checked then.
func findStep(_ *checker, _ *unit, args []arg) step {
	var inners [][]arg
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a.multi {
			return step{opaque: reasonFind}
		}
		switch a.text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		inner, end := execCommand(args, i+1)
		if len(inner) > 0 {
			inners = append(inners, inner)
		}
		i = end
	}
	return step{inners: inners}
}

// execCommand reads the command of a find -exec from args[i] up to its `;`
// or `{} +`; it returns the command and the index of its terminator.
func execCommand(args []arg, i int) ([]arg, int) {
	var cmd []arg
	for ; i < len(args); i++ {
		a := args[i]
		if !a.dyn && a.text == ";" {
			return cmd, i
		}
		if !a.dyn && a.text == "+" && len(cmd) > 0 && cmd[len(cmd)-1].text == "{}" {
			cmd[len(cmd)-1].multi = true
			return cmd, i
		}
		if !a.dyn && strings.Contains(a.text, "{}") {
			a.dyn = true
		}
		cmd = append(cmd, a)
	}
	return cmd, i
}

// boxStep reads busybox or toybox: APPLET ARGS runs the applet, a shell
// among shells.
func boxStep(shells ...string) handler {
	return func(c *checker, u *unit, args []arg) step {
		switch {
		case len(args) < 2 || (!args[1].dyn && strings.HasPrefix(args[1].text, "-")):
			return step{}
		case args[1].dyn:
			return step{opaque: reasonDynamicName}
		}
		for _, s := range shells {
			if args[1].text == s {
				st := shellStep(c, u, args[1:])
				st.shell = aliasShell // ash, whatever its name
				return st
			}
		}
		return step{inners: [][]arg{args[1:]}}
	}
}

// skipWord notes that a word is a script, checked as one, not as quoted
// code.
func (c *checker) skipWord(a arg) {
	if a.word == nil {
		return
	}
	if c.skip == nil {
		c.skip = map[*syntax.Word]bool{}
	}
	c.skip[a.word] = true
}

// skipHeredoc notes that a here-document is a shell's script.
func (c *checker) skipHeredoc(r *syntax.Redirect) {
	if c.skipRedir == nil {
		c.skipRedir = map[*syntax.Redirect]bool{}
	}
	c.skipRedir[r] = true
}
