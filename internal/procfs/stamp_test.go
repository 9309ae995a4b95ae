package procfs

import (
	"os"
	"os/exec"
	"testing"
)

func TestCutStamp(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Stamp
		rest string
		ok   bool
	}{
		{"99-12-345-abcd-6", Stamp{99, 12, 345}, "abcd-6", true},
		{"99-12-345-abcd", Stamp{99, 12, 345}, "abcd", true},
		{"0-12-345-abcd", Stamp{0, 12, 345}, "abcd", true},
		{"99-12-345", Stamp{}, "", false},
		{"99-12-345-", Stamp{}, "", false},
		{"x-12-345-a", Stamp{}, "", false},
		{"99-x-345-a", Stamp{}, "", false},
		{"99-12-x-a", Stamp{}, "", false},
		{"99-0-345-a", Stamp{}, "", false},
		{"99--5-345-a", Stamp{}, "", false},
		{"", Stamp{}, "", false},
	} {
		s, rest, ok := CutStamp(tc.name)
		if ok != tc.ok || s != tc.want || rest != tc.rest {
			t.Errorf("CutStamp(%q) = %+v, %q, %v; want %+v, %q, %v", tc.name, s, rest, ok, tc.want, tc.rest, tc.ok)
		}
	}
}

func TestOwnerRoundTrip(t *testing.T) {
	own := Owner()
	if own.PidNS == 0 || own.Pid != os.Getpid() || own.Start == 0 {
		t.Fatalf("Owner() = %+v", own)
	}
	s, rest, ok := CutStamp(own.String() + "-x")
	if !ok || s != own || rest != "x" {
		t.Fatalf("CutStamp(%q) = %+v, %q, %v", own.String()+"-x", s, rest, ok)
	}
}

func TestGone(t *testing.T) {
	own := Owner()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	exited := Stamp{own.PidNS, cmd.Process.Pid, 0}
	for _, tc := range []struct {
		what string
		s    Stamp
		gone bool
	}{
		{"this process", own, false},
		{"this pid, another start", Stamp{own.PidNS, own.Pid, own.Start + 7}, true},
		{"an exited process", exited, true},
		{"another pid namespace", Stamp{own.PidNS + 1, own.Pid, own.Start + 7}, false},
		{"an unknown pid namespace", Stamp{0, own.Pid, own.Start + 7}, false},
	} {
		if got := tc.s.Gone(); got != tc.gone {
			t.Errorf("%s: %+v.Gone() = %v, want %v", tc.what, tc.s, got, tc.gone)
		}
	}
}
