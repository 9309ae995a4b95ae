package policy

import (
	"slices"
	"strings"
	"sync"
)

// readOnlyCheck says whether a read-only command's static arguments keep
// it read-only; nil means it always is (docs/spec.md §9.4).
type readOnlyCheck func(args []string) bool

var readOnlyCommands = sync.OnceValue(func() map[string]readOnlyCheck {
	return map[string]readOnlyCheck{
		"cd": nil, "pushd": nil, "popd": nil, ":": nil, "sleep": nil, "ls": nil, "cat": nil,
		"head": nil, "tail": nil, "wc": nil, "pwd": nil, "echo": nil, "true": nil, "false": nil,
		"which": nil, "type": nil, "stat": nil, "du": nil, "df": nil, "diff": nil, "cmp": nil,
		"grep": nil, "egrep": nil, "fgrep": nil, "cut": nil, "tr": nil, "basename": nil,
		"dirname": nil, "realpath": nil, "readlink": nil, "uname": nil, "id": nil, "whoami": nil,
		"test":     without(exact("-v"), exact("-R")),
		"[":        without(exact("-v"), exact("-R")),
		"printf":   without(prefix("-v")),
		"file":     without(cluster('C'), long("--compile")),
		"rg":       without(prefix("--pre"), prefix("--hostname-bin"), cluster('z'), prefix("--search-zip")),
		"find":     without(prefix("-exec"), prefix("-ok"), exact("-delete"), prefix("-fprint"), exact("-fls")),
		"sort":     without(prefix("-o"), cluster('o'), long("--output"), long("--compress-program")),
		"uniq":     uniqReadOnly,
		"date":     without(cluster('s'), long("--set")),
		"env":      func([]string) bool { return true }, // reached only with no command and no -S
		"printenv": func([]string) bool { return true },
		"git":      gitReadOnly,
	}
})

// readOnly reports whether a command counts as allowed as a built-in
// read-only one: the list is on, the name is written without a `/`, no
// redirection writes, and a command with conditions has no dynamic
// argument and meets them.
func (c *checker) readOnly(args []arg, writes bool) bool {
	if !c.p.cfg.ReadOnly || writes || args[0].dyn {
		return false
	}
	check, ok := readOnlyCommands()[args[0].text]
	if !ok {
		return false
	}
	if check == nil {
		return true
	}
	texts := make([]string, 0, len(args)-1)
	for _, a := range args[1:] {
		if a.dyn {
			return false
		}
		texts = append(texts, a.text)
	}
	return check(texts)
}

// argTest is a property of one argument that takes read-only away.
type argTest func(string) bool

// without is the check "no argument has any of these properties".
func without(tests ...argTest) readOnlyCheck {
	return func(args []string) bool {
		for _, a := range args {
			for _, t := range tests {
				if t(a) {
					return false
				}
			}
		}
		return true
	}
}

func exact(s string) argTest  { return func(a string) bool { return a == s } }
func prefix(s string) argTest { return func(a string) bool { return strings.HasPrefix(a, s) } }

// cluster matches a cluster of short options holding c (-nro holds o).
func cluster(c byte) argTest {
	return func(a string) bool {
		return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a, c) > 0
	}
}

// long matches a long option, also abbreviated as getopt_long allows
// (--out for --output), with or without a value.
func long(opt string) argTest {
	return func(a string) bool {
		name, _, _ := strings.Cut(a, "=")
		return strings.HasPrefix(a, opt) || (len(name) > 2 && strings.HasPrefix(opt, name))
	}
}

// uniqReadOnly: uniq's second operand is an output file.
func uniqReadOnly(args []string) bool {
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands += len(args) - i - 1
			i = len(args)
		case a == "-f" || a == "-s" || a == "-w" || a == "--skip-fields" || a == "--skip-chars" || a == "--check-chars":
			i++
		case len(a) > 1 && a[0] == '-':
		default:
			operands++
		}
	}
	return operands <= 1
}

// gitReadOnly: a few subcommands that only read, none of the options that
// run programs or write files, and only the global options that do neither.
func gitReadOnly(args []string) bool {
	i := 0
	for i < len(args) {
		switch args[i] {
		case "-C":
			i += 2
			continue
		case "--no-pager", "--no-optional-locks":
			i++
			continue
		}
		break
	}
	if i >= len(args) || !slices.Contains(gitReadOnlySubcommands, args[i]) {
		return false
	}
	return gitSafeArgs(args)
}

var gitReadOnlySubcommands = []string{"status", "log", "diff", "show", "blame", "rev-parse", "ls-files"}

// gitSafeArgs refuses the options that run programs or write files.
var gitSafeArgs = without(prefix("-c"), long("--config-env"), long("--exec-path"), long("--output"),
	long("--ext-diff"), long("--textconv"), long("--exec"))
