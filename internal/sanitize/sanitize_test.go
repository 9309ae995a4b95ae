package sanitize

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello\n\tworld\n", "hello\n\tworld\n"},
		{"empty", "", ""},
		{"utf-8", "héllo – ✓ 日本\n", "héllo – ✓ 日本\n"},
		{"colour", "\x1b[31mFAIL\x1b[0m ok\n", "FAIL ok\n"},
		{"colour 256", "\x1b[38;5;196mred\x1b[m", "red"},
		{"cursor", "a\x1b[2K\x1b[1Gb\x1b[?25l", "ab"},
		{"osc title bel", "\x1b]0;evil title\x07text", "text"},
		{"osc title st", "\x1b]2;evil\x1b\\text", "text"},
		{"osc 52 clipboard", "x\x1b]52;c;cm0gLXJmIH4=\x07y", "xy"},
		{"osc 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"osc cut by newline", "\x1b]0;no end\nnext line\n", "\nnext line\n"},
		{"osc cut by the end", "before\x1b]0;no end", "before"},
		{"dcs", "\x1bPq#0;2;0;0;0\x1b\\after", "after"},
		{"apc", "\x1b_Gf=100;AAAA\x1b\\after", "after"},
		{"charset", "\x1b(Babc", "abc"},
		{"two-byte", "\x1b7saved\x1b8", "saved"},
		{"keypad", "\x1b=x\x1b>", "x"},
		{"lone esc at end", "abc\x1b", "abc"},
		{"csi cut by the end", "abc\x1b[31", "abc"},
		{"csi cut by newline", "a\x1b[3\nb", "a\nb"},
		{"carriage return", "progress 10%\rprogress 20%\r\ndone\r\n", "progress 10%progress 20%\ndone\n"},
		{"backspace", "a\bb", "ab"},
		{"bell", "ding\a", "ding"},
		{"nul", "a\x00b", "ab"},
		{"del", "a\x7fb", "ab"},
		{"form feed and vertical tab", "a\fb\vc", "abc"},
		{"c1 csi", "a\u009b31mb", "ab"},
		{"c1 osc", "a\u009d0;title\u009cb", "ab"},
		{"c1 other", "a\u0085b\u0080c", "abc"},
		{"latin-1 kept", "café ©", "café ©"},
		{"replacement char kept", "a\ufffdb", "a\ufffdb"},
		{"rtl override", "a\u202eb", `a\u202eb`},
		{"trojan source", "if admin\u202e \u2066// no\u2069 \u2066{", `if admin\u202e \u2066// no\u2069 \u2066{`},
		{"bidi embeddings", "\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"bidi marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"zero width", "p\u200ba\u200cs\u200ds\u2060", `p\u200ba\u200cs\u200ds\u2060`},
		{"bom", "\ufefftext", `\ufefftext`},
		{"tags", "hi\U000e0041\U000e007f", `hi\U000e0041\U000e007f`},
		{"neighbours kept", "\u2029\u2061\u2070\u202f\u200a\ufe0f\U000e0080", "\u2029\u2061\u2070\u202f\u200a\ufe0f\U000e0080"},
		{"literal escape kept", `a\u202eb`, `a\u202eb`},
		{"joined by a removed control", "\xe2\x01\x80\x1b[m\xae", `\u202e`},
		{"invalid utf-8 kept", "\xe2\x80 \xae", "\xe2\x80 \xae"},
		{"control and bidi", "\x1b[31m\u202e\x1b[0m\r\n", `\u202e` + "\n"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("%s: Text(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestEscape: the escape of each kind of character, byte for byte.
func TestEscape(t *testing.T) {
	for r, want := range map[rune]string{
		0x202e:  `\u202e`,
		0xfeff:  `\ufeff`,
		0x061c:  `\u061c`,
		0xe0041: `\U000e0041`,
	} {
		if got := string(appendEscape(nil, r)); got != want {
			t.Errorf("escape of %U = %q, want %q", r, got, want)
		}
	}
}

// TestSteps: each of Text's two steps does its part only, so that
// redaction can go between them.
func TestSteps(t *testing.T) {
	const in = "\x1b[1ma\u202eb\r\n"
	if got, want := StripControls(in), "a\u202eb\n"; got != want {
		t.Errorf("StripControls(%q) = %q, want %q", in, got, want)
	}
	if got, want := ShowInvisible(in), "\x1b[1ma"+`\u202e`+"b\r\n"; got != want {
		t.Errorf("ShowInvisible(%q) = %q, want %q", in, got, want)
	}
}

// TestTextDoesNotCopyCleanText: text without controls is returned as is.
func TestTextDoesNotCopyCleanText(t *testing.T) {
	s := strings.Repeat("clean line\n", 1000)
	if n := testing.AllocsPerRun(10, func() { _ = Text(s) }); n != 0 {
		t.Errorf("%v allocations for clean text", n)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"\x1b[31mx", "\x1b]0;t\x07", "a\rb", "\u009b1m", "\x1b", "\u202e", "\xe2\x01\x80\xae", "\U000e0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if i := firstControl(out); i >= 0 {
			t.Fatalf("Text(%q) = %q keeps a control at %d", s, out, i)
		}
		if i, _, _ := firstInvisible(out); i >= 0 {
			t.Fatalf("Text(%q) = %q keeps an invisible character at %d", s, out, i)
		}
		if len(out) > 3*len(s) {
			t.Fatalf("Text(%q) = %q: %d bytes of %d, over three times", s, out, len(out), len(s))
		}
		if Text(out) != out {
			t.Fatalf("Text is not idempotent on %q", s)
		}
		// Redaction goes between the two steps: each holds on any text.
		if shown := ShowInvisible(s); strings.ContainsFunc(shown, invisible) {
			t.Fatalf("ShowInvisible(%q) = %q keeps an invisible character", s, shown)
		}
	})
}

func BenchmarkText64K(b *testing.B) {
	s := strings.Repeat("\x1b[32mok\x1b[0m  github.com/example/pkg\t0.012s\r\n", 64000/44)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = Text(s)
	}
}

// TestStripMarked: a Cut where each control went; Unmark removes them and
// what removing them joins.
func TestStripMarked(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                "plain",
		"ok\x1b[0mtoken":       "ok" + Cut + "token",
		"a\rb\x00c":            "a" + Cut + "b" + Cut + "c",
		"x\x1b]0;title\x07y\n": "x" + Cut + "y\n",
	} {
		if got := StripMarked(in); got != want {
			t.Errorf("StripMarked(%q) = %q, want %q", in, got, want)
		}
		if got, want := Unmark(StripMarked(in)), StripControls(in); got != want {
			t.Errorf("Unmark(StripMarked(%q)) = %q, want StripControls's %q", in, got, want)
		}
	}
	if got := Unmark(StripMarked("\xc2\x1b[0m\x85x")); got != "x" {
		t.Errorf("a C1 control joined by the removal: %q", got)
	}
}

// TestSplitUnfinished: a sequence the end cuts short is held for the next
// text; a finished one, or none, is not.
func TestSplitUnfinished(t *testing.T) {
	for _, tc := range []struct{ in, done, rest string }{
		{"token \x1b[3", "token ", "\x1b[3"},
		{"a\x1b", "a", "\x1b"},
		{"a\x1b]0;tit", "a", "\x1b]0;tit"},
		{"a\x1b[32m", "a\x1b[32m", ""},
		{"a\x1b[32mb", "a\x1b[32mb", ""},
		{"plain", "plain", ""},
		{"a\r", "a\r", ""},
		{"a\x1b]" + strings.Repeat("x", maxUnfinished), "a\x1b]" + strings.Repeat("x", maxUnfinished), ""},
	} {
		if done, rest := SplitUnfinished(tc.in); done != tc.done || rest != tc.rest {
			t.Errorf("SplitUnfinished(%.20q) = %.20q, %.20q; want %.20q, %.20q", tc.in, done, rest, tc.done, tc.rest)
		}
	}
}
