package policy

import "testing"

// The second review of the policy (issue 25) got a denied program or a
// write through with no ask in these ways, each run for real against the
// policy of parityPolicy. Every case here failed before its fix, and runs
// under real bash too (run's parity check): the policy must see each
// program bash executes, or say it cannot.

// Values evaluated as arithmetic: bash evaluates a variable's value as an
// expression, and a subscript there runs command substitutions.
func TestBypassArithmetic(t *testing.T) {
	set := `p="a[$"; q="${p}(rm -f v)]"; `
	run(t, parityPolicy(t), []tcase{
		{set + `(( q ))`, Ask, opaque("(( q ))")},
		{set + `echo $((q))`, Ask, opaque("$((q))")},
		{set + `[[ $q -eq 0 ]]`, Ask, opaque("[[ $q -eq 0 ]]")},
		{set + `[[ -v $q ]]`, Ask, opaque("[[ -v $q ]]")},
		{set + `echo ${!q}`, Ask, opaque("${!q}")},
		{set + `a=(1); echo ${a[q]}`, Ask, opaque("${a[q]}")},
		{set + `a[q]=1`, Ask, opaque("a[q]=1")},
		{set + `let q`, Ask, opaque("let q")},
		{set + `declare -i n=q`, Ask, opaque("declare -i n=q")},
		{set + "cat <<EOF\n$((q))\nEOF", Ask, opaque("$((q))")},
		{`y=$(printf "a[\x24(rm -f v)]"); (( y ))`, Ask, opaque("(( y ))")},
		{`read y; (( y ))`, Ask, opaque("(( y ))")},
		{set + `test -v "$q"`, Ask, opaque(`test -v "$q"`)},
		{set + `x=abc; echo ${x:q}`, Ask, opaque("${x:q}")},
		{set + `declare -i n; n=$q`, Ask, opaque("n=$q")},
		{set + `printf -v "$q" x`, Ask, opaque(`printf -v "$q" x`)},
		{set + `for ((i=q; i<1; i++)); do :; done`, Ask, opaque("i=q")},
		// The quoted code is found first; the evaluation is a part too.
		{`echo 'a[$(rm -f v)]' >/dev/null; (( $_ ))`, Ask, mayDeny("rm -f v", "rm *")},
		{`echo "$(printf 'a[\x24(rm -f v)]')" >/dev/null; (( $_ ))`, Ask, opaque("(( $_ ))")},
		{`f() { (( $1 )); }; f 'a[$(rm -f v)]'`, Ask, mayDeny("rm -f v", "rm *")},
		{`f() { (( $1 )); }; f "$(printf 'a[\x24(rm -f v)]')"`, Ask, opaque("(( $1 ))")},
		{`(( $(printf 'a[\x24(rm -f v)]') ))`, Ask, opaque(`(( $(printf 'a[\x24(rm -f v)]') ))`)},
		{`declare -n r=q; q=$(printf 'a[\x24(rm -f v)]'); (( r ))`, Ask, opaque("(( r ))")},
		// Integers stay readable: literals, arithmetic results, the
		// shell's own counters.
		{`i=0; n=3; while (( i < n )); do i=$((i+1)); done`, Allow, ""},
		{`for i in 1 2 3; do echo $((i * 2)); done`, Allow, ""},
		{`for ((i=0; i<3; i++)); do echo "${a[i]}"; done`, Allow, ""},
		{`[[ $# -eq 0 ]] && echo $((RANDOM % 6))`, Allow, ""},
		{`x=hello; echo ${x:1:3}`, Allow, ""},
	})
}

// Prompt expansion runs command substitutions in a value.
func TestBypassPromptExpansion(t *testing.T) {
	run(t, parityPolicy(t), []tcase{
		{`x='\044(rm -f v)'; echo ${x@P}`, Ask, opaque("${x@P}")},
		{`echo ${PS1@P}`, Allow, ""},
	})
}

// ${NAME:=…} and ${NAME=…} assign, and a bare export is a change too.
func TestBypassAssignByExpansion(t *testing.T) {
	run(t, parityPolicy(t), []tcase{
		{`: ${BASH_CMDS[cat]:=/bin/bash}; cat -c "rm -f v"`, Ask, opaque(": ${BASH_CMDS[cat]:=/bin/bash}")},
		{`echo ${BASH_CMDS[ls]=/bin/rm}; ls -f v`, Ask, opaque("echo ${BASH_CMDS[ls]=/bin/rm}")},
		{`: ${BASH_ENV:=./evil.sh}; export BASH_ENV; bash -c ls`, Ask, opaque(": ${BASH_ENV:=./evil.sh}")},
		{": ${POSIXLY_CORRECT:=1} ${BASH_ALIASES[ls]:='rm -f v;:'}\nls", Ask, opaque(": ${POSIXLY_CORRECT:=1} ${BASH_ALIASES[ls]:='rm -f v;:'}")},
		{"cat > f <<EOF\n${PATH:=.}\nEOF\nls", Ask, opaque("cat > f <<EOF ${PATH:=.} EOF")},
		{`echo hi > ${IFS:=x}`, Ask, opaque("echo hi > ${IFS:=x}")},
		{`export BASH_ENV`, Ask, opaque("export BASH_ENV")},
		{`declare -x PATH`, Ask, opaque("declare -x PATH")},
		{`readonly POSIXLY_CORRECT`, Ask, opaque("readonly POSIXLY_CORRECT")},
		{`echo ${HOME:-/tmp}`, Allow, ""},
		{`echo ${x:=1}`, Ask, noRule("echo ${x:=1}")}, // an assignment, like read's
	})
}

// A nameref declared in one statement and assigned in a later one.
func TestBypassNameref(t *testing.T) {
	run(t, parityPolicy(t), []tcase{
		{`declare -n r; r=BASH_CMDS[ls]; r=/bin/rm; ls -f v`, Ask, opaque("r=BASH_CMDS[ls]")},
		{`declare -n r; r=PATH; r=/tmp; ls`, Ask, opaque("r=PATH")},
		{`r=PATH; declare -n r; r=/tmp; ls`, Ask, opaque("r=PATH")},
		{`local -n r; read r; r=/bin/rm`, Ask, opaque("read r")},
		{`declare -n r=x; r=1; echo $x`, Allow, ""},
	})
}

// Variables that make a later program run code, exported in an earlier
// statement.
func TestBypassExportedProgramVariables(t *testing.T) {
	run(t, parityPolicy(t), []tcase{
		{`export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -f v; false'; git status`, Ask,
			opaque("export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -f v; false'")},
		{`export GIT_EXTERNAL_DIFF='rm -f v; :'; git diff`, Ask, opaque("export GIT_EXTERNAL_DIFF='rm -f v; :'")},
		{`PAGER='rm -f v'; export PAGER; git log`, Ask, opaque("PAGER='rm -f v'")},
		{`declare -x LESSOPEN='|rm -f v %s'`, Ask, opaque("declare -x LESSOPEN='|rm -f v %s'")},
		{`export EDITOR=vi`, Ask, opaque("export EDITOR=vi")},
		{`export NODE_ENV=test; npm test`, Allow, ""},
	})
}

// Brace expansion as bash does it: the outer braces of a word whose first
// pair is no expansion.
func TestBypassBraces(t *testing.T) {
	run(t, parityPolicy(t), []tcase{
		{`find {x},.,-name,v,-exec,rm,-f,{},\;}`, Deny, denied("rm -f {}", "rm *")},
		{`sort {-t},-o/tmp/sortout} f.txt`, Ask, noRule("sort -t} -o/tmp/sortout f.txt")},
		{`echo {a,b}{}`, Allow, ""},
		// dash, Debian's sh, expands no braces: under sh a word braces
		// would change may be either (found by FuzzExecParity).
		{`sh -c 'rm -f v {1..3}'`, Deny, denied("rm -f v {1..3}", "rm *")},
		{`bash -c 'rm -f v {1..3}'`, Deny, denied("rm -f v 1 2 3", "rm *")},
		{`sh -c 'echo {a,b}'`, Allow, ""},
		// Other things dash reads otherwise (found by FuzzExecParity):
		// $'…' is $ and a quoted string, (( )) a subshell, time a program.
		{`sh -c "rm -f v \$'\\x41'"`, Deny, denied(`rm -f v $'\x41'`, "rm *")},
		{`sh -c '((ls))'`, Ask, opaque("((ls))")},
		{`sh -c 'time -p rm -f v'`, Deny, denied("rm -f v", "rm *")},
		// bash's brace expansion tracks quotes itself, and a quote in a
		// double-quoted backquote or ${…} ends the outer quotes for it.
		{": \"`find . -name v \"{-exec,x}\" rm -f v \";\"`\"", Ask, opaque("\"`find . -name v \"{-exec,x}\" rm -f v \";\"`\"")},
		{`find . -name v "${x:-"{-exec,rm,-f,{},;}"}"`, Ask, opaque(`"${x:-"{-exec,rm,-f,{},;}"}"`)},
		{`echo "$(echo {a,b})" "${HOME}"{x,y}`, Allow, ""},
	})
}

// Global options before the subcommand, the time keyword's `--`, and
// programs whose job is to run another, under default allow.
func TestBypassWrappers(t *testing.T) {
	p := pol(t, Config{Default: Allow, ReadOnly: true, Home: jailHome},
		"allow:npm test", "allow:go test *",
		"deny:rm -rf *", "deny:rm *", "deny:curl *", "deny:git push *", "deny:sudo *")
	run(t, p, []tcase{
		{`git -C . push origin HEAD:main`, Deny, denied("git -C . push origin HEAD:main", "git push *")},
		{`git --no-pager push`, Deny, denied("git --no-pager push", "git push *")},
		{`git -c x=y push`, Deny, denied("git -c x=y push", "git push *")},
		{`git --git-dir .git --work-tree=. push`, Deny, denied("git --git-dir .git --work-tree=. push", "git push *")},
		{`time -- rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`time -p -- rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`time -- ! rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`time -- rm -f v | cat`, Deny, denied("rm -f v", "rm *")},
		{`time --`, Allow, ""},
		{`true | time -o /dev/null rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`coproc time -o /dev/null rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`true |& time -o /dev/null rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`q='a[$'; q+='(rm -f v)]'; time -- [[ $q -eq 0 ]]`, Ask, opaque("[[ $q -eq 0 ]]")},
		{`exec -a sh bash -c $'alias e=eval\ne "rm -f v"'`, Ask, opaque("alias e=eval")},
		{`jobs -x rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`compgen -C "rm -f v" x`, Deny, denied(`rm -f v "$1" "$2" "$3"`, "rm *")},
		{`setarch x86_64 rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`x86_64 -R rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`prlimit --nofile=64 rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`unbuffer rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`runuser -u nobody -- rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`sg users -c 'rm -f v'`, Deny, denied("rm -f v", "rm *")},
		{`systemd-run --user rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`parallel rm ::: v`, Deny, denied("rm $PARALLEL_ARGS", "rm *")},
		{`sem rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`setpriv --reuid=1000 rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`strace -f -o /dev/null rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`newgrp users`, Ask, opaque("newgrp users")},
		{`setarch x86_64`, Ask, opaque("setarch x86_64")},
	})
}

// Global options are read by each tool's own syntax; an option a tool's
// list does not have may take the next word or not, so a rule then may
// match (docs/spec.md §9.3 "Global options").
func TestGlobalOptions(t *testing.T) {
	p := pol(t, Config{Default: Allow, Home: jailHome},
		"ask:npm publish *", "deny:docker run *", "deny:kubectl delete *", "deny:git push *", "deny:cargo publish *",
		"deny:go run *")
	run(t, p, []tcase{
		{`npm --registry x publish`, Ask, askRule("npm --registry x publish", "npm publish *")},
		{`npm -g --dry-run publish`, Ask, askRule("npm -g --dry-run publish", "npm publish *")},
		{`npm --unknown x publish`, Ask, mayAsk("npm --unknown x publish", "npm publish *")},
		{`npm --registry=x publish`, Ask, askRule("npm --registry=x publish", "npm publish *")},
		{`docker -H unix:///x --debug run img`, Deny, denied("docker -H unix:///x --debug run img", "docker run *")},
		{`docker --context=ci run img`, Deny, denied("docker --context=ci run img", "docker run *")},
		{`kubectl -n prod --context c delete pod x`, Deny, denied("kubectl -n prod --context c delete pod x", "kubectl delete *")},
		{`cargo +nightly -v publish`, Deny, denied("cargo +nightly -v publish", "cargo publish *")},
		{`git $OPTS push`, Ask, mayDeny("git $OPTS push", "git push *")},
		{`git -c alias.p='!rm -f v' p`, Ask, opaque("git -c alias.p=!rm -f v p")},
		{`git --config-env=alias.x=E x`, Ask, opaque("git --config-env=alias.x=E x")},
		{`git --bogus push`, Ask, mayDeny("git --bogus push", "git push *")}, // an option git may take
		{`git --no-literal-pathspecs push origin HEAD:main`, Deny, denied("git --no-literal-pathspecs push origin HEAD:main", "git push *")},
		{`/usr/lib/git-core/git-push origin HEAD:main`, Deny, denied("/usr/lib/git-core/git-push origin HEAD:main", "git push *")},
		{`docker-run img`, Deny, denied("docker-run img", "docker run *")},
		{`git -C push status`, Allow, ""},
		{`go -C sub run .`, Deny, denied("go -C sub run .", "go run *")},
		{`go -C=sub run .`, Deny, denied("go -C=sub run .", "go run *")},
		{`go -C run build`, Allow, ""},
		{`go --C sub run .`, Deny, denied("go --C sub run .", "go run *")},
		{`npm test`, Allow, ""},
	})
}

// Here-documents bash ends elsewhere than the parser: what follows the
// body is commands to bash (issue 25 review).
func TestBypassHeredocEnds(t *testing.T) {
	run(t, parityPolicy(t), []tcase{
		{"cat <<EOF\nx\nEO\\\nF\nrm -f v\nEOF", Ask, opaque("<<EOF")},
		{"cat <<-EOF\nx\n\tEO\\\nF\nrm -f v\nEOF", Ask, opaque("<<-EOF")},
		{"echo $(cat <<EOF\nx\nEOF)\nrm -f v <<':'\nEOF\n)\n:", Ask, opaque("<<EOF")},
		{"cat <<$'E\\x4fF'\nx\nEOF\nrm -f v\nE\\x4fF", Ask, opaque("<<$'E\\x4fF'")},
		{"cat <<'EOF'\nEO\\\nF\nEOF", Allow, ""}, // a quoted delimiter joins no lines
		{"cat <<EOF\nline one \\\nline two\nEOF", Allow, ""},
	})
}

// The review of this round's fixes (issue 25) got these through too.
func TestBypassReview(t *testing.T) {
	run(t, parityPolicy(t), []tcase{
		// An integer declaration later, or never run, keeps a string.
		{`x='a[$'; x+='(rm -f v)]'; echo $(( x )); false && declare -i x`, Ask, opaque("$(( x ))")},
		{`x='\044(rm -f v)'; echo ${x@P}; false && declare -i x`, Ask, opaque("${x@P}")},
		// for x; loops over the positional parameters.
		{`bash -c 'for x; do echo ${x@P}; done' _ '\044(rm -f v)'`, Ask, opaque("${x@P}")},
		// An indirection through an integer names a positional parameter.
		{`bash -c 'x=0; echo ${!x@P}' '\044(rm -f v)'`, Ask, opaque("${!x@P}")},
		{`x=1; echo $(( ${!x} ))`, Ask, opaque("$(( ${!x} ))")},
		// npm reads npm_config_ in any case.
		{`export Npm_config_node_options=--require=./x.js; npm test`, Ask, opaque("export Npm_config_node_options=--require=./x.js")},
		// strace -o |CMD runs CMD; -E sets the traced program's environment.
		{`strace -o '|rm -f v' npm test`, Ask, opaque("strace -o |rm -f v npm test")},
		{`strace -E NODE_OPTIONS=--require=./x.js npm test`, Ask, opaque("strace -E NODE_OPTIONS=--require=./x.js npm test")},
		// Programs that run another.
		{`choom -n 0 -- rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`/lib64/ld-linux-x86-64.so.2 /bin/rm -f v`, Deny, denied("/bin/rm -f v", "rm *")},
		{`ld.so --preload x.so /bin/ls`, Ask, opaque("ld.so --preload x.so /bin/ls")},
		{`valgrind -q --leak-check=full rm -f v`, Deny, denied("rm -f v", "rm *")},
		{`gdb -batch -ex run --args rm -f v`, Ask, opaque("gdb -batch -ex run --args rm -f v")},
		{`perf stat -o /dev/null rm -f v`, Ask, opaque("perf stat -o /dev/null rm -f v")},
		{`tmux -C new-session -d "rm -f v"`, Ask, opaque("tmux -C new-session -d rm -f v")},
		{`firejail --quiet rm -f v`, Ask, opaque("firejail --quiet rm -f v")},
		// Stdin by another name.
		{"bash /dev/./stdin <<'EOF'\nrm -f v\nEOF", Ask, opaque("bash /dev/./stdin")},
		{"source //dev/stdin <<'EOF'\nrm -f v\nEOF", Ask, opaque("source //dev/stdin")},
		{"cd /dev && bash stdin <<'EOF'\nrm -f v\nEOF", Ask, opaque("bash stdin")},
	})
}
