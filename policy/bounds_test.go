package policy

import (
	"runtime"
	"strings"
	"testing"
)

// hostile are inputs that cost the parser or the walk more than a command
// a person writes ever does: each is opaque, decided without parsing.
var hostile = []struct {
	name, cmd, reason string
}{
	{"over 1 MiB", "echo " + strings.Repeat("x", maxCommand), reasonTooLong},
	{"nested substitutions", strings.Repeat("$(", 100000) + strings.Repeat(")", 100000), reasonTooDeep},
	{"nested subshells", strings.Repeat("(", 300) + "ls" + strings.Repeat(")", 300), reasonTooDeep},
	{"nested braces", "echo " + strings.Repeat("{a,", 300) + strings.Repeat("}", 300), reasonTooDeep},
	{"nested arithmetic", "echo " + strings.Repeat("$((", 150) + "1" + strings.Repeat("))", 150), reasonTooDeep},
	{"list", strings.Repeat("ls;", 340000), reasonTooLarge},
	{"pipeline", strings.Repeat("ls|", 250000) + "ls", reasonTooLarge},
	{"and-list", strings.Repeat("ls&&", 200000) + "ls", reasonTooLarge},
	{"words", "echo " + strings.Repeat("a ", 500000), reasonTooLarge},
	{"arithmetic chain", "echo $((" + strings.Repeat("1+", 300000) + "1))", reasonTooLarge},
	{"assignment chain", "x=$(( " + strings.Repeat("a=", 300000) + "1))", reasonTooLarge},
	{"negations", strings.Repeat("! ", 300000) + "ls", reasonTooLarge},
	{"test chain", "[[ " + strings.Repeat("a && ", 200000) + "a ]]", reasonTooLarge},
	{"quoted code", "echo " + strings.Repeat("'$(ls)'", 140000), reasonTooLarge},
	{"nested shells", "bash -c " + sq(strings.Repeat("ls;", 30000)), reasonTooLarge},
	// A chain of unary operators nests without brackets; one of 1 MiB
	// overflowed the walk's stack, which no recover catches (issue 25 review).
	{"unary chain", "echo $((" + strings.Repeat("~", 1<<20-20) + "1))", reasonTooLarge},
	{"quoted unary chain", `echo "$((` + strings.Repeat("~", 1<<19) + `1))"`, reasonTooLarge},
	{"here-document unary chain", "cat <<EOF\n$((" + strings.Repeat("- ", 1<<18) + "1))\nEOF", reasonTooLarge},
}

// A command the parser cannot read, nested past the limits or over 1 MiB
// is opaque, in bounded memory (docs/spec.md §9.3 "Bad input").
func TestBadInput(t *testing.T) {
	p := parityPolicy(t)
	for _, h := range hostile {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := p.Check(h.cmd)
		runtime.ReadMemStats(&after)
		if r.Decision != Ask || r.Deciding < 0 || r.Parts[r.Deciding].Opaque != h.reason {
			t.Errorf("%s: %s\n%s", h.name, r.Decision, dump(r))
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("%s: %d MiB allocated", h.name, alloc>>20)
		}
	}
	// Large commands people do write are read: a here-document's body is
	// not counted, a quoted string is one word.
	prose := strings.Repeat("The quick brown fox, then (again) the lazy dog: $HOME & more.\n", 6000)
	code := strings.Repeat("Run `make test` or $(go env GOPATH)/bin/tool, and ${HOME} is set.\n", 4000)
	for _, cmd := range []string{
		"cat > notes.md <<EOF\n" + prose + "EOF\nls",
		"cat > notes.md <<'EOF'\n" + prose + "EOF\nls",
		"cat > notes.md <<'EOF'\n" + code + "EOF\nls",
		"python3 -c " + sq(strings.Repeat("print(1 + 2, [x * 3 for x in range(4)]); ", 4000)),
	} {
		if r := p.Check(cmd); len(r.Parts) < 1 || r.Parts[0].Opaque != "" {
			t.Errorf("a large command of %d bytes was not read: %s", len(cmd), dump(r))
		}
	}
	for _, cmd := range []string{"foo (", "echo 'unterminated", "$(", "if then fi", "a=(", "case x in"} {
		if r := p.Check(cmd); r.Decision != Ask || r.Parts[0].Opaque != reasonParse {
			t.Errorf("Check(%q) = %s %s", cmd, r.Decision, dump(r))
		}
	}
}

// BenchmarkCheckHostile: the time each hostile input takes to decide.
func BenchmarkCheckHostile(b *testing.B) {
	p := parityPolicy(b)
	for _, h := range hostile {
		b.Run(strings.ReplaceAll(h.name, " ", "-"), func(b *testing.B) {
			for b.Loop() {
				p.Check(h.cmd)
			}
		})
	}
}
