package bash_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/bash"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestJoinStreams(t *testing.T) {
	for _, tc := range []struct{ out, err, want string }{
		{"out\n", "err\n", "out\n[stderr]\nerr\n"},
		{"", "err\n", "[stderr]\nerr\n"},
		{"out", "err\n", "out\n[stderr]\nerr\n"},
		{"out", "", "out"},
		{"", "", ""},
		{"a\n\n", "b", "a\n\n[stderr]\nb"},
	} {
		if got := bash.JoinStreams(tc.out, tc.err); got != tc.want {
			t.Errorf("JoinStreams(%q, %q) = %q, want %q", tc.out, tc.err, got, tc.want)
		}
	}
	if bash.StderrHeader != "[stderr]\n" {
		t.Errorf("StderrHeader = %q", bash.StderrHeader)
	}
}
