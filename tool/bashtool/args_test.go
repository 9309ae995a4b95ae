package bashtool_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/session"
	"github.com/dsh-go/dsh/tool/bashtool"
)

func TestDecodeArgs(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(s string) *json.Number { n := json.Number(s); return &n }
	for _, tc := range []struct {
		raw        string
		want       bashtool.Args
		err        bool
		background bool
		leaves     bool
	}{
		{``, bashtool.Args{}, false, false, false},
		{`{"command":"ls","description":"list","timeoutMs":1.5e3,"workdir":"","run_in_background":true,"dangerouslyDisableSandbox":true}`,
			bashtool.Args{Command: "ls", Description: "list", TimeoutMs: num("1.5e3"), Workdir: str(""), RunInBackground: json.RawMessage("true"), DangerouslyDisableSandbox: json.RawMessage("true")}, false, true, true},
		// Only the boolean true asks; any other value is kept as sent.
		{`{"run_in_background":"true","dangerouslyDisableSandbox":1,"timeoutMs":null}`,
			bashtool.Args{RunInBackground: json.RawMessage(`"true"`), DangerouslyDisableSandbox: json.RawMessage("1")}, false, false, false},
		// Not validated: the fields of the right type still decode (a wrong
		// workdir reads as empty).
		{`{"timeoutMs":"soon","command":"ls","workdir":5,"description":"d"}`,
			bashtool.Args{Command: "ls", Description: "d", Workdir: str("")}, true, false, false},
	} {
		got, err := bashtool.DecodeArgs(json.RawMessage(tc.raw))
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v", tc.raw, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.raw, diff)
		}
		if got.Background() != tc.background || got.LeavesSandbox() != tc.leaves {
			t.Errorf("%s: background %v, leaves the sandbox %v", tc.raw, got.Background(), got.LeavesSandbox())
		}
	}
}

func TestResolveWorkdir(t *testing.T) {
	s := session.New("s", "/home/u")
	defer s.End()
	for _, tc := range []struct {
		workdir string
		sent    bool
		sess    *session.Session
		want    string
	}{
		{"", false, s, "/home/u"},
		{"", true, s, "/home/u"},
		{"sub", true, s, "/home/u/sub"},
		{"/tmp", true, s, "/tmp"},
		{"sub", true, nil, "sub"},
		{"", false, nil, ""},
	} {
		a := bashtool.Args{}
		if tc.sent {
			a.Workdir = &tc.workdir
		}
		if got := a.ResolveWorkdir(tc.sess); got != tc.want {
			t.Errorf("workdir %q (sent %v): %q, want %q", tc.workdir, tc.sent, got, tc.want)
		}
	}
}
