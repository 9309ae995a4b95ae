package policy

import (
	"strings"
	"sync"
)

// Tools with subcommands take global options before the subcommand:
// `git -C . push` pushes, yet a rule `git push *` names `git push`. Deny
// and ask rules are therefore matched also against the words with those
// options taken out (docs/spec.md §9.3 "Global options"). Allow rules are
// not: a global option may change what the subcommand does (`git -c
// core.pager=…`), so `git status` does not allow `git -c … status`. A
// subcommand's own program (git-push, docker-compose) is read as the tool
// and its subcommand too.

// globalSpec is a tool's global options. Options not listed may take the
// next word or not: both readings are tried, and a rule that matches only
// one of them may match (an ask, not a deny).
type globalSpec struct {
	flags   map[string]bool // take no value
	values  map[string]bool // take the next word, or =VALUE when long
	plusArg bool            // a first word +NAME is no subcommand (rustup's `cargo +nightly`)
}

// alt is a level's words without its global options.
type alt struct {
	args []arg
	may  bool // one of several readings: a match may match
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// globalSpecs are the tools whose global options are read (docs/spec.md
// §9.3). go has one, -C DIR (also -C=DIR, --C), first on the line.
var globalSpecs = sync.OnceValue(func() map[string]*globalSpec {
	return map[string]*globalSpec{
		"git": {
			flags: set(`-p --paginate -P --no-pager --no-replace-objects --no-lazy-fetch --no-optional-locks
				--no-advice --bare --literal-pathspecs --no-literal-pathspecs --glob-pathspecs --noglob-pathspecs
				--icase-pathspecs --html-path --man-path --info-path --exec-path -v --version -h --help`),
			values: set(`-C -c --git-dir --work-tree --namespace --super-prefix --config-env --attr-source
				--shallow-file --list-cmds`)},
		"docker": {flags: set(`-D --debug --tls --tlsverify`),
			values: set(`--config -c --context -H --host -l --log-level --tlscacert --tlscert --tlskey`)},
		"podman": {flags: set(`-D --debug --remote -r --syslog --trace --noout`),
			values: set(`--config -c --connection -H --host --url --identity --log-level --root --runroot
				--storage-driver --storage-opt --cgroup-manager --events-backend --runtime --tmpdir`)},
		"kubectl": {flags: set(`--insecure-skip-tls-verify --match-server-version --warnings-as-errors
				--disable-compression`),
			values: set(`--kubeconfig --context -n --namespace --cluster --user -s --server --token --as
				--as-group --as-uid --cache-dir --certificate-authority --client-certificate --client-key
				--password --username --profile --profile-output --request-timeout --tls-server-name -v --v
				--vmodule --log-flush-frequency`)},
		"npm": {flags: set(`-g --global -D -S -E -O -B -y -q -s -d --yes --no --silent --quiet --verbose
				--json --dry-run --force -f --offline --prefer-offline --prefer-online --ignore-scripts`),
			values: set(`--prefix -C --registry --cache --userconfig --globalconfig --loglevel --tag --otp
				-w --workspace --script-shell --node-options --scope`)},
		"go": {values: set(`-C --C`)},
		"cargo": {plusArg: true,
			flags:  set(`-v -vv --verbose -q --quiet --locked --offline --frozen --list -V --version -h --help`),
			values: set(`--color -C --config -Z --explain`)},
	}
})

// maxAlts bounds the readings of one command's global options.
const maxAlts = 16

// subcommandPrograms are the programs that are a tool's subcommand: git
// runs `git push` as git-push, which may also be run by its path.
var subcommandPrograms = map[string]string{"git-": "git", "docker-": "docker"}

// globalAlts returns the readings of a command's words with its global
// options taken out, nil when it has none or is not such a tool.
func globalAlts(args []arg) []alt {
	if len(args) < 1 || args[0].dyn {
		return nil
	}
	name := base(args[0].text)
	for prefix, tool := range subcommandPrograms {
		if sub, ok := strings.CutPrefix(name, prefix); ok && sub != "" {
			words := append([]arg{static(tool), static(sub)}, args[1:]...)
			return append([]alt{{args: words}}, globalAlts(words)...)
		}
	}
	sp := globalSpecs()[name]
	if sp == nil || len(args) < 2 {
		return nil
	}
	var out []alt
	sp.readings(args, 1, false, &out)
	return out
}

// readings follows the options from args[i] to every place the
// subcommand may start; ambiguous says a reading took a guess.
func (sp *globalSpec) readings(args []arg, i int, ambiguous bool, out *[]alt) {
	for ; i < len(args) && len(*out) < maxAlts; i++ {
		a := args[i]
		if a.dyn {
			// Any word: the subcommand, an option alone, or one taking
			// the next word.
			sp.add(args, i, true, out)
			sp.readings(args, i+1, true, out)
			if i+1 < len(args) {
				sp.readings(args, i+2, true, out)
			}
			return
		}
		t := a.text
		switch {
		case i == 1 && sp.plusArg && strings.HasPrefix(t, "+"):
			continue
		case t == "--":
			sp.add(args, i+1, ambiguous, out)
			return
		case !strings.HasPrefix(t, "-") || t == "-":
			sp.add(args, i, ambiguous, out)
			return
		}
		name, _, hasValue := strings.Cut(t, "=")
		switch {
		case sp.flags[name] || hasValue:
		case sp.values[name]:
			i++
		default:
			sp.readings(args, i+2, true, out) // it took the next word
			ambiguous = true                  // or it did not
		}
	}
}

// add records the reading whose subcommand starts at args[i], unless it
// is the command as written.
func (sp *globalSpec) add(args []arg, i int, ambiguous bool, out *[]alt) {
	if i <= 1 || i > len(args) || len(*out) >= maxAlts {
		return
	}
	words := make([]arg, 0, 1+len(args)-i)
	words = append(append(words, args[0]), args[i:]...)
	*out = append(*out, alt{args: words, may: ambiguous})
}
