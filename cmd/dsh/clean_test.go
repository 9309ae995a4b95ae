package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/internal/procfs"
)

// TestCleanRemovesRunSpills: dsh clean removes the spill files real dsh
// runs kept, and says how many and how many bytes (docs/spec.md §6.1). It
// keeps what dsh did not make there, a spill directory whose process still
// runs, and what a symlink points to.
func TestCleanRemovesRunSpills(t *testing.T) {
	t.Parallel()
	spill := t.TempDir()
	cfg := writeFile(t, "dsh.yaml", "local: {maxOutputBytes: 10, spillDir: "+spill+", sandbox: {mode: off}}\n")
	base := filepath.Join(spill, fmt.Sprintf("dsh-run-%d", os.Getuid()))
	var files []string
	var bytes int64
	for _, n := range []int{100, 2000} {
		got := dsh(t, nil, "run", "--config", cfg, "--", fmt.Sprint("seq ", n))
		m := regexp.MustCompile(`\[output truncated; full output: (\S+)\]$`).FindStringSubmatch(got.stdout)
		if got.code != 0 || m == nil || !strings.HasPrefix(m[1], base+"/dsh-out-") {
			t.Fatalf("dsh run: %+v, want a full output path under %s", got, base)
		}
		fi, err := os.Stat(m[1])
		if err != nil {
			t.Fatal(err)
		}
		files, bytes = append(files, m[1]), bytes+fi.Size()
	}

	// What dsh clean must leave: files dsh did not make, a directory
	// whose process (this test) still runs, a symlink's target.
	victim := t.TempDir()
	victimFile := filepath.Join(victim, "keep.txt")
	live := filepath.Join(base, "dsh-out-"+procfs.Owner().String()+"-0123456789abcdef")
	keep := []string{filepath.Join(base, "notes.txt"), filepath.Join(base, "other"), live, victimFile, filepath.Join(base, "dsh-out-garbage")}
	for _, err := range []error{
		os.WriteFile(keep[0], []byte("mine"), 0o600),
		os.Mkdir(keep[1], 0o700),
		os.Mkdir(keep[4], 0o700), // the prefix, but no owner stamp: not dsh's
		os.Mkdir(live, 0o700),
		os.WriteFile(filepath.Join(live, "000001-x-stdout.log"), []byte("in use"), 0o600),
		os.WriteFile(victimFile, []byte("not dsh's"), 0o600),
		os.Symlink(victim, filepath.Join(base, "dsh-out-1-2-3-link")),
		os.Symlink(victimFile, filepath.Join(filepath.Dir(files[0]), "link")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	keep = append(keep, filepath.Join(base, "dsh-out-1-2-3-link"))

	got := dsh(t, nil, "clean", "--config", cfg)
	want := fmt.Sprintf("removed 2 spill files (%d bytes) from %s\n", bytes, base)
	if got.code != 0 || got.stdout != want || got.stderr != "" {
		t.Fatalf("dsh clean: %+v, want stdout %q", got, want)
	}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Dir(f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", filepath.Dir(f), err)
		}
	}
	for _, k := range keep {
		if _, err := os.Lstat(k); err != nil {
			t.Errorf("%s was removed: %v", k, err)
		}
	}
	if got := dsh(t, nil, "clean", "--config", cfg); got.code != 0 || got.stdout != "removed 0 spill files (0 bytes) from "+base+"\n" {
		t.Errorf("dsh clean again: %+v", got)
	}
	one := dsh(t, nil, "run", "--config", cfg, "--", "seq 100")
	m := regexp.MustCompile(`full output: (\S+)\]$`).FindStringSubmatch(one.stdout)
	if m == nil {
		t.Fatalf("dsh run: %+v", one)
	}
	fi, err := os.Stat(m[1])
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("removed 1 spill file (%d bytes) from %s\n", fi.Size(), base)
	if got := dsh(t, nil, "clean", "--config", cfg); got.code != 0 || got.stdout != want {
		t.Errorf("dsh clean of one file: %+v, want %q", got, want)
	}
}

// TestCleanRefusesOthersDirectories: a dsh-run-<uid> that is a symlink,
// that others can enter, or that another user owns is refused, one line
// on stderr, and nothing in it or behind it is removed.
func TestCleanRefusesOthersDirectories(t *testing.T) {
	t.Parallel()
	for name, prepare := range map[string]func(base, target string) error{
		"symlink": func(base, target string) error { return os.Symlink(target, base) },
		"group-writable": func(base, _ string) error {
			if err := os.Mkdir(base, 0o700); err != nil {
				return err
			}
			return os.Chmod(base, 0o770)
		},
		"another user's": func(base, _ string) error {
			if os.Getuid() != 0 {
				return errSkip
			}
			if err := os.Mkdir(base, 0o700); err != nil {
				return err
			}
			return os.Chown(base, 65534, 65534)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spill, target := t.TempDir(), t.TempDir()
			cfg := writeFile(t, "dsh.yaml", "local: {spillDir: "+spill+"}\n")
			base := filepath.Join(spill, fmt.Sprintf("dsh-run-%d", os.Getuid()))
			if err := prepare(base, target); errors.Is(err, errSkip) {
				t.Skip("SKIP-REASON: changing a directory's owner needs root")
			} else if err != nil {
				t.Fatal(err)
			}
			dir := base
			if name == "symlink" {
				dir = target
			}
			spilled := filepath.Join(dir, "dsh-out-1-2-3-4")
			if err := os.MkdirAll(spilled, 0o700); err != nil {
				t.Fatal(err)
			}
			got := dsh(t, nil, "clean", "--config", cfg)
			want := "dsh: clean: " + base + ": not a directory of this user's with mode 0700; nothing removed\n"
			if got.code != 1 || got.stderr != want || got.stdout != "" {
				t.Errorf("dsh clean: %+v, want exit 1, stderr %q", got, want)
			}
			if _, err := os.Stat(spilled); err != nil {
				t.Errorf("%s was removed: %v", spilled, err)
			}
		})
	}
}

var errSkip = errors.New("skip")
