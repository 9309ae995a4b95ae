package policy

import "testing"

// ruleCase is one rule alone against one command: for allow rules the
// default is deny (so a miss denies), for deny and ask rules it is allow
// (so a miss allows).
type ruleCase struct {
	rule string // kind:pattern
	cmd  string
	want Decision
}

func TestRuleMatching(t *testing.T) {
	for _, tc := range []ruleCase{
		// Exact words.
		{"allow:npm run build", "npm run build", Allow},
		{"allow:npm run build", "npm run build --watch", Deny},
		{"allow:npm run build", "npm run", Deny},
		{"allow:npm run build", `"npm" 'run' b\uild`, Allow},
		// A whole-word star: any number of arguments, zero included.
		{"allow:npm run test *", "npm run test", Allow},
		{"allow:npm run test *", "npm run test --coverage x", Allow},
		{"allow:npm run test *", "npm run testx", Deny},
		{"allow:git * main", "git main", Allow},
		{"allow:git * main", "git push origin main", Allow},
		{"allow:git * main", "git push origin dev", Deny},
		{"allow:* --version", "go --version", Allow},
		{"allow:* --version", "go version", Deny},
		// A trailing :* is " *".
		{"allow:npm run test:*", "npm run test", Allow},
		{"allow:npm run test:*", "npm run test a b", Allow},
		{"allow:npm run test:*", "npm run testx", Deny},
		// A star inside a word of an allow rule stays in one argument.
		{"allow:ls*", "lsof", Allow},
		{"allow:ls*", "ls", Allow},
		{"allow:ls*", "ls -la", Deny},
		{"allow:cat *.md", "cat README.md", Allow},
		{"allow:cat *.md", "cat a.md b.md", Deny},
		{"allow:git log --format=*", "git log --format=%H", Allow},
		// A quoted star is a literal star.
		{"allow:echo '*'", "echo '*'", Allow},
		{"allow:echo '*'", "echo x", Deny},
		{"allow:echo \\*", `echo "*"`, Allow},
		// Allow rules match the name as written...
		{"allow:git status", "./git status", Deny},
		{"allow:git status", "/usr/bin/git status", Deny},
		// ... or as a path when the rule's first word has a /.
		{"allow:/usr/bin/git status", "/usr/bin/git status", Allow},
		{"allow:/usr/bin/git status", "/usr/bin/../bin/git status", Allow},
		{"allow:/usr/bin/git status", "git status", Deny},
		{"allow:./bin/x run", "bin/x run", Allow},
		{"allow:./x run", "x run", Deny},
		// A dynamic argument matches only a whole-word star of an allow rule.
		{"allow:go test *", "go test $PKGS", Allow},
		{"allow:cat *.md", "cat *.md", Deny},
		{"allow:cat *", "cat *.md", Allow},
		{"allow:rm $X", "rm '$X'", Allow},
		{"allow:rm $X", "rm $X", Deny},
		{"allow:npm run *", "npm $CMD x", Deny},
		// Brace expansion and ~ apply to patterns as to commands.
		{"allow:git {status,log}", "git status", Deny},
		{"allow:git {status,log}", "git status log", Allow},
		{"allow:~/bin/tool *", "~/bin/tool x", Allow},
		{"allow:~/bin/tool *", "/home/u/bin/tool x", Allow},
		{"allow:a\\ b", "'a b'", Allow},
		{"allow:$'\\x72m' x", "rm x", Allow},
		// Every command.
		{"allow:Bash", "anything at all", Allow},
		{"allow:Bash(*)", "x y z", Allow},
		// Deny rules: exact words, stars, basenames.
		{"deny:rm -rf *", "rm -rf /", Deny},
		{"deny:rm -rf *", "rm -rf", Deny},
		{"deny:rm -rf *", "rm -fr /", Allow},
		{"deny:rm -rf *", "/bin/rm -rf x", Deny},
		{"deny:rm -rf *", "./rm -rf x", Deny},
		{"deny:/bin/rm *", "rm x", Deny},
		{"deny:/bin/rm *", "/usr/local/bin/rm x", Deny},
		{"deny:npm publish", "npm publish --dry-run", Allow},
		{"deny:docker run *", "docker run -it ubuntu", Deny},
		{"deny:git * main", "git push origin main", Deny},
		{"deny:sudo *", "sudo", Deny},
		{"deny:sudo *", "sudo rm x", Deny},
		// A star inside a word of a deny rule spans arguments.
		{"deny:curl*", "curl http://x", Deny},
		{"deny:curl*", "curl", Deny},
		{"deny:curl*", "curling", Deny},
		{"deny:curl*", "/usr/bin/curl -s x", Deny},
		{"deny:curl*", "wget http://x", Allow},
		{"deny:git push*", "git push origin", Deny},
		{"deny:git push*", "git pushy", Deny},
		{"deny:git push*", "git pull", Allow},
		{"deny:git push --force*", "git push --force origin", Deny},
		{"deny:git push --force*", "git push --force-with-lease", Deny},
		{"deny:git push --force*", "git push origin --force", Allow},
		{"deny:* --force*", "git push origin --force", Deny},
		{"deny:* --force*", "git push origin", Allow},
		{"deny:git * --force*", "git --force", Deny},
		{"deny:git * --force*", "git push x --forceful", Deny},
		{"deny:*install*", "npm install x", Deny},
		{"deny:*install*", "pip uninstall x", Deny},
		// Dynamic words: a definite match, or a possible one (ask).
		{"deny:rm -rf *", "rm -rf $X", Deny},
		{"deny:rm -rf *", "rm $X /", Ask},
		{"deny:rm -rf *", `rm "$X" /`, Ask},
		{"deny:rm -rf *", "rm $X", Ask},
		{"deny:rm -rf *", "rm -f $X", Allow},
		{"deny:rm -rf *", "$RM -rf /", Ask},
		{"deny:rm -rf /", `rm "$A" "$B" "$C"`, Allow},
		{"deny:rm -rf /", `rm "$A" "$B"`, Ask},
		{"deny:rm -rf /", `rm $A`, Ask},
		{"deny:curl*", "curl $URL", Deny},
		{"deny:curl*", "cur$L x", Ask},
		{"deny:git push --force*", "git push $F", Ask},
		{"deny:git push --force*", `git push "$F" origin`, Ask},
		{"deny:git push --force*", "git push origin $F", Allow},
		{"deny:x *y", "x $A", Ask},
		{"deny:x *y", `x "$A"`, Ask},
		{"deny:ab*", "a $X", Allow},
		{"deny:echo '*'", "echo '*'", Deny},
		{"deny:echo '*'", "echo x", Allow},
		{"deny:echo '*'", "echo *", Ask},
		// Ask rules.
		{"ask:git push:*", "git push", Ask},
		{"ask:git push:*", "git status", Allow},
		{"ask:Bash", "ls", Ask},
	} {
		dflt := Allow
		if tc.rule[:5] == "allow" {
			dflt = Deny
		}
		p := pol(t, Config{Default: dflt, Home: "/home/u"}, tc.rule)
		if r := p.Check(tc.cmd); r.Decision != tc.want {
			t.Errorf("rule %q, Check(%q) = %s, want %s\n%s", tc.rule, tc.cmd, r.Decision, tc.want, dump(r))
		}
	}
}
