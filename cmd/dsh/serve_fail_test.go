package main

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestServeMetricsListenerFails: when --metrics-addr cannot be listened on
// (its port is taken), dsh serve fails with the listener's error and
// leaves nothing behind: the MCP socket it had opened is gone, nothing
// answers there, and no goroutine of its servers or its stack is left.
// In-process, so that goleak sees the servers' goroutines; not parallel,
// so that it sees no other test's.
func TestServeMetricsListenerFails(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	sock := filepath.Join(t.TempDir(), "dsh.sock")
	var out, errOut bytes.Buffer
	code := execute([]string{"serve", "--addr", "unix:" + sock, "--metrics-addr", taken.Addr().String(), "--workdir", t.TempDir()},
		streams{out: &out, err: &errOut})
	want := "dsh: serve: --metrics-addr: listen tcp " + taken.Addr().String() + ": bind: address already in use\n"
	if code != exitFailure || !strings.HasSuffix(errOut.String(), want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and stderr ending in %q", code, errOut.String(), exitFailure, want)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the MCP socket is still there: %v", err)
	}
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		t.Error("the MCP socket still answers")
	}
}
