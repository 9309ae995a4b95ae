package policy

import (
	"strings"
	"testing"
)

// std is the policy most tables use: default ask, the read-only list on.
func std(t testing.TB) *Policy {
	return pol(t, Config{Default: Ask, ReadOnly: true, Home: "/home/u"},
		"deny:rm -rf *", "deny:curl*", "deny:git push --force*",
		"ask:git push:*", "ask:npm publish",
		"allow:git status", "allow:npm run *", "allow:go test *", "allow:make build")
}

// rmD is the deny text of `rm -rf /`, which most tables hide somewhere.
var rmD = denied("rm -rf /", "rm -rf *")

// Every place a command can hide in is found (docs/spec.md §9.3).
func TestCompositions(t *testing.T) {
	run(t, std(t), []tcase{
		{"ls; rm -rf /", Deny, rmD},
		{"ls && rm -rf /", Deny, rmD},
		{"false || rm -rf /", Deny, rmD},
		{"ls | rm -rf /", Deny, rmD},
		{"ls |& rm -rf /", Deny, rmD},
		{"rm -rf / &", Deny, rmD},
		{"ls & rm -rf /", Deny, rmD},
		{"ls\nrm -rf /", Deny, rmD},
		{"ls \\\n; rm -rf /", Deny, rmD},
		{"(rm -rf /)", Deny, rmD},
		{"((rm -rf /))", Ask, "`((rm -rf /))` cannot be checked before it runs"},
		{"( (rm -rf /) )", Deny, rmD},
		{"{ rm -rf /; }", Deny, rmD},
		{"if true; then rm -rf /; fi", Deny, rmD},
		{"if rm -rf /; then :; fi", Deny, rmD},
		{"if false; then :; elif true; then :; else rm -rf /; fi", Deny, rmD},
		{"while true; do rm -rf /; done", Deny, rmD},
		{"until rm -rf /; do :; done", Deny, rmD},
		{"for f in a b; do rm -rf /; done", Deny, rmD},
		{"for ((i=0; i<1; i++)); do rm -rf /; done", Deny, rmD},
		{"case x in x) rm -rf /;; esac", Deny, rmD},
		{"case x in y) ;; *) rm -rf / ;& esac", Deny, rmD},
		{"select x in a; do rm -rf /; done", Deny, rmD},
		{"f() { rm -rf /; }", Deny, rmD},
		{"function f { rm -rf /; }", Deny, rmD},
		{"f() ( rm -rf / )", Deny, rmD},
		{"time rm -rf /", Deny, rmD},
		{"time -p rm -rf /", Deny, rmD},
		{"! rm -rf /", Deny, rmD},
		{"coproc rm -rf /", Deny, rmD},
		{"coproc C { rm -rf /; }", Deny, rmD},
		{"echo $(rm -rf /)", Deny, rmD},
		{"echo `rm -rf /`", Deny, rmD},
		{"echo \"$(rm -rf /)\"", Deny, rmD},
		{"diff <(rm -rf /) b", Deny, rmD},
		{"ls | tee >(rm -rf /)", Deny, rmD},
		{"x=$(rm -rf /)", Deny, rmD},
		{"x=$(rm -rf /) ls", Deny, rmD},
		{"export x=$(rm -rf /)", Deny, rmD},
		{"local x=`rm -rf /`", Deny, rmD},
		{"a=(1 $(rm -rf /))", Deny, rmD},
		{"echo hi > $(rm -rf /)", Deny, rmD},
		{"cat < <(rm -rf /)", Deny, rmD},
		{"cat <<EOF\n$(rm -rf /)\nEOF", Deny, rmD},
		{"cat <<<$(rm -rf /)", Deny, rmD},
		{"[[ -n $(rm -rf /) ]]", Deny, rmD},
		{"[[ x == $(rm -rf /) ]]", Deny, rmD},
		{"(( $(rm -rf /) ))", Deny, rmD},
		{"echo $(( $(rm -rf /) + 1 ))", Deny, rmD},
		{"let x=$(rm -rf /)", Deny, rmD},
		{"for f in $(rm -rf /); do :; done", Deny, rmD},
		{"case $(rm -rf /) in *) ;; esac", Deny, rmD},
		{"case x in $(rm -rf /)) ;; esac", Deny, rmD},
		{"echo ${x:-$(rm -rf /)}", Deny, rmD},
		{"echo ${x/$(rm -rf /)/y}", Deny, rmD},
		{"echo ${a[$(rm -rf /)]}", Deny, rmD},
		{"echo \"$(echo \"$(rm -rf /)\")\"", Deny, rmD},
		{"true && { false || (ls | rm -rf /); }", Deny, rmD},
		{"{ ls; } > $(rm -rf /)", Deny, rmD},
		// The same places, holding only what is allowed.
		{"ls; pwd && echo hi || true", Allow, ""},
		{"ls | grep x | wc -l", Allow, ""},
		{"(cd src && ls) > /dev/null", Allow, ""},
		{"for f in *.go; do wc -l \"$f\"; done", Allow, ""},
		{"if [ -f x ]; then cat x; fi", Allow, ""},
		{"echo $(git status)", Allow, ""},
		{"git status | head -5 2>&1", Allow, ""},
		{"{ ls; pwd; } 2>/dev/null", Allow, ""},
		{"f() { ls; }; f", Ask, noRule("f")},
		{"while read l; do echo \"$l\"; done < f", Ask, noRule("read l")},
		{"", Ask, noRule("")},
		{"# only a comment", Ask, noRule("# only a comment")},
	})
}

// Quoting, expansion and paths do not hide a command's name or words.
func TestQuotingTricks(t *testing.T) {
	run(t, std(t), []tcase{
		{`"r"m -rf /`, Deny, rmD},
		{`r\m -rf /`, Deny, rmD},
		{`'rm' -rf /`, Deny, rmD},
		{`$'\x72m' -rf /`, Deny, rmD},
		{`$'\162m' -rf /`, Deny, rmD},
		{`$'\u0072m' -rf /`, Deny, rmD},
		{`$"rm" -rf /`, Deny, rmD},
		{`r""m -rf /`, Deny, rmD},
		{`{rm,-rf,/}`, Deny, rmD},
		{`\rm -rf /`, Deny, rmD},
		{`rm "-rf" '/'`, Deny, rmD},
		{`rm -r"f" /`, Deny, rmD},
		{`rm -rf /{,}`, Deny, denied("rm -rf / /", "rm -rf *")},
		{`{,} rm -rf /`, Deny, rmD},
		{`rm -rf {a..c}`, Deny, denied("rm -rf a b c", "rm -rf *")},
		{`/bin/rm -rf /`, Deny, denied("/bin/rm -rf /", "rm -rf *")},
		{`./rm -rf /`, Deny, denied("./rm -rf /", "rm -rf *")},
		{`/usr/bin/../bin/rm -rf x`, Deny, denied("/usr/bin/../bin/rm -rf x", "rm -rf *")},
		{`rm -rf ~`, Deny, denied("rm -rf /home/u", "rm -rf *")},
		{`rm -rf ~/x`, Deny, denied("rm -rf /home/u/x", "rm -rf *")},
		{`rm -rf ~root`, Deny, denied("rm -rf ~root", "rm -rf *")},
		{`rm -rf`, Deny, denied("rm -rf", "rm -rf *")},
		{`rm -fr /`, Ask, noRule("rm -fr /")},
		{`rm -r -f /`, Ask, noRule("rm -r -f /")},
		{`{r,}m -rf /`, Ask, noRule("rm m -rf /")},
		{`"rm -rf /"`, Ask, noRule("rm -rf /")},
		{`echo {1..300}`, Allow, ""},
		{`git sta"tus"`, Allow, ""},
		{`git status ''`, Allow, ""},
		{`G=1 git status`, Ask, noRule("G=1 git status")},
		{`LANG=C git status`, Allow, ""},
		{`LC_ALL=C TZ=UTC git status`, Allow, ""},
		{`NODE_ENV=production npm run build`, Allow, ""},
		{`CI=1 DEBUG=1 RUST_LOG=x RUST_BACKTRACE=1 NO_COLOR=1 FORCE_COLOR=0 TERM=dumb PYTHONUNBUFFERED=1 make build`, Allow, ""},
		{`c\url -s x`, Deny, denied("curl -s x", "curl*")},
		{`'/usr/bin/curl' x`, Deny, denied("/usr/bin/curl x", "curl*")},
		{`git push --for"ce"`, Deny, denied("git push --force", "git push --force*")},
		// A carriage return is part of a word to bash, whatever the parser
		// thinks: backslash-CR-LF does not continue the line.
		{"echo x\\\r\nrm -rf /", Deny, rmD},
		{"ls\r\nrm -rf /", Deny, rmD},
		{"bash -c $'echo x\\\\\\r\\nrm -rf /'", Deny, rmD},
		{"echo '$(echo x\\\r\nrm -rf /)'", Ask, mayDeny("rm -rf /", "rm -rf *")},
		{"cat <<EOF\r\nx\r\nEOF\r\nrm -rf /\n", Deny, rmD},
		{"rm\r -rf /", Ask, noRule("rm  -rf /")},
	})
}

// Wrappers run the command after their options and operands; the command
// is checked, and deny and ask rules see the wrapper whole too.
func TestWrappersDeny(t *testing.T) {
	run(t, std(t), []tcase{
		{"timeout 5 rm -rf /", Deny, rmD},
		{"timeout -s KILL -k 3 5 rm -rf /", Deny, rmD},
		{"timeout --signal=KILL 5 rm -rf /", Deny, rmD},
		{"timeout --sig KILL 5 rm -rf /", Deny, rmD},
		{"timeout --foreground --preserve-status 5 rm -rf /", Deny, rmD},
		{"nice rm -rf /", Deny, rmD},
		{"nice -n 10 rm -rf /", Deny, rmD},
		{"nice -10 rm -rf /", Deny, rmD},
		{"nice --adjustment=5 rm -rf /", Deny, rmD},
		{"nohup rm -rf /", Deny, rmD},
		{"stdbuf -oL rm -rf /", Deny, rmD},
		{"stdbuf -o L -e 0 rm -rf /", Deny, rmD},
		{"\\time -f %e rm -rf /", Deny, rmD},
		{"command time -p rm -rf /", Deny, rmD},
		{"/usr/bin/time -o t.txt rm -rf /", Deny, rmD},
		{"command rm -rf /", Deny, rmD},
		{"command -p rm -rf /", Deny, rmD},
		{"builtin exec rm -rf /", Deny, rmD},
		{"exec rm -rf /", Deny, rmD},
		{"exec -a foo rm -rf /", Deny, rmD},
		{"exec -c rm -rf /", Deny, rmD},
		{"env rm -rf /", Deny, rmD},
		{"env -i PATH=/bin rm -rf /", Deny, rmD},
		{"env -u HOME -C /tmp rm -rf /", Deny, rmD},
		{"env - rm -rf /", Deny, rmD},
		{"env -- rm -rf /", Deny, rmD},
		{"ionice -c 3 rm -rf /", Deny, rmD},
		{"ionice -c3 -n7 rm -rf /", Deny, rmD},
		{"taskset 0x1 rm -rf /", Deny, rmD},
		{"taskset -c 0,1 rm -rf /", Deny, rmD},
		{"chrt -f 10 rm -rf /", Deny, rmD},
		{"chrt --rr 5 rm -rf /", Deny, rmD},
		{"flock /tmp/lock rm -rf /", Deny, rmD},
		{"flock -w 5 -x /tmp/lock rm -rf /", Deny, rmD},
		{"flock /tmp/lock -c 'rm -rf /'", Deny, rmD},
		{"setsid -f rm -rf /", Deny, rmD},
		{"sudo rm -rf /", Deny, rmD},
		{"sudo -u root rm -rf /", Deny, rmD},
		{"sudo -u root -- rm -rf /", Deny, rmD},
		{"sudo --user=root -E rm -rf /", Deny, rmD},
		{"sudo FOO=1 rm -rf /", Deny, rmD},
		{`sudo -u "$U" rm -rf /`, Deny, rmD},
		{"sudo -s rm -rf /", Deny, rmD},
		{"sudo -i 'rm -rf /'", Deny, rmD},
		{"doas rm -rf /", Deny, rmD},
		{"doas -u root rm -rf /", Deny, rmD},
		{"su -c 'rm -rf /'", Deny, rmD},
		{"su root -c 'rm -rf /'", Deny, rmD},
		{"su - root -c 'rm -rf /'", Deny, rmD},
		{"su --command='rm -rf /' root", Deny, rmD},
		{"chroot /mnt rm -rf /", Deny, rmD},
		{"chroot --userspec=1:1 /mnt rm -rf /", Deny, rmD},
		{"unshare -r rm -rf /", Deny, rmD},
		{"unshare --mount-proc -f rm -rf /", Deny, rmD},
		{"nsenter -t 1 -m -u rm -rf /", Deny, rmD},
		{"nsenter --target 1 --mount rm -rf /", Deny, rmD},
		{"watch rm -rf /", Deny, rmD},
		{"watch -n 1 'rm -rf /'", Deny, rmD},
		{"watch -x rm -rf /", Deny, rmD},
		{"script -c 'rm -rf /'", Deny, rmD},
		{"script -q -c 'rm -rf /' /dev/null", Deny, rmD},
		{"busybox rm -rf /", Deny, rmD},
		{"toybox rm -rf /", Deny, rmD},
		{"sudo timeout 5 nice -n 1 env rm -rf /", Deny, rmD},
		{"timeout 5 sudo -u x nohup rm -rf /", Deny, rmD},
		{"env -S 'rm -rf /'", Deny, rmD},
		{"env -S'rm -rf' /", Deny, rmD},
		{"env --split-string='rm -rf /'", Deny, rmD},
		{"env -S 'rm -rf' /", Deny, rmD},
		// xargs adds the input; -I makes the words holding R dynamic.
		{"xargs rm -rf", Deny, denied("rm -rf", "rm -rf *")},
		{"find . | xargs rm -rf", Deny, denied("rm -rf", "rm -rf *")},
		{"xargs -0 -n1 rm -rf", Deny, denied("rm -rf", "rm -rf *")},
		{"xargs -I{} rm -rf {}", Deny, denied("rm -rf {}", "rm -rf *")},
		{"xargs -I % rm %", Ask, mayDeny("rm %", "rm -rf *")},
		{"xargs -i rm {}", Ask, mayDeny("rm {}", "rm -rf *")},
		{"xargs rm", Ask, mayDeny("rm", "rm -rf *")},
		{"xargs -I{} sh -c 'rm {}'", Ask, opaque("xargs -I{} sh -c rm {}")},
		// find -exec, -execdir, -ok, -okdir; {} is dynamic.
		{"find . -exec rm -rf {} \\;", Deny, denied("rm -rf {}", "rm -rf *")},
		{"find . -execdir rm -rf {} +", Deny, denied("rm -rf {}", "rm -rf *")},
		{"find / -ok rm -rf {} ';'", Deny, denied("rm -rf {}", "rm -rf *")},
		{"find . -name '*.o' -okdir rm -rf {} \\;", Deny, denied("rm -rf {}", "rm -rf *")},
		{"find . -exec echo {} \\; -exec rm -rf {} \\;", Deny, denied("rm -rf {}", "rm -rf *")},
		{"find . -exec rm {} \\;", Ask, mayDeny("rm {}", "rm -rf *")},
		{"find . -exec sh -c 'rm -rf /' \\;", Deny, rmD},
		{"find . -exec sh -c 'echo {}' \\;", Ask, opaque("find . -exec sh -c echo {} ;")},
	})
}

// What a wrapper does to a command's words when they cannot be read.
func TestWrappersOpaque(t *testing.T) {
	run(t, std(t), []tcase{
		{"timeout $T rm x", Ask, opaque("timeout $T rm x")},
		{"timeout --bogus 5 rm x", Ask, opaque("timeout --bogus 5 rm x")},
		{"timeout -Z 5 rm x", Ask, opaque("timeout -Z 5 rm x")},
		{"sudo $CMD", Ask, opaque("sudo $CMD")},
		{"sudo -- $CMD", Ask, mayDeny("$CMD", "rm -rf *")},
		{`sudo "$OPT" ls`, Ask, opaque(`sudo "$OPT" ls`)},
		{"xargs $OPTS rm", Ask, opaque("xargs $OPTS rm")},
		{`env "$V" ls`, Ask, opaque(`env "$V" ls`)},
		{"env -S 'rm $x'", Ask, opaque("env -S rm $x")},
		{`env -S 'r\m -rf /'`, Ask, opaque(`env -S r\m -rf /`)},
		{"env -S \"$X\"", Ask, opaque("env -S \"$X\"")},
		{"su", Ask, opaque("su")},
		{"su - root", Ask, opaque("su - root")},
		{"su $U -c x", Ask, opaque("su $U -c x")},
		{"su -s /usr/bin/python3 -c 'print(1)'", Ask, opaque("su -s /usr/bin/python3 -c print(1)")},
		{"sudo -s", Ask, opaque("sudo -s")},
		{"sudo -i", Ask, opaque("sudo -i")},
		{"doas -s", Ask, opaque("doas -s")},
		{"chroot /mnt", Ask, opaque("chroot /mnt")},
		{"unshare -r", Ask, opaque("unshare -r")},
		{"nsenter -t 1 -a", Ask, opaque("nsenter -t 1 -a")},
		{"script", Ask, opaque("script")},
		{"script out.log", Ask, opaque("script out.log")},
		{"exec -l bash", Ask, opaque("exec -l bash")},
		{"exec -a -sh sh -c ls", Ask, opaque("exec -a -sh sh -c ls")},
		{"watch $CMD", Ask, opaque("watch $CMD")},
		{"find . $X", Ask, opaque("find . $X")},
		{"find $D -name x", Ask, opaque("find $D -name x")},
		{`find "$D" -name x`, Ask, noRule(`find "$D" -name x`)},
		{"busybox $APPLET x", Ask, opaque("busybox $APPLET x")},
		{"ionice -p 1", Ask, noRule("ionice -p 1")},
		{"taskset -p 1", Ask, noRule("taskset -p 1")},
		{"chrt -p 1", Ask, noRule("chrt -p 1")},
		{"flock 9", Ask, noRule("flock 9")},
		{"command -v rm", Ask, noRule("command -v rm")},
		{"sudo -l", Ask, noRule("sudo -l")},
		{"nice", Ask, noRule("nice")},
	})
}

// For allowing, some wrappers pass the command through, others need an
// allow rule of their own.
func TestWrappersAllow(t *testing.T) {
	p := pol(t, Config{Default: Ask, ReadOnly: true},
		"allow:sudo *", "allow:npm test", "allow:xargs *", "allow:find *", "allow:watch *")
	run(t, p, []tcase{
		{"timeout 5 ls", Allow, ""},
		{"nice -n 5 nohup stdbuf -oL ls", Allow, ""},
		{"env LANG=C ls", Allow, ""},
		{"env FOO=1 ls", Ask, noRule("env FOO=1 ls")},
		{"env", Allow, ""},
		{"env -u HOME", Allow, ""},
		{"printenv HOME", Allow, ""},
		{"env -S ls", Allow, ""},
		{"sudo ls", Allow, ""},
		{"sudo npm test", Allow, ""},
		{"sudo npm install", Ask, noRule("npm install")},
		{"timeout 5 npm install", Ask, noRule("npm install")},
		{"doas ls", Ask, noRule("doas ls")},
		{"xargs grep x", Allow, ""},
		{"xargs", Allow, ""},
		{"find . -exec grep x {} \\;", Allow, ""},
		{"find . -exec grep x {} \\; -exec npm i \\;", Ask, noRule("npm i")},
		{"/usr/bin/timeout 5 ls", Ask, noRule("/usr/bin/timeout 5 ls")},
		{"bash -c 'ls'", Allow, ""},
		{"./bash -c ls", Ask, noRule("./bash -c ls")},
		{"sh -c 'npm test && ls'", Allow, ""},
		{"eval ls", Allow, ""},
		{"eval 'npm test'", Allow, ""},
		{"command ls", Allow, ""},
		{"builtin cd /tmp", Allow, ""},
		{"exec ls", Allow, ""},
		{"watch ls", Allow, ""},
		{"watch -x ls -l", Allow, ""},
		{"sudo -s ls", Allow, ""},
		{"flock /dev/null -c ls", Allow, ""},
		{"time ls", Allow, ""},
		{"busybox ls", Ask, noRule("busybox ls")},
		{"setsid -w chrt 1 taskset 1 ionice ls", Allow, ""},
		{"trap 'ls' EXIT", Allow, ""},
		{"alias ll='ls -l'", Allow, ""},
	})
}

// Shells and eval run their scripts, which are checked the same way.
func TestShells(t *testing.T) {
	cases := []tcase{
		{"bash -ec 'rm -rf /'", Deny, rmD},
		{"bash -xec 'rm -rf /'", Deny, rmD},
		{"bash -o pipefail -c 'rm -rf /'", Deny, rmD},
		{"bash -eo pipefail -c 'rm -rf /'", Deny, rmD},
		{"bash -c -- 'rm -rf /'", Deny, rmD},
		{"bash --norc --noprofile -c 'rm -rf /'", Deny, rmD},
		{"bash -c 'rm -rf /' bash x y", Deny, rmD},
		{"/bin/bash -c 'rm -rf /'", Deny, rmD},
		{"busybox sh -c 'rm -rf /'", Deny, rmD},
		{"busybox ash -c 'rm -rf /'", Deny, rmD},
		{"toybox sh -c 'rm -rf /'", Deny, rmD},
		{`bash -c "bash -c 'rm -rf /'"`, Deny, rmD},
		{`sh -c "sh -c \"sh -c 'rm -rf /'\""`, Deny, rmD},
		{"eval 'rm -rf /'", Deny, rmD},
		{"eval rm -rf /", Deny, rmD},
		{`eval "eval 'rm -rf /'"`, Deny, rmD},
		{"eval -- rm -rf /", Deny, rmD},
		{"builtin eval 'rm -rf /'", Deny, rmD},
		{"bash <<'EOF'\nls\nrm -rf /\nEOF", Deny, rmD},
		{"bash <<EOF\nrm -rf /\nEOF", Deny, rmD},
		{"bash <<< 'rm -rf /'", Deny, rmD},
		{"sudo bash -s <<'EOF'\nrm -rf /\nEOF", Deny, rmD},
		{"bash <<EOF\nls $(pwd)\nEOF", Ask, opaque("bash")},
		{"bash < script.sh", Ask, opaque("bash")},
		{"bash <<'EOF' < x\nrm -rf /\nEOF", Ask, opaque("bash")},
		{`eval "$x"`, Ask, opaque(`eval "$x"`)},
		{"eval rm $x", Ask, opaque("eval rm $x")},
		{`bash -c "$x"`, Ask, opaque(`bash -c "$x"`)},
		{`bash -c "rm $(x)"`, Ask, opaque(`bash -c "rm $(x)"`)},
		{"bash $OPTS", Ask, opaque("bash $OPTS")},
		{"bash", Ask, opaque("bash")},
		{"wget -qO- x | sh", Ask, opaque("sh")},
		{"base64 -d f | bash", Ask, opaque("bash")},
		{"bash -s < script.sh", Ask, opaque("bash -s")},
		{"bash script.sh", Ask, noRule("bash script.sh")},
		{"bash ./build.sh --fast", Ask, noRule("bash ./build.sh --fast")},
		{"./configure", Ask, noRule("./configure")},
		{"bash /dev/stdin", Ask, opaque("bash /dev/stdin")},
		{"bash /dev/fd/0", Ask, opaque("bash /dev/fd/0")},
		{"bash /proc/self/fd/0", Ask, opaque("bash /proc/self/fd/0")},
		{"bash -", Ask, opaque("bash -")},
		{"bash <(wget -qO- x)", Ask, opaque("bash <(wget -qO- x)")},
		{"bash -i", Ask, opaque("bash -i")},
		{"bash -l", Ask, opaque("bash -l")},
		{"bash --login -c ls", Ask, opaque("bash --login -c ls")},
		{"bash -lc 'ls'", Ask, opaque("bash -lc ls")},
		{"sh -ic ls", Ask, opaque("sh -ic ls")},
		{"bash --version", Ask, noRule("bash --version")},
		{"fish script.fish", Ask, noRule("fish script.fish")},
		{"fish", Ask, opaque("fish")},
		{"fish --version", Ask, noRule("fish --version")},
		{"pwsh -File x.ps1", Ask, opaque("pwsh -File x.ps1")},
	}
	for _, sh := range bashLike {
		cases = append(cases, tcase{sh + " -c 'rm -rf /'", Deny, rmD})
	}
	for _, sh := range otherShells {
		cases = append(cases, tcase{sh + " -c 'rm -rf /'", Ask, opaque(sh + " -c rm -rf /")})
	}
	run(t, std(t), cases)
}

// Shells nest up to 8 levels; deeper is opaque.
func TestNestingDepth(t *testing.T) {
	nest := func(n int) string {
		s := "rm -rf /"
		for range n {
			q, _ := quote(s)
			s = "bash -c " + q
		}
		return s
	}
	p := std(t)
	run(t, p, []tcase{{nest(8), Deny, rmD}})
	r := p.Check(nest(9))
	if r.Decision != Ask || !strings.HasSuffix(r.Reason(), "cannot be checked before it runs") || r.Parts[r.Deciding].Opaque != reasonDepth {
		t.Errorf("nine levels: %s %q\n%s", r.Decision, r.Reason(), dump(r))
	}
	evals := "rm -rf /"
	for range 9 {
		q, _ := quote(evals)
		evals = "eval " + q
	}
	if r := p.Check(evals); r.Decision != Ask || r.Parts[r.Deciding].Opaque != reasonDepth {
		t.Errorf("nine evals: %s %q\n%s", r.Decision, r.Reason(), dump(r))
	}
}

// A dynamic word matches only a whole-word * of an allow rule, and may
// match anything of a deny or ask rule (docs/spec.md §9.3).
func TestDynamicWords(t *testing.T) {
	run(t, std(t), []tcase{
		{"rm -rf $X", Deny, denied("rm -rf $X", "rm -rf *")},
		{"rm -rf \"$X\"/*", Deny, denied("rm -rf \"$X\"/*", "rm -rf *")},
		{"rm $X /", Ask, mayDeny("rm $X /", "rm -rf *")},
		{`rm "$X" /`, Ask, mayDeny(`rm "$X" /`, "rm -rf *")},
		{"rm $X", Ask, mayDeny("rm $X", "rm -rf *")},
		{`rm "${@}"`, Ask, mayDeny(`rm "${@}"`, "rm -rf *")},
		{"rm *.o", Ask, mayDeny("rm *.o", "rm -rf *")},
		{"rm -f $X", Ask, noRule("rm -f $X")},
		{"$CMD -rf /", Ask, mayDeny("$CMD -rf /", "rm -rf *")},
		{`"$CMD"`, Ask, mayDeny(`"$CMD"`, "curl*")},
		{"${CMD} x", Ask, mayDeny("${CMD} x", "rm -rf *")},
		{"$(echo rm) -rf /", Ask, mayDeny("$(echo rm) -rf /", "rm -rf *")},
		{"~user/bin/x", Ask, mayDeny("~user/bin/x", "curl*")},
		{"git $SUB", Ask, mayDeny("git $SUB", "git push --force*")},
		{"git push $REMOTE", Ask, mayDeny("git push $REMOTE", "git push --force*")},
		{"git push origin main", Ask, askRule("git push origin main", "git push:*")},
		{"git push --force origin", Deny, denied("git push --force origin", "git push --force*")},
		{"npm $CMD", Ask, mayAsk("npm $CMD", "npm publish")},
		{"npm run $S", Allow, ""},
		{`npm run "$S" -- "$@"`, Allow, ""},
		{"go test $PKGS", Allow, ""},
		{"ls $DIR", Allow, ""},
		{"cat *.go", Allow, ""},
		{"ls ~+", Allow, ""},
		{"echo $((1+2))", Allow, ""},
		{"grep foo *", Allow, ""},
		{"cat a[12]", Allow, ""},
		{`find . -name "$N"`, Ask, noRule(`find . -name "$N"`)},
		{`test -f "$F"`, Ask, noRule(`test -f "$F"`)},
		{`printf "$fmt"`, Ask, noRule(`printf "$fmt"`)},
		{`sort $F`, Ask, noRule(`sort $F`)},
		{"[ -f x ]", Allow, ""},
		{"make $TARGET", Ask, noRule("make $TARGET")},
	})
}

// Static text bash may run later is read for the code it holds
// (docs/spec.md §9.3 "Quoted code").
func TestQuotedCode(t *testing.T) {
	rm := mayDeny("rm -rf /", "rm -rf *")
	run(t, std(t), []tcase{
		{"[ -v 'a[$(rm -rf /)]' ]", Ask, rm},
		{"test -v 'a[$(rm -rf /)]'", Ask, rm},
		{"printf -v 'a[$(rm -rf /)]' x", Ask, rm},
		{"x='a[$(rm -rf /)]'; echo $((x))", Ask, rm},
		{"echo ${!x}; x='$(rm -rf /)'", Ask, rm},
		{"echo '$(rm -rf /)'", Ask, rm},
		{"echo 'use `rm -rf /` with care'", Ask, rm},
		{"echo \"a \\$(rm -rf /)\"", Ask, rm},
		{"echo 'a <(rm -rf /)'", Ask, rm},
		{"echo 'a >(rm -rf /)'", Ask, rm},
		// A here-document going to a program is data, read by no shell.
		{"cat <<'EOF'\n$(rm -rf /)\nEOF", Allow, ""},
		{"cat <<EOF\n\\$(rm -rf /)\nEOF", Allow, ""},
		{"cat <<EOF\n$(rm -rf /)\nEOF", Deny, rmD},
		{"bash <<'EOF'\nrm -rf /\nEOF", Deny, rmD},
		{"x=$(cat <<'EOF'\na[$(rm -rf /)]\nEOF\n); echo $((x))", Ask, opaque("$((x))")},
		{"declare -A m=([k]='$(rm -rf /)')", Ask, rm},
		{"echo ${x:-'$(rm -rf /)'}", Ask, rm},
		{"bash -c \"echo '\\$(rm -rf /)'\"", Ask, rm},
		{"git commit -m \"$(cat <<'EOF'\nFix the `rm -rf` bug\nEOF\n)\"", Ask, noRule("git commit -m \"$(cat <<'EOF' Fix the `rm -rf` bug EOF )\"")},
		{"echo '$(git push)'", Ask, mayAsk("git push", "git push:*")},
		{"echo '$(ls)'", Allow, ""},
		{"echo 'a $( b'", Allow, ""},
		{"echo 'don`t'", Allow, ""},
		{"echo 'a $(b ) ) c'", Allow, ""},
		{"echo '$(eval \"$x\")'", Ask, opaque(`eval "$x"`)},
		{"echo '$($CMD)'", Ask, mayDeny("$CMD", "rm -rf *")},
		{"echo '$(foo; fi)'", Ask, opaque("$(foo; fi)")},
		{"PS4='$(rm -rf /)'", Ask, opaque("PS4='$(rm -rf /)'")},
	})
}

// Commands that change what later commands run, and assignments
// (docs/spec.md §9.3 "State for later commands", "Assignments").
func TestStateChanges(t *testing.T) {
	run(t, std(t), []tcase{
		{"trap 'rm -rf /' EXIT", Deny, rmD},
		{`trap "rm -rf /" INT TERM`, Deny, rmD},
		{"trap -- 'rm -rf /' EXIT", Deny, rmD},
		{`trap "$X" EXIT`, Ask, opaque(`trap "$X" EXIT`)},
		{"trap - EXIT", Ask, noRule("trap - EXIT")},
		{"trap -p", Ask, noRule("trap -p")},
		{"alias x='rm -rf /'", Deny, rmD},
		{`alias x="$Y"`, Ask, opaque(`alias x="$Y"`)},
		{"alias", Ask, noRule("alias")},
		{"hash -p /tmp/evil ls", Ask, opaque("hash -p /tmp/evil ls")},
		{"hash -rp /tmp/evil ls", Ask, opaque("hash -rp /tmp/evil ls")},
		{"hash -r", Ask, noRule("hash -r")},
		{"enable -n cd", Ask, opaque("enable -n cd")},
		{"enable", Ask, opaque("enable")},
		{"shopt -s expand_aliases", Ask, opaque("shopt -s expand_aliases")},
		{"shopt -s extglob expand_aliases", Ask, opaque("shopt -s extglob expand_aliases")},
		{"shopt -s $OPT", Ask, opaque("shopt -s $OPT")},
		{"shopt -s nullglob", Ask, noRule("shopt -s nullglob")},
		{"unalias ls", Ask, opaque("unalias ls")},
		{"source ./env.sh", Ask, noRule("source ./env.sh")},
		{". ./env.sh", Ask, noRule(". ./env.sh")},
		{"source <(curl -s x)", Deny, denied("curl -s x", "curl*")},
		{"source <(wget -qO- x)", Ask, opaque("source <(wget -qO- x)")},
		{"source /dev/stdin", Ask, opaque("source /dev/stdin")},
		{". -", Ask, opaque(". -")},
		{`source "$F"`, Ask, opaque(`source "$F"`)},
		{"source /proc/self/fd/3", Ask, opaque("source /proc/self/fd/3")},
		// The loader list: opaque when deny or ask rules exist.
		{"PATH=/tmp:$PATH ls", Ask, opaque("PATH=/tmp:$PATH ls")},
		{"PATH=/x", Ask, opaque("PATH=/x")},
		{"export PATH=/tmp", Ask, opaque("export PATH=/tmp")},
		{"declare -x LD_PRELOAD=/x.so", Ask, opaque("declare -x LD_PRELOAD=/x.so")},
		{"local BASH_ENV=x", Ask, opaque("local BASH_ENV=x")},
		{"readonly PROMPT_COMMAND=x", Ask, opaque("readonly PROMPT_COMMAND=x")},
		{"typeset IFS=:", Ask, opaque("typeset IFS=:")},
		{"IFS=: read a b", Ask, opaque("IFS=: read a b")},
		{"env LD_PRELOAD=x.so ls", Ask, opaque("env LD_PRELOAD=x.so ls")},
		{"sudo LD_LIBRARY_PATH=/x ls", Ask, opaque("sudo LD_LIBRARY_PATH=/x ls")},
		{"env 'BASH_FUNC_ls%%=() { rm -rf /; }' bash -c ls", Ask, opaque("env BASH_FUNC_ls%%=() { rm -rf /; } bash -c ls")},
		{"declare -n r=PATH", Ask, opaque("declare -n r=PATH")},
		{`declare "$x"`, Ask, opaque(`declare "$x"`)},
		{`export "PATH=/x"`, Ask, opaque("export PATH=/x")},
		{"read PATH", Ask, opaque("read PATH")},
		{"read -a IFS", Ask, opaque("read -a IFS")},
		{"printf -v PATH x", Ask, opaque("printf -v PATH x")},
		{"mapfile -t IFS", Ask, opaque("mapfile -t IFS")},
		{"getopts ab PATH", Ask, opaque("getopts ab PATH")},
		{"for PATH in /x; do :; done", Ask, opaque("for PATH")},
		{"(( PATH = 1 ))", Ask, opaque("(( PATH = 1 ))")},
		{"let IFS=1", Ask, opaque("let IFS=1")},
		{"echo $((IFS=1))", Ask, opaque("echo $((IFS=1))")},
		{"builtin export PATH=/x", Ask, opaque("builtin export PATH=/x")},
		{"echo $(PATH=/x; ls)", Ask, opaque("PATH=/x")},
		// Assignments of other names.
		{"A=1", Allow, ""},
		{"A=1 B=2", Allow, ""},
		{"export A=1", Allow, ""},
		{"declare -a arr=(1 2)", Allow, ""},
		{"local x", Allow, ""},
		{"readonly y=2", Allow, ""},
		{"let x=1", Allow, ""},
		{"(( x++ ))", Allow, ""},
		{"[[ -f x ]]", Allow, ""},
		{"x=1 > out", Ask, noRule("x=1")},
		{"[[ -f x ]] > out", Ask, noRule("[[ -f x ]]")},
		{"FOO=1 ls", Ask, noRule("FOO=1 ls")},
		{"FOO=1 BAR=2 make build", Ask, noRule("FOO=1 BAR=2 make build")},
	})
}

// The read-only list, its conditions and the redirections that write
// (docs/spec.md §9.4).
func TestReadOnly(t *testing.T) {
	var cases []tcase
	for _, c := range []string{
		"cd /tmp", "pushd /x", "popd", ":", "sleep 1", "ls -la", "cat f", "head -5 f", "tail -f log",
		"wc -l f", "pwd", "echo hi", "printf '%s\\n' x", "true", "false", "which go", "type ls", "file x",
		"stat x", "du -sh .", "df -h", "diff a b", "cmp a b", "grep -rn x .", "egrep x f", "fgrep x f",
		"rg foo", "rg -i foo src", "find . -name x -type f", "sort -k2 f", "sort -rn f", "uniq f", "uniq -c -f 1 f",
		"cut -d: -f1 f", "tr a b", "basename /a/b", "dirname /a/b", "realpath x", "readlink -f x", "date",
		"date +%s", "date -u", "uname -a", "id", "whoami", "env", "printenv PATH", "git log --oneline",
		"git diff HEAD", "git show HEAD:f", "git blame f", "git rev-parse HEAD", "git ls-files",
		"git -C sub status", "git --no-pager log", "git diff --no-ext-diff", "git log --cc",
		"test -f x", "[ -d x ]", "ls 2>&1", "ls >&2", "ls 2>&-", "ls > /dev/null", "ls 2>/dev/null",
		"ls &>/dev/null", "cat < f", "cat <<< x", "cat <<EOF\nx\nEOF", "ls 1>&2 2>/dev/null",
		"{ ls; } 2>/dev/null", "if true; then ls; fi > /dev/null", "< f",
	} {
		cases = append(cases, tcase{c, Allow, ""})
	}
	for c, words := range map[string]string{
		"file -C -m x": "", "file --compile": "", "file -bC x": "", "rg --pre cat x": "", "rg -z x": "",
		"rg -uz x": "", "rg --search-zip x": "", "rg --hostname-bin=x y": "", "find . -delete": "",
		"find . -fprint f": "", "find . -fls f": "", "sort -o out f": "", "sort --output=out f": "",
		"sort --out=f x": "", "sort -no f x": "", "sort --compress-program=gzip f": "", "uniq a b": "",
		"date -s now": "", "date --set=now": "", "date --se=now": "", "git -c core.pager=x log": "",
		"git log --output=f": "", "git diff --ext-diff": "", "git log --textconv": "",
		"git --exec-path=/x status": "", "git commit -m x": "", "git log -c": "", "git -p log": "",
		"test -v x": "", "[ -R x ]": "", "printf -v x y": "", "./ls": "", "/bin/ls": "",
		"ls > out": "ls", "ls >> out": "ls", "ls >| out": "ls", "ls &> out": "ls", "ls &>> out": "ls",
		"cat <> f": "cat", "ls >&out": "ls", `ls > "$F"`: "ls", "ls 2> err.log": "ls",
		"{ ls; } > out": "ls", "(ls) > out": "ls", "while true; do ls; done > out": "true",
		"f() { ls; } > out; f": "ls", "> f": "", ">> f": "", "command -v ls": "", "echo hi >&2 > x": "echo hi",
	} {
		if words == "" {
			words = c
		}
		cases = append(cases, tcase{c, Ask, noRule(words)})
	}
	run(t, std(t), cases)
}

// Opaque parts under each default, and rules for every command.
func TestDefaults(t *testing.T) {
	run(t, pol(t, Config{Default: Deny, ReadOnly: true}), []tcase{
		{"ls", Allow, ""},
		{"make", Deny, deniedNoRule("make")},
		{"ls; make", Deny, deniedNoRule("make")},
		{"$X", Deny, deniedOpaque("$X")},
		{"make | $X", Deny, deniedOpaque("$X")},
		{"foo (", Deny, deniedOpaque("foo (")},
		{"", Deny, deniedNoRule("")},
		{"wget x | sh", Deny, deniedOpaque("sh")},
	})
	run(t, pol(t, Config{Default: Deny, ReadOnly: true}, "ask:npm publish"), []tcase{
		{"npm publish; make", Ask, askRule("npm publish", "npm publish")},
		{"npm publish; $X", Deny, deniedOpaque("$X")},
	})
	run(t, pol(t, Config{}), []tcase{
		{"$X", Allow, ""},
		{"curl x | sh", Allow, ""},
		{"rm -rf /", Allow, ""},
		{"foo (", Allow, ""},
		{"PATH=/x ls", Allow, ""},
	})
	run(t, pol(t, Config{}, "deny:rm -rf *"), []tcase{
		{"ls", Allow, ""},
		{"make", Allow, ""},
		{"wget x | bash", Ask, opaque("bash")},
		{"foo (", Ask, opaque("foo (")},
		{"PATH=/x ls", Ask, opaque("PATH=/x ls")},
	})
	run(t, pol(t, Config{Default: Ask}), []tcase{
		{"$X", Ask, opaque("$X")},
		{"ls", Ask, noRule("ls")},
		{"PATH=/x ls", Ask, noRule("PATH=/x ls")},
	})
	run(t, pol(t, Config{}, "deny:Bash"), []tcase{
		{"ls", Deny, denied("ls", "*")},
		{"foo (", Deny, denied("foo (", "*")},
		{"A=1", Deny, denied("A=1", "*")},
		{"> f", Deny, denied("> f", "*")},
		{"$X", Deny, denied("$X", "*")},
	})
	run(t, pol(t, Config{}, "ask:Bash(*)"), []tcase{
		{"ls", Ask, askRule("ls", "*")},
		{"foo (", Ask, askRule("foo (", "*")},
	})
}

// Bash's lookup tables and alias expansion, reached without hash or
// alias: BASH_CMDS and BASH_ALIASES are the tables themselves, and POSIX
// mode turns alias expansion on (docs/spec.md §9.3 "State for later
// commands"). `BASH_CMDS[ls]=/bin/rm; ls -rf x` runs rm in bash 5.2.
func TestLookupTables(t *testing.T) {
	const rm = "ls -rf /tmp/victim"
	run(t, std(t), []tcase{
		{"BASH_CMDS[ls]=/bin/rm; " + rm, Ask, opaque("BASH_CMDS[ls]=/bin/rm")},
		{"BASH_CMDS+=([ls]=/bin/rm); " + rm, Ask, opaque("BASH_CMDS+=([ls]=/bin/rm)")},
		{"printf -v 'BASH_CMDS[ls]' /bin/rm; " + rm, Ask, opaque("printf -v BASH_CMDS[ls] /bin/rm")},
		{"read 'BASH_CMDS[ls]' <<< /bin/rm; " + rm, Ask, opaque("read BASH_CMDS[ls]")},
		{"declare -A BASH_CMDS=([ls]=/bin/rm); " + rm, Ask, opaque("declare -A BASH_CMDS=([ls]=/bin/rm)")},
		{"declare -n c=BASH_CMDS; c[ls]=/bin/rm; " + rm, Ask, opaque("declare -n c=BASH_CMDS")},
		{"POSIXLY_CORRECT=1; BASH_ALIASES[ls]='rm -rf /tmp/victim'; ls", Ask, opaque("POSIXLY_CORRECT=1")},
		{"BASH_ALIASES[ls]='rm -rf /tmp/victim'", Ask, opaque("BASH_ALIASES[ls]='rm -rf /tmp/victim'")},
		{"POSIXLY_CORRECT=1 bash -c ls", Ask, opaque("POSIXLY_CORRECT=1 bash -c ls")},
		// Alias expansion turned on when bash starts, or by set.
		{"bash -O expand_aliases -c ls", Ask, opaque("bash -O expand_aliases -c ls")},
		{"bash -xO expand_aliases -c ls", Ask, opaque("bash -xO expand_aliases -c ls")},
		{"bash -o posix -c ls", Ask, opaque("bash -o posix -c ls")},
		{"bash --posix -c ls", Ask, opaque("bash --posix -c ls")},
		{"bash -O $OPT -c ls", Ask, opaque("bash -O $OPT -c ls")},
		{"set -o posix; ls", Ask, opaque("set -o posix")},
		{"set -eo posix", Ask, opaque("set -eo posix")},
		{"set -o $OPT", Ask, opaque("set -o $OPT")},
		{"shopt -so posix", Ask, opaque("shopt -so posix")},
		{"bash +O expand_aliases -c ls", Allow, ""},
		{"bash -o pipefail -c ls", Allow, ""},
		{"set +o posix; ls", Ask, noRule("set +o posix")},
		{"set -- -o posix", Ask, noRule("set -- -o posix")},
		// A subscript does not hide the name printf, read, mapfile and
		// getopts assign.
		{"printf -v 'PATH[0]' %s /tmp/evil", Ask, opaque("printf -v PATH[0] %s /tmp/evil")},
		{"printf -v 'IFS[0]' %s x", Ask, opaque("printf -v IFS[0] %s x")},
		{"read -a 'PATH[0]'", Ask, opaque("read -a PATH[0]")},
		{"mapfile 'PATH[0]'", Ask, opaque("mapfile PATH[0]")},
		{"getopts a 'PATH[0]'", Ask, opaque("getopts a PATH[0]")},
		{"printf -v 'a[0]' %s x", Ask, noRule("printf -v a[0] %s x")},
	})
	for _, cfg := range []Config{{Default: Allow, ReadOnly: true}, {Default: Ask, ReadOnly: true}, {Default: Deny, ReadOnly: true}} {
		p := pol(t, cfg)
		for _, cmd := range []string{
			"BASH_CMDS[ls]=/bin/rm; " + rm,
			"printf -v 'BASH_CMDS[ls]' /bin/rm; " + rm,
			"read 'BASH_CMDS[ls]' <<< /bin/rm; " + rm,
			"declare -A BASH_CMDS=([ls]=/bin/rm); " + rm,
			"printf -v 'PATH[0]' %s /tmp/evil; ls",
		} {
			want := cfg.Default
			if r := p.Check(cmd); r.Decision != want {
				t.Errorf("default %s: Check(%q) = %s, want %s\n%s", cfg.Default, cmd, r.Decision, want, dump(r))
			}
		}
	}
}

// A redirection of a command that runs a script (a shell, eval, flock -c)
// applies to the script's commands, as one of a compound command applies
// to every simple command inside it (docs/spec.md §9.3).
func TestScriptRunnerWrites(t *testing.T) {
	run(t, std(t), []tcase{
		{"bash -c ls > out", Ask, noRule("ls")},
		{"bash -c 'cat f' >> ~/.bashrc", Ask, noRule("cat f")},
		{"eval ls > out", Ask, noRule("ls")},
		{"sh -c 'echo x; pwd' > out", Ask, noRule("echo x")},
		{"bash <<'EOF' > out\nls\nEOF", Ask, noRule("ls")},
		{"timeout 5 bash -c ls > out", Ask, noRule("ls")},
		{"bash -c 'ls > /dev/null' 2>&1", Allow, ""},
		{"bash -c ls > /dev/null", Allow, ""},
		{"bash -c 'echo $(ls)' > out", Ask, noRule("echo $(ls)")},
	})
	run(t, pol(t, Config{Default: Deny, ReadOnly: true}), []tcase{
		{"bash -c ls > out", Deny, deniedNoRule("ls")},
		{"eval 'cat /dev/null' > ~/.bashrc", Deny, deniedNoRule("cat /dev/null")},
	})
}

// Wrappers that write a file of their own: time -o FILE (GNU time writes
// its report there, in a format the command chooses) and flock FILE (it
// creates FILE). The part writes, like one with a redirection: it is not
// read-only.
func TestWrapperWrites(t *testing.T) {
	run(t, std(t), []tcase{
		{"command time -a -f 'echo PWNED' -o /tmp/fake_bashrc cat /dev/null", Ask, noRule("cat /dev/null")},
		{"nice time -f x -o F true", Ask, noRule("true")},
		{"command time --output=F ls", Ask, noRule("ls")},
		{"command time --out F ls", Ask, noRule("ls")},
		{"command time -ao F ls", Ask, noRule("ls")},
		{"\\time -o F ls", Ask, noRule("ls")},
		{"command time -o \"$F\" ls", Ask, noRule("ls")},
		{"command time -o F bash -c ls", Ask, noRule("ls")},
		{"flock /tmp/lock ls", Ask, noRule("ls")},
		{"flock -n 9 ls", Ask, noRule("ls")},
		{"flock /tmp/lock -c ls", Ask, noRule("ls")},
		{"flock -- /tmp/lock ls", Ask, noRule("ls")},
		// No file written.
		{"command time -f x ls", Allow, ""},
		{"command time -p ls", Allow, ""},
		{"command time -o /dev/null ls", Allow, ""},
		{"flock /dev/null ls", Allow, ""},
		{"flock 9", Ask, noRule("flock 9")},
	})
	run(t, pol(t, Config{Default: Deny, ReadOnly: true}), []tcase{
		{"command time -a -f 'echo PWNED' -o /tmp/fake_bashrc cat /dev/null", Deny, deniedNoRule("cat /dev/null")},
		{"nice time -f x -o F true", Deny, deniedNoRule("true")},
		{"flock /tmp/lock true", Deny, deniedNoRule("true")},
	})
	// An allow rule for the command allows it, as with a redirection.
	run(t, pol(t, Config{Default: Deny, ReadOnly: true}, "allow:make *"), []tcase{
		{"command time -o times.txt make build", Allow, ""},
		{"flock /tmp/build.lock make build", Allow, ""},
	})
}

// Builtins that run strings: mapfile's callback is a script, fc runs
// commands from the history (and its -e editor), and history -s, -r and
// -n put commands there (docs/spec.md §9.3 "State for later commands").
func TestBuiltinsRunningStrings(t *testing.T) {
	victim := denied(`rm -rf /tmp/victim`, "rm -rf *")
	cases := []tcase{
		{"mapfile -C 'rm -rf /tmp/victim #' -c1 a <<< x", Deny, victim},
		{"readarray -C 'rm -rf /tmp/victim #' -c1 a <<< x", Deny, victim},
		{"mapfile -c1 -C'rm -rf /tmp/victim #' a <<< x", Deny, victim},
		{"builtin mapfile -C 'rm -rf /tmp/victim #' a <<< x", Deny, victim},
		// bash appends the index and the line to the callback.
		{"mapfile -C 'rm -rf' a < f", Deny, denied(`rm -rf "$index" "$line"`, "rm -rf *")},
		{`mapfile -C "$cb" a < f`, Ask, opaque(`mapfile -C "$cb" a`)},
		{"mapfile -C echo a < f", Ask, noRule("mapfile -C echo a")},
		{"fc -s", Ask, opaque("fc -s")},
		{"fc -e 'rm -rf /tmp/victim #'", Ask, opaque("fc -e rm -rf /tmp/victim #")},
		{"command fc -l", Ask, opaque("command fc -l")},
		{"history -s 'rm -rf /tmp/victim'", Ask, opaque("history -s rm -rf /tmp/victim")},
		{"history -r ~/.hist", Ask, opaque("history -r /home/u/.hist")},
		{"history -n", Ask, opaque("history -n")},
		{"history -cs x", Ask, opaque("history -cs x")},
		{"history $OPT", Ask, opaque("history $OPT")},
		{"history", Ask, noRule("history")},
		{"history -c", Ask, noRule("history -c")},
	}
	run(t, std(t), cases)
	p := pol(t, Config{Default: Allow, ReadOnly: true}, "deny:rm -rf *")
	run(t, p, []tcase{
		{"mapfile -C 'rm -rf /tmp/victim #' -c1 a <<< x", Deny, victim},
		{"readarray -C 'rm -rf /tmp/victim #' -c1 a <<< x", Deny, victim},
		{"history -s 'rm -rf /tmp/victim'; fc -s", Ask, opaque("history -s rm -rf /tmp/victim")},
		{"fc -e 'rm -rf /tmp/victim #'", Ask, opaque("fc -e rm -rf /tmp/victim #")},
		{"mapfile -t a < f", Allow, ""},
	})
}

// set -k (keyword) makes an assignment anywhere in a command part of its
// environment: `set -k; ls PATH=/tmp/evil` runs /tmp/evil/ls in bash 5.2,
// and `ls LD_PRELOAD=x.so` loads x.so, with ls looking read-only.
func TestKeywordOption(t *testing.T) {
	run(t, std(t), []tcase{
		{"set -k; ls PATH=/tmp/evil", Ask, opaque("set -k")},
		{"set -ek", Ask, opaque("set -ek")},
		{"set -o keyword", Ask, opaque("set -o keyword")},
		{"shopt -so keyword", Ask, opaque("shopt -so keyword")},
		{"bash -k -c 'ls PATH=/tmp/evil'", Ask, opaque("bash -k -c ls PATH=/tmp/evil")},
		{"bash -o keyword -c ls", Ask, opaque("bash -o keyword -c ls")},
		{"set +k; ls", Ask, noRule("set +k")},
		{"bash +k -c ls", Allow, ""},
	})
	run(t, pol(t, Config{Default: Deny, ReadOnly: true}), []tcase{
		{"set -k; ls PATH=/tmp/evil", Deny, deniedOpaque("set -k")},
	})
}

// Shells other than bash expand aliases in scripts (dash, and bash run as
// sh, in POSIX mode): `sh -c 'alias r=rm<newline>r -rf x'` runs rm, though
// neither the alias's value nor `r -rf x` matches `rm -rf *`. An alias
// defined there is opaque; in bash, which does not expand them, its value
// is checked like eval, as before.
func TestAliasesInOtherShells(t *testing.T) {
	p := pol(t, Config{Default: Allow, ReadOnly: true}, "deny:rm -rf *")
	run(t, p, []tcase{
		{"sh -c 'alias r=rm\nr -rf /tmp/victim'", Ask, opaque("alias r=rm")},
		{"dash -c 'alias r=rm'", Ask, opaque("alias r=rm")},
		{"sh <<'EOF'\nalias r=rm\nr -rf /tmp/victim\nEOF", Ask, opaque("alias r=rm")},
		{"sh -c \"eval 'alias r=rm'\"", Ask, opaque("alias r=rm")},
		{"busybox bash -c 'alias r=rm'", Ask, opaque("alias r=rm")},
		{"flock /dev/null -c 'alias r=rm'", Ask, opaque("alias r=rm")},
		{"watch 'alias r=rm'", Ask, opaque("alias r=rm")},
		{"sudo -s 'alias r=rm'", Ask, opaque("alias r=rm")},
		{"sh -c 'alias'", Allow, ""},
		// bash -c does not expand aliases: the value is checked.
		{"bash -c 'alias r=rm\nr -rf /tmp/victim'", Allow, ""},
		{"sh -c \"bash -c 'alias r=rm'\"", Allow, ""},
		{"bash -c \"alias r='rm -rf /'\"", Deny, rmD},
	})
	run(t, std(t), []tcase{
		{"bash -c \"alias ll='ls -l'\"", Allow, ""},
		{"sh -c \"alias ll='ls -l'\"", Ask, opaque("alias ll=ls -l")},
	})
}

// coproc NAME sets the array NAME (its descriptors: PATH becomes "63"),
// and wait -p NAME sets NAME to a pid: both are assignments.
func TestCoprocAndWaitAssign(t *testing.T) {
	run(t, std(t), []tcase{
		{"coproc PATH { sleep 1; }; ls", Ask, opaque("coproc PATH")},
		{"coproc BASH_CMDS { sleep 1; }", Ask, opaque("coproc BASH_CMDS")},
		{"sleep 1 & wait -n -p IFS", Ask, opaque("wait -n -p IFS")},
		{"wait -p 'PATH[0]'", Ask, opaque("wait -p PATH[0]")},
		{"wait -npPATH", Ask, opaque("wait -npPATH")},
		{"wait $OPTS", Ask, opaque("wait $OPTS")},
		{`wait "$pid"`, Ask, noRule(`wait "$pid"`)},
		{"coproc C { ls; }", Allow, ""},
		{"coproc ls", Allow, ""},
		{"wait -p pid", Ask, noRule("wait -p pid")},
	})
}
