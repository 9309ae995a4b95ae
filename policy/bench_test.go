package policy

import (
	"strings"
	"testing"
)

// benchPolicy has rules of every kind, some matched on joined arguments.
func benchPolicy(b *testing.B) *Policy {
	rules := []string{"deny:rm -rf *", "deny:curl*", "deny:git push --force*", "deny:sudo *",
		"ask:git push:*", "ask:npm publish", "ask:docker *", "ask:kubectl delete *"}
	for _, a := range []string{"git status", "npm run *", "go test *", "go build *", "make *", "cargo *", "python3 -m pytest *"} {
		rules = append(rules, "allow:"+a)
	}
	return pol(b, Config{Default: Ask, ReadOnly: true, Home: "/home/u"}, rules...)
}

// The budget is 50 µs for a one-line command (docs/spec.md §9.6).
func BenchmarkCheckOneLine(b *testing.B) {
	p := benchPolicy(b)
	cmd := `cd /work/x && GOFLAGS=-mod=mod go test ./... 2>&1 | grep -v '^ok' | head -50 || echo "failed: $(date)"`
	for b.Loop() {
		p.Check(cmd)
	}
}

// The budget is 20 ms for a 272 KiB heredoc (docs/spec.md §9.6): one of
// prose, and one whose every line holds code the quoted-code check reads.
func BenchmarkCheckHeredoc(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"prose", "The quick brown fox jumps over the lazy dog, then writes a line of notes.\n"},
		{"code", "Run `make test` or $(go env GOPATH)/bin/tool, and ${HOME} is set.\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := benchPolicy(b)
			body := strings.Repeat(bc.line, 272*1024/len(bc.line))
			cmd := "cat > notes.md <<'EOF'\n" + body + "EOF\n"
			b.SetBytes(int64(len(cmd)))
			for b.Loop() {
				p.Check(cmd)
			}
		})
	}
}
