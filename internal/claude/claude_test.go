package claude

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A repository's settings file may be anything a checkout can hold. Each
// of these made dsh read without end (a symlink to /dev/zero) or block
// forever in open (a FIFO) before Read refused what is not a regular file
// of at most MaxSize bytes.
func TestReadRefusesWhatNeverEnds(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"x":"`+strings.Repeat("a", MaxSize)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "not a regular file (p"},
		{zero, "not a regular file (D"},
		{dir, "not a regular file (d"},
		{big, "larger than 1048576 bytes"},
	} {
		done := make(chan error, 1)
		go func() {
			var v map[string]any
			found, err := Read(tc.path, &v)
			if !found {
				err = nil
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read(%s) = %v, want an error with %q", filepath.Base(tc.path), err, tc.want)
			}
		case <-time.After(time.Minute): // a hang, not a timing: the fixed Read returns at once
			t.Fatalf("Read(%s) did not return", filepath.Base(tc.path))
		}
	}
}

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(path, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		var v struct{ A int }
		if found, err := Read(p, &v); !found || err != nil || v.A != 1 {
			t.Errorf("Read(%s) = %v, %v, %+v", filepath.Base(p), found, err, v)
		}
	}
	if found, err := Read(filepath.Join(dir, "missing.json"), new(any)); found || err != nil {
		t.Errorf("a missing file: found %v, err %v", found, err)
	}
}
