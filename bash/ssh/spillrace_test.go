package ssh

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runScript runs one of the remote scripts here, as the remote shell
// would.
func runScript(t *testing.T, script string, args ...string) string {
	t.Helper()
	out, err := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestMissingBaseMadeByAnotherMeanwhile: the base is missing when it is
// checked; between that round trip and the next, another user makes its
// first missing part, mode 0777. The private directory made in it is
// refused with the local message, as the base would have been.
func TestMissingBaseMadeByAnotherMeanwhile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: making a directory of another user needs root")
	}
	shared := t.TempDir()
	if err := os.Chmod(shared, os.ModeSticky|0o777); err != nil { // as /tmp
		t.Fatal(err)
	}
	r, err := parseBase(runScript(t, baseScript, filepath.Join(shared, "other", "spill")))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkChain(r.given, r.chain, r.uid); err != nil {
		t.Fatalf("the missing base was refused: %v", err)
	}
	other := filepath.Join(shared, "other")
	if err := os.Mkdir(other, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(other, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	out := runScript(t, mkdirScript, r.real, spillPrefix+"race")
	dir, err := judgePrivate(out, checkedBase{real: r.real, uid: r.uid}, spillPrefix+"race")
	if err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("the private directory %q under another user's directory: %v", dir, err)
	}
}
