//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestStarterCodeIsItsListing assembles testdata/starter_amd64.s and
// compares the machine code with starterCode, byte for byte.
func TestStarterCodeIsItsListing(t *testing.T) {
	as, err1 := exec.LookPath("as")
	objcopy, err2 := exec.LookPath("objcopy")
	if runtime.GOARCH != "amd64" || err1 != nil || err2 != nil {
		t.Skip("SKIP-REASON: needs amd64 and GNU as and objcopy (binutils) to assemble the listing")
	}
	dir := t.TempDir()
	obj, bin := filepath.Join(dir, "s.o"), filepath.Join(dir, "s.bin")
	if out, err := exec.Command(as, "-o", obj, "testdata/starter_amd64.s").CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	if out, err := exec.Command(objcopy, "-O", "binary", "-j", ".text", obj, bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(starterCode, want) {
		t.Errorf("starterCode differs from its listing:\n got %x\nwant %x", starterCode, want)
	}
}

// TestStarterReportsTheWaitStatus runs the starter as bwrap would, without
// bwrap: the status it writes on fd 5 is the shell's own.
func TestStarterReportsTheWaitStatus(t *testing.T) {
	f, err := memfdStarter()
	if err != nil {
		t.Skipf("SKIP-REASON: %v", err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("the sealed starter could be written")
	}
	for _, tc := range []struct {
		command string
		check   func(syscall.WaitStatus) bool
	}{
		{"exit 7", func(ws syscall.WaitStatus) bool { return ws.Exited() && ws.ExitStatus() == 7 }},
		{"exit 143", func(ws syscall.WaitStatus) bool { return ws.Exited() && ws.ExitStatus() == 143 }},
		{"kill -TERM $$", func(ws syscall.WaitStatus) bool { return ws.Signaled() && ws.Signal() == syscall.SIGTERM }},
		{"(sleep 0.05 &); exit 3", func(ws syscall.WaitStatus) bool { return ws.Exited() && ws.ExitStatus() == 3 }},
		{"ls /proc/self/fd/ | tr '\\n' ' '; test ! -e /proc/self/fd/4 && test ! -e /proc/self/fd/5", func(ws syscall.WaitStatus) bool { return ws.Exited() && ws.ExitStatus() == 0 }},
	} {
		statusR, statusW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		bash, _ := exec.LookPath("bash")
		cmd := exec.Command("/proc/self/fd/4", bash, "-c", tc.command)
		cmd.ExtraFiles = extraFiles(nil, f, statusW, nil)
		err = cmd.Run()
		statusW.Close()
		ws, ok := readStatus(statusR)
		statusR.Close()
		if err != nil || !ok || !tc.check(ws) {
			t.Errorf("%q: run %v, status %#x (reported: %v)", tc.command, err, uint32(ws), ok)
		}
	}
}

func TestCover(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/x", "a/y", "b", "c/d/e"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "a/x"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	got := cover(root, []string{filepath.Join(root, "a/x"), filepath.Join(root, "c/d")})
	want := []string{filepath.Join(root, "a/y"), filepath.Join(root, "b")}
	if !slicesEqual(got, want) {
		t.Errorf("cover = %v, want %v", got, want)
	}
	if got := cover(root, nil); !slicesEqual(got, []string{root}) {
		t.Errorf("cover with nothing excluded = %v", got)
	}
	if got := cover(filepath.Join(root, "a/x"), []string{filepath.Join(root, "a")}); got != nil {
		t.Errorf("cover of an excluded tree = %v", got)
	}
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
