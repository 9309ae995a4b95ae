package capture

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The spill base against another user (issue 15, item 11): a base that
// user can write without the sticky bit, or a base that is a symlink to a
// directory of theirs, would let them move or delete the private
// directory; and the private directory is never reached through a
// symlink put in its place.

// otherUser runs argv as nobody; without root or setpriv the test is
// skipped.
func otherUser(t *testing.T) func(argv ...string) error {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: acting as another user needs root")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("SKIP-REASON: no setpriv (util-linux) to act as another user")
	}
	return func(argv ...string) error {
		args := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"}, argv...)
		return exec.Command(setpriv, args...).Run()
	}
}

// sharedDir is a directory under /var/tmp that nobody can reach, removed
// at the end of the test.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "dsh-spill-base-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mkdirMode(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSpillBaseWritableByOthers(t *testing.T) {
	as := otherUser(t)
	shared := sharedDir(t)
	// 0777 without the sticky bit: refused. The control shows why: the
	// other user moves away a private directory made there.
	open := mkdirMode(t, filepath.Join(shared, "open"), 0o777)
	if dir, err := NewSpillDir(open).Ensure(); err == nil || !strings.Contains(err.Error(), "sticky") {
		t.Errorf("a base anyone can write was accepted: %q, %v", dir, err)
	}
	if err := os.WriteFile(filepath.Join(open, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mine := mkdirMode(t, filepath.Join(open, "dsh-out-mine"), 0o700)
	if err := as("mv", mine, filepath.Join(open, "stolen")); err != nil {
		t.Errorf("control: the other user could not move a directory out of a 0777 base, so the test proves nothing: %v", err)
	}
	for _, mode := range []os.FileMode{0o775, 0o757} {
		base := mkdirMode(t, filepath.Join(shared, "mode"+mode.String()), mode)
		if _, err := NewSpillDir(base).Ensure(); err == nil {
			t.Errorf("a base of mode %v was accepted", mode)
		}
	}
	// With the sticky bit (1777, like /tmp): accepted, and the other
	// user can neither move the private directory nor delete its files.
	sticky := mkdirMode(t, filepath.Join(shared, "sticky"), 0o777|os.ModeSticky)
	d := NewSpillDir(sticky)
	f, err := d.Create("stdout")
	if err != nil {
		t.Fatalf("a sticky base was refused: %v", err)
	}
	f.Close()
	if err := as("mv", d.Path(), filepath.Join(sticky, "stolen")); err == nil {
		t.Error("the other user moved the private directory out of a sticky base")
	}
	if err := as("rm", "-f", f.Name()); err == nil {
		t.Error("the other user deleted a spill file")
	}
	if _, err := os.Stat(f.Name()); err != nil {
		t.Errorf("the spill file is gone: %v", err)
	}
	if err := d.Remove(); err != nil {
		t.Error(err)
	}
}

func TestSpillBaseSymlinkedToAnotherUsersDir(t *testing.T) {
	as := otherUser(t)
	shared := mkdirMode(t, filepath.Join(sharedDir(t), "tmp"), 0o777|os.ModeSticky)
	// The other user's directory, and their link to it where dsh looks.
	theirs := filepath.Join(shared, "theirs")
	link := filepath.Join(shared, "spill")
	if err := as("mkdir", "-m", "0755", theirs); err != nil {
		t.Fatal(err)
	}
	if err := as("ln", "-s", theirs, link); err != nil {
		t.Fatal(err)
	}
	if dir, err := NewSpillDir(link).Ensure(); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("a base linked to another user's directory was accepted: %q, %v", dir, err)
	}
	// The control: in their directory they move ours away.
	mine := mkdirMode(t, filepath.Join(theirs, "dsh-out-mine"), 0o700)
	if err := as("mv", mine, filepath.Join(theirs, "stolen")); err != nil {
		t.Errorf("control: the other user could not move a directory out of theirs, so the test proves nothing: %v", err)
	}
	// A link to a safe directory is followed once: the private directory
	// is named by the real path, never through the link.
	safe := t.TempDir()
	own := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(safe, own); err != nil {
		t.Fatal(err)
	}
	dir, err := NewSpillDir(own).Ensure()
	if err != nil || filepath.Dir(dir) != safe {
		t.Errorf("a link to a safe directory: %q, %v; want a directory in %s", dir, err, safe)
	}
}

func TestSpillBaseOwnedByAnotherUser(t *testing.T) {
	otherUser(t) // chown needs root
	shared := sharedDir(t)
	theirs := filepath.Join(shared, "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	// Its owner could move anything out of it, whatever its mode.
	if _, err := NewSpillDir(filepath.Join(theirs, "sub")).Ensure(); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("a base under another user's directory was accepted: %v", err)
	}
}

// TestSpillDirReplacedBySymlink: once made, the private directory is
// reached through the descriptor opened when it was made, and a symlink
// put in its place is never followed: the spill file is refused rather
// than made where the link points.
func TestSpillDirReplacedBySymlink(t *testing.T) {
	d := NewSpillDir(t.TempDir())
	priv, err := d.Ensure()
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Rename(priv, priv+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, priv); err != nil {
		t.Fatal(err)
	}
	if f, err := d.Create("stdout"); err == nil {
		f.Close()
		t.Errorf("a spill file was made through a symlink: %s", f.Name())
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("files appeared where the link points: %v", entries)
	}
	_ = d.Remove()
	_ = os.RemoveAll(priv + ".moved")
}

func TestSpillBaseMissingIsMadePrivate(t *testing.T) {
	base := filepath.Join(t.TempDir(), "a", "b")
	dir, err := NewSpillDir(base).Ensure()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{base, dir} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want mode 0700", p, fi.Mode(), err)
		}
	}
}
